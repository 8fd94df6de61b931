package agent

import (
	"strings"
	"testing"

	"github.com/parley/parley/agent/outbound/llm"
)

// localResult is everything a stream yielded.
type localResult struct {
	texts []string
	calls []llm.ToolCall
	done  *llm.Event
	err   error
}

func (r localResult) text() string { return strings.Join(r.texts, "") }

func collectLocal(s llm.Stream) localResult {
	var r localResult
	for ev, err := range s {
		if err != nil {
			r.err = err
			break
		}
		switch ev.Kind {
		case llm.EventText:
			r.texts = append(r.texts, ev.Text)
		case llm.EventToolCall:
			r.calls = append(r.calls, ev.ToolCall)
		case llm.EventDone:
			r.done = &ev
		}
	}
	return r
}

func TestLocalProvider(t *testing.T) {
	t.Parallel()

	passages := []llm.Passage{
		{Title: "Opening hours", Content: "We are open Monday to Friday, 9am to 6pm."},
		{Title: "Delivery", Content: "We deliver in Paris within two days. Delivery prices start at 5 euros."},
		{Title: "Prices", Content: "Our prices are listed per item; delivery is extra."},
		{Title: "Returns", Content: "Returns are accepted within 30 days."},
	}

	t.Run("Rank", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			name, question string
			want           []string
		}{
			{"TitleWeighsMore", "How long does delivery take?", []string{"Delivery", "Prices"}},
			{"Typo", "when are you openning", []string{"Opening hours"}},
			{"PluralMatchesSingular", "how much does a return cost", []string{"Returns"}},
			{"NoMatch", "Do you sell bicycles?", nil},
			{"OnlyStopWords", "what is the", nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				var got []string
				for _, p := range LocalRank(tc.question, passages) {
					got = append(got, p.Title)
				}
				if strings.Join(got, ",") != strings.Join(tc.want, ",") {
					t.Errorf("LocalRank(%q) = %q, want %q", tc.question, got, tc.want)
				}
			})
		}
	})

	t.Run("AnswersWithNotice", func(t *testing.T) {
		t.Parallel()
		req := llm.Request{
			Messages: []llm.Message{
				{Role: llm.RoleUser, Content: "When are you open?"},
				{Role: llm.RoleAssistant, Content: "..."},
				{Role: llm.RoleUser, Content: "Do you deliver in Paris?"},
			},
			Tools:    []llm.ToolSpec{{Name: "escalate"}},
			Passages: passages,
		}
		s, err := NewLocal().Stream(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		r := collectLocal(s)
		if r.err != nil {
			t.Fatal(r.err)
		}
		if len(r.texts) < 2 {
			t.Fatalf("chunks = %q, want the notice then passages", r.texts)
		}
		if r.texts[0] != LocalNotice || !strings.Contains(LocalNotice, "No language model is configured") {
			t.Errorf("first chunk = %q", r.texts[0])
		}
		if !strings.HasPrefix(r.texts[1], "\n\nDelivery\nWe deliver in Paris") {
			t.Errorf("second chunk = %q, want the delivery passage (the last question's)", r.texts[1])
		}
		if strings.Contains(r.text(), "Opening hours") {
			t.Errorf("answer %q quotes a passage matching only an earlier question", r.text())
		}
		if len(r.calls) != 0 || r.done == nil || r.done.StopReason != llm.StopEnd {
			t.Errorf("calls %v done %+v, want no calls and a plain stop", r.calls, r.done)
		}
	})

	t.Run("NothingMatches", func(t *testing.T) {
		t.Parallel()
		s, err := NewLocal().Stream(t.Context(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "bicycles?"}}, Passages: passages})
		if err != nil {
			t.Fatal(err)
		}
		r := collectLocal(s)
		if want := LocalNotice + "\n\n" + LocalNoMatch; r.text() != want {
			t.Errorf("answer = %q, want %q", r.text(), want)
		}
	})

	t.Run("LongPassageClipped", func(t *testing.T) {
		t.Parallel()
		long := strings.Repeat("delivery options explained ", 100)
		s, err := NewLocal().Stream(t.Context(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "delivery"}}, Passages: []llm.Passage{{Title: "Long", Content: long}}})
		if err != nil {
			t.Fatal(err)
		}
		r := collectLocal(s)
		if len(r.texts) != 2 {
			t.Fatalf("chunks = %q, want the notice and one passage", r.texts)
		}
		clipped, ok := strings.CutSuffix(strings.TrimPrefix(r.texts[1], "\n\nLong\n"), " …")
		if !ok || len(clipped) > localMaxChars || !strings.HasPrefix(long, clipped+" ") {
			t.Errorf("chunks = %q, want the passage clipped at a word", r.texts)
		}
	})
}
