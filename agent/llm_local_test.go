package agent

import (
	"slices"
	"strings"
	"testing"

	"github.com/parley/parley"
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
			{"TitleWeighsMore", "How long does delivery take?", []string{"Delivery"}}, // Prices, far behind, is not quoted
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

	t.Run("AnswersInPlainWords", func(t *testing.T) {
		t.Parallel()
		cited := slices.Clone(passages)
		for i := range cited {
			cited[i].Ref = i + 1
		}
		req := llm.Request{
			Messages: []llm.Message{
				{Role: llm.RoleUser, Content: "When are you open?"},
				{Role: llm.RoleAssistant, Content: "..."},
				{Role: llm.RoleUser, Content: "Do you deliver in Paris?"},
			},
			Tools:    []llm.ToolSpec{{Name: "escalate", Type: parley.ToolEscalateToHuman}},
			Passages: cited,
		}
		s, err := NewLocal().Stream(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		r := collectLocal(s)
		if r.err != nil {
			t.Fatal(r.err)
		}
		if len(r.texts) < 1 || !strings.HasPrefix(r.texts[0], "**Delivery**\nWe deliver in Paris") || !strings.HasSuffix(r.texts[0], " [2]") {
			t.Errorf("first chunk = %q, want the delivery passage (the last question's) with its marker", r.texts)
		}
		if strings.Contains(r.text(), "language model") || strings.Contains(r.text(), "Opening hours") {
			t.Errorf("answer %q speaks of the configuration, or quotes a passage matching only an earlier question", r.text())
		}
		if len(r.calls) != 0 || r.done == nil || r.done.StopReason != llm.StopEnd {
			t.Errorf("calls %v done %+v, want no calls and a plain stop", r.calls, r.done)
		}
	})

	t.Run("NothingMatches", func(t *testing.T) {
		t.Parallel()
		for lang, want := range map[string]string{"": LocalNoMatch("en"), "fr": LocalNoMatch("fr"), "xx": LocalNoMatch("en")} {
			s, err := NewLocal().Stream(t.Context(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "bicycles?"}}, Passages: passages, Language: lang})
			if err != nil {
				t.Fatal(err)
			}
			if r := collectLocal(s); r.text() != want {
				t.Errorf("answer in %q = %q, want %q", lang, r.text(), want)
			}
		}
		if LocalNoMatch("fr") == LocalNoMatch("en") || strings.Contains(LocalNoMatch("en"), "knowledge base") {
			t.Errorf("the words of no match = %q, %q: want them in the language, in the visitor's words", LocalNoMatch("en"), LocalNoMatch("fr"))
		}
	})

	t.Run("HandsOverWhenAsked", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			message string
			tools   []llm.ToolSpec
			want    bool
		}{
			{"I'd like to talk to a person", []llm.ToolSpec{{Name: "get_help", Type: parley.ToolEscalateToHuman}}, true},
			{"Je voudrais parler à une personne", []llm.ToolSpec{{Name: "get_help", Type: parley.ToolEscalateToHuman}}, true},
			{"Kann ich mit einem Mitarbeiter sprechen?", []llm.ToolSpec{{Name: "get_help", Type: parley.ToolEscalateToHuman}}, true},
			{"¿Puedo hablar con alguien del equipo?", []llm.ToolSpec{{Name: "get_help", Type: parley.ToolEscalateToHuman}}, true},
			{"Talk to a person", []llm.ToolSpec{{Name: "get_help", Type: parley.ToolEscalateToHuman}}, true},
			{"Parler à un conseiller", []llm.ToolSpec{{Name: "get_help", Type: parley.ToolEscalateToHuman}}, true},
			{"Mit einem Mitarbeiter sprechen", []llm.ToolSpec{{Name: "get_help", Type: parley.ToolEscalateToHuman}}, true},
			{"Hablar con un agente", []llm.ToolSpec{{Name: "get_help", Type: parley.ToolEscalateToHuman}}, true},
			{"التحدث إلى موظف", []llm.ToolSpec{{Name: "get_help", Type: parley.ToolEscalateToHuman}}, true},
			{"שיחה עם נציג", []llm.ToolSpec{{Name: "get_help", Type: parley.ToolEscalateToHuman}}, true},
			{"How much is the tour per person?", []llm.ToolSpec{{Name: "get_help", Type: parley.ToolEscalateToHuman}}, false},
			{"Can I speak to someone?", []llm.ToolSpec{{Name: "contact", Type: parley.ToolSubmitForm}}, false},
		} {
			s, err := NewLocal().Stream(t.Context(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: tc.message}}, Tools: tc.tools, Passages: passages})
			if err != nil {
				t.Fatal(err)
			}
			r := collectLocal(s)
			got := len(r.calls) == 1 && r.calls[0].Name == "get_help" && r.done != nil && r.done.StopReason == llm.StopToolCalls
			if got != tc.want {
				t.Errorf("%q with tools %v: calls %v, done %+v; want a hand-over: %v", tc.message, tc.tools, r.calls, r.done, tc.want)
			}
			if got && !strings.Contains(string(r.calls[0].Arguments), `"reason":"The visitor asked to talk to a person`) {
				t.Errorf("hand-over arguments = %s", r.calls[0].Arguments)
			}
		}
		// Then it says the tool's hand-over message, or the team's words.
		for content, want := range map[string]string{
			`{"success":true,"result":{"escalated":true,"handoffMessage":"Sam will write back."}}`: "Sam will write back.",
			`{"success":false,"summary":"The team could not be reached"}`:                          localWord("en", 1),
		} {
			s, err := NewLocal().Stream(t.Context(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "talk to a person"},
				{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "local_handover", Name: "get_help"}}},
				{Role: llm.RoleTool, Content: content, ToolCallID: "local_handover"}}})
			if err != nil {
				t.Fatal(err)
			}
			if r := collectLocal(s); r.text() != want || len(r.calls) != 0 {
				t.Errorf("after the tool answered %s: %q, calls %v; want %q", content, r.text(), r.calls, want)
			}
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
		if len(r.texts) != 1 {
			t.Fatalf("chunks = %q, want one passage", r.texts)
		}
		clipped, ok := strings.CutSuffix(strings.TrimPrefix(r.texts[0], "**Long**\n"), " …")
		if !ok || len(clipped) > localMaxChars || !strings.HasPrefix(long, clipped+" ") {
			t.Errorf("chunks = %q, want the passage clipped at a word", r.texts)
		}
	})
}
