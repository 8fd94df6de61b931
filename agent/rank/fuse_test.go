package rank

import (
	"fmt"
	"strings"
	"testing"

	"github.com/parley/parley"
)

// Reciprocal rank fusion of the lexical order with the order by meaning,
// and the rerank variant.
func TestFuseRanking(t *testing.T) {
	t.Parallel()
	var ranked []parley.CorpusEntry // every entry a lexical hit unless said
	for i := range 10 {
		ranked = append(ranked, parley.CorpusEntry{ID: fmt.Sprintf("e%d", i)})
	}
	ids := func(es []parley.CorpusEntry) string {
		var s []string
		for _, e := range es {
			s = append(s, e.ID)
		}
		return strings.Join(s, " ")
	}
	t.Run("NoVectors", func(t *testing.T) {
		t.Parallel()
		if got := ids(Fuse(ranked, len(ranked), nil, 0)); got != ids(ranked) {
			t.Errorf("%s", got)
		}
	})
	t.Run("MeaningLiftsAnEntry", func(t *testing.T) {
		t.Parallel()
		// e9 is last by words, first by meaning; the others alike by
		// meaning (their rank by meaning is then their lexical order). e5
		// has no vector: its lexical share only.
		sim := map[string]float64{"e9": 0.9}
		for i := range 9 {
			if i != 5 {
				sim[fmt.Sprintf("e%d", i)] = 0.1
			}
		}
		got := Fuse(ranked, len(ranked), sim, 0)
		// e9: 1/70 + 1/61 = 0.0307, after e3 (1/64 + 1/65 = 0.0310),
		// before e4 (1/65 + 1/66 = 0.0305); e5: 1/66 alone.
		if want := "e0 e1 e2 e3 e9 e4 e6 e7 e8 e5"; ids(got) != want {
			t.Errorf("order %s, want %s", ids(got), want)
		}
		if again := Fuse(ranked, len(ranked), sim, 0); ids(again) != ids(got) {
			t.Errorf("two orders: %s, %s", ids(got), ids(again))
		}
	})
	t.Run("MeaningAloneAfterBoth", func(t *testing.T) {
		t.Parallel()
		// Only e0 and e1 matched a word; e9 is first by meaning, the others
		// alike; e5 has no vector and matched nothing.
		sim := map[string]float64{"e9": 0.9}
		for i := range 9 {
			if i != 5 {
				sim[fmt.Sprintf("e%d", i)] = 0.1
			}
		}
		got := Fuse(ranked, 2, sim, 0)
		// e0 1/61 + 1/62, e1 1/62 + 1/63, e9 1/61, e2 1/64 ..., e5 nothing
		if want := "e0 e1 e9 e2 e3 e4 e6 e7 e8 e5"; ids(got) != want {
			t.Errorf("order %s, want %s", ids(got), want)
		}
	})
	t.Run("TiesKeepTheLexicalOrder", func(t *testing.T) {
		t.Parallel()
		sim := map[string]float64{}
		for _, e := range ranked {
			sim[e.ID] = 0.5
		}
		if got := ids(Fuse(ranked, len(ranked), sim, 0)); got != ids(ranked) {
			t.Errorf("%s", got)
		}
	})
	t.Run("Rerank", func(t *testing.T) {
		t.Parallel()
		sim := map[string]float64{"e0": 0.1, "e1": 0.9, "e2": 0.5, "e8": 1}
		got := ids(Fuse(ranked, len(ranked), sim, 4))
		// the first four by meaning (e3 has no vector: after them), the rest as they were
		if got != "e1 e2 e0 e3 e4 e5 e6 e7 e8 e9" {
			t.Errorf("%s", got)
		}
	})
}
