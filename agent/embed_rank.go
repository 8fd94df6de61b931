package agent

import (
	"bytes"
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/llm"
)

// Meaning in the turn's ranking, when an embedding endpoint is configured
// (Engine.Embeddings, issue 34).
const (
	// questionEmbedTimeout bounds the turn's wait for the question's vector
	// (and the candidates' stored ones, read meanwhile): past it the turn
	// keeps the lexical order, as on any failure of the endpoint.
	questionEmbedTimeout = 2 * time.Second
	// rrfK is reciprocal rank fusion's constant (Cormack, Clarke and
	// Büttcher, 2009): an entry's share from a ranking is 1/(rrfK + its
	// rank), so that the first few ranks of either ranking weigh about
	// alike and neither ranking's scores need to be comparable.
	rrfK = 60
)

// rankByMeaning is ranked, the candidates in their lexical order
// (turnCorpus), fused with their order by meaning: the cosine of the
// visitor's current message and each candidate's stored vector. One call to
// the endpoint and one read of the candidates' vectors, at once; on any
// failure or past questionEmbedTimeout the lexical order is kept and the
// failure logged: the endpoint never fails a turn. The endpoint is the
// tenant's own when it set one, else the operator's (llm.EmbedderFor); without
// either, or a question, ranked as it is, with no call and no read.
//
// question is the visitor's current message; the first matched entries of
// ranked are the lexical ranking's hits (rankCorpus), which match a word
// of the visitor's messages.
func (e *Engine) rankByMeaning(ctx context.Context, in *TurnInput, question string, ranked []parley.CorpusEntry, matched int) []parley.CorpusEntry {
	if question == "" || len(ranked) < 2 {
		return ranked
	}
	emb, err := llm.EmbedderFor(in.Tenant, e.Embeddings, e.Secrets, e.Outbound)
	if err != nil {
		in.logger(e).Warn("the tenant's embedding endpoint: lexical ranking only", "err", err)
		return ranked
	}
	if emb == nil {
		return ranked
	}
	ctx, cancel := context.WithTimeout(ctx, questionEmbedTimeout)
	defer cancel()
	ids := make([]string, len(ranked))
	for i, c := range ranked {
		ids[i] = c.ID
	}
	type read struct {
		vectors []parley.CorpusVector
		err     error
	}
	stored := make(chan read, 1)
	go func() {
		vs, err := e.Store.CorpusVectors(ctx, in.Tenant.ID, emb.Model(), ids)
		stored <- read{vs, err}
	}()
	q, err := emb.EmbedOne(ctx, question)
	r := <-stored
	if err != nil {
		in.logger(e).Warn("embedding the question failed: lexical ranking only", "err", err)
		return ranked
	}
	if r.err != nil {
		in.logger(e).Warn("reading the knowledge's vectors failed: lexical ranking only", "err", r.err)
		return ranked
	}
	byID := make(map[string]parley.CorpusVector, len(r.vectors))
	for _, v := range r.vectors {
		byID[v.EntryID] = v
	}
	sim := make(map[string]float64, len(r.vectors))
	for _, c := range ranked {
		v, ok := byID[c.ID]
		// A vector of an older text of the entry (the job has not caught up
		// with an edit yet) or of another length is no vector.
		if !ok || len(v.Vector) != len(q) || !bytes.Equal(v.TextHash, parley.EmbeddingHash(c)) {
			continue
		}
		sim[c.ID] = dot(q, v.Vector)
	}
	return fuseRanking(ranked, matched, sim, emb.Rerank)
}

// dot is the dot product of two vectors of one length: their cosine, for
// unit vectors.
func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// fuseRanking orders ranked (the lexical order) with the candidates'
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
func fuseRanking(ranked []parley.CorpusEntry, hits int, sim map[string]float64, rerank int) []parley.CorpusEntry {
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
