package agent

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/llm"
)

// TestCorrectedQuestions measures what "Improve this answer" (issue 40)
// does to the citation measure (cite_eval_test.go), its entries at the
// default priority (5): each question no cited entry answered gets the
// entry a correction makes of it (titled with the question, the right
// answer as content, the default priority, as knowledge.CorrectAnswer
// makes it), and every question is asked again through the ranking, the
// prompt and the tool loop. Every corrected question must then be answered
// by a cited entry, and no other question lose its answer. BENCHMARKS.md
// has the figures, and why a correction's priority is not raised.
func TestCorrectedQuestions(t *testing.T) {
	t.Parallel()
	const priority = 5 // knowledge.DefaultCorpusPriority, which corrections keep
	facts := map[string]string{}
	for _, q := range citeQuestions {
		facts[q.question] = q.fact
	}
	for _, provider := range []llm.Provider{NewLocal(), promptReader{}} {
		before := measureCitationsWith(t.Context(), t, provider, priority, nil)
		var fixes []parley.CorpusEntry
		for i, q := range before.missed {
			fixes = append(fixes, parley.CorpusEntry{ID: fmt.Sprintf("fix%02d", i), Title: q, Content: "Yes: " + facts[q] + ".",
				Priority: priority, UpdatedAt: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)})
		}
		after := measureCitationsWith(t.Context(), t, provider, priority, fixes)
		t.Logf("%s before: %s; missed %q", provider.Name(), before, before.missed)
		t.Logf("%s with %d corrections: %s; missed %q", provider.Name(), len(fixes), after, after.missed)
		for _, q := range before.missed {
			if slices.Contains(after.missed, q) {
				t.Errorf("%s: %q, corrected, is still not answered by a cited entry", provider.Name(), q)
			}
		}
		if len(after.missed) > 0 {
			t.Errorf("%s: %q lost their answer to the corrections of other questions", provider.Name(), after.missed)
		}
	}
}
