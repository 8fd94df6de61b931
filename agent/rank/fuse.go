package rank

import (
	"cmp"
	"slices"

	"github.com/parley/parley"
)

// rrfK is reciprocal rank fusion's constant (Cormack, Clarke and
// Büttcher, 2009): an entry's share from a ranking is 1/(rrfK + its
// rank), so that the first few ranks of either ranking weigh about
// alike and neither ranking's scores need to be comparable.
const rrfK = 60

// Dot is the dot product of two vectors of one length: their cosine, for
// unit vectors.
func Dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// Fuse orders ranked (the lexical order) with the candidates'
// similarity to the question (sim, by entry id; an entry without a vector
// is absent) by reciprocal rank fusion of two result lists: the lexical
// hits (the first hits entries of ranked, those matching a word) in their
// lexical order, and the entries with a vector by similarity. The lexical
// list stops at the hits: ranked orders the others too, by priority and
// title, but that order says nothing of the question, and fused as ranks
// it would hold an entry that only its meaning finds behind dozens that
// match neither way. Each entry scores 1/(rrfK + its rank) in each list it is
// in: an entry without a vector keeps its lexical share only, one that
// matched no word its share by meaning only, and one in neither list comes
// last. Equal scores keep the lexical order, so the result is as
// deterministic as the lexical ranking is.
//
// rerank above 0 is the variant measured against it: the lexical ranking's
// first rerank entries reordered by similarity (those without a vector
// after them, in lexical order), the rest left as they are.
func Fuse(ranked []parley.CorpusEntry, hits int, sim map[string]float64, rerank int) []parley.CorpusEntry {
	if len(sim) == 0 {
		return ranked
	}
	n := len(ranked)
	bySim := func(i, j int) int {
		if c := cmp.Compare(sim[ranked[j].ID], sim[ranked[i].ID]); c != 0 {
			return c
		}
		return cmp.Compare(i, j)
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	if rerank > 0 {
		top := order[:min(rerank, n)]
		slices.SortStableFunc(top, func(i, j int) int {
			_, vi := sim[ranked[i].ID]
			_, vj := sim[ranked[j].ID]
			switch {
			case vi && vj:
				return bySim(i, j)
			case vi != vj:
				if vi {
					return -1
				}
				return 1
			}
			return cmp.Compare(i, j)
		})
	} else {
		// byMeaning is the lexical positions of the entries with a vector,
		// by similarity (ties by lexical position).
		var byMeaning []int
		for i, c := range ranked {
			if _, ok := sim[c.ID]; ok {
				byMeaning = append(byMeaning, i)
			}
		}
		slices.SortFunc(byMeaning, bySim)
		score := make([]float64, n)
		for i := range min(hits, n) {
			score[i] = 1 / float64(rrfK+i+1)
		}
		for r, i := range byMeaning {
			score[i] += 1 / float64(rrfK+r+1)
		}
		slices.SortFunc(order, func(i, j int) int {
			if c := cmp.Compare(score[j], score[i]); c != 0 {
				return c
			}
			return cmp.Compare(i, j)
		})
	}
	out := make([]parley.CorpusEntry, n)
	for k, i := range order {
		out[k] = ranked[i]
	}
	return out
}
