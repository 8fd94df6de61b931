package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/llm"
	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/agent/tools"
	"github.com/parley/parley/agent/tools/toolstest"
)

// engineFixture is a scripted model and a provider talking to it.
func engineFixture(t *testing.T, turns ...llmtest.Turn) (*llmtest.OpenAI, llm.Provider) {
	t.Helper()
	srv := llmtest.NewOpenAI(t, turns...)
	return srv, llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.URL, APIKey: "sk-test", Model: "test-model"})
}

func userAsks(s string) llm.Request {
	return llm.Request{System: "You are helpful.", Messages: []llm.Message{{Role: llm.RoleUser, Content: s}}}
}

// collect records the emitted text events.
func collect(texts *[]string) func(llm.Event) {
	return func(ev llm.Event) {
		if ev.Kind == llm.EventText {
			*texts = append(*texts, ev.Text)
		}
	}
}

func TestRunTurn(t *testing.T) {
	t.Parallel()

	t.Run("no tools streams text in order", func(t *testing.T) {
		t.Parallel()
		srv, p := engineFixture(t, llmtest.Turn{Text: []string{"Hel", "lo ", "there"}})
		var texts []string
		res, err := RunTurn(context.Background(), p, userAsks("hi"), nil, 0, collect(&texts))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(texts, "|") != "Hel|lo |there" || res.Text != "Hello there" {
			t.Fatalf("texts %q, result %q", texts, res.Text)
		}
		if res.StopReason != llm.StopEnd || res.Calls != 1 || len(res.Executions) != 0 {
			t.Fatalf("result %+v", res)
		}
		if n := len(srv.Requests()[0].Chat.Tools); n != 0 {
			t.Fatalf("%d tools offered with no registry", n)
		}
	})

	t.Run("submit form with valid arguments", func(t *testing.T) {
		t.Parallel()
		srv, p := engineFixture(t,
			llmtest.Turn{Text: []string{"One moment."}, ToolCalls: []llmtest.ToolCall{{ID: "call_form", Name: "contact_form",
				Arguments: []string{`{"fullName":"Ada Lovelace",`, `"workEmail":"ada@example.com","phone":"+44 (20) 7946-0958","extra":"dropped"}`}}}},
			llmtest.Turn{Text: []string{"Done, ", "we will call you."}},
		)
		reg := tools.NewRegistry([]parley.Tool{toolstest.ContactForm(t)}, tools.Deps{})
		var texts []string
		res, err := RunTurn(context.Background(), p, userAsks("call me"), reg, 0, collect(&texts))
		if err != nil {
			t.Fatal(err)
		}
		if res.Text != "One moment.\n\nDone, we will call you." || strings.Join(texts, "") != res.Text {
			t.Fatalf("text %q, emitted %q", res.Text, texts)
		}
		if len(res.Executions) != 1 {
			t.Fatalf("executions %+v", res.Executions)
		}
		ex := res.Executions[0]
		if !ex.Success || ex.ToolType != parley.ToolSubmitForm || ex.ToolName != "Contact form" || ex.Submission == nil {
			t.Fatalf("execution %+v", ex)
		}
		want := map[string]any{"fullName": "Ada Lovelace", "workEmail": "ada@example.com", "phone": "+44 (20) 7946-0958"}
		if len(ex.Submission.Input) != len(want) {
			t.Fatalf("submission input %v", ex.Submission.Input)
		}
		for k, v := range want {
			if ex.Submission.Input[k] != v {
				t.Fatalf("submission input %v, want %v", ex.Submission.Input, want)
			}
		}
		env := ex.Envelope()
		if env.Name != "Contact form" || !env.Success || env.Type != parley.ToolSubmitForm {
			t.Fatalf("envelope %v", env)
		}
		reqs := srv.Requests()
		if len(reqs) != 2 {
			t.Fatalf("%d requests", len(reqs))
		}
		msgs := reqs[1].Chat.Messages
		last, prev := msgs[len(msgs)-1], msgs[len(msgs)-2]
		if prev.Role != "assistant" || len(prev.ToolCalls) != 1 || prev.ToolCalls[0].ID != "call_form" || prev.ToolCalls[0].Function.Name != "contact_form" {
			t.Fatalf("assistant message %+v", prev)
		}
		if last.Role != "tool" || last.ToolCallID != "call_form" || !strings.Contains(string(last.Content), `"success":true`) ||
			!strings.Contains(string(last.Content), "we will call you back") {
			t.Fatalf("tool message %+v", last)
		}
		if !res.ContactSubmitted() || res.Escalated() || !res.ToolResults()["Contact form"] || len(res.ToolExecutions()) != 1 {
			t.Fatalf("envelope helpers: %v %v %v", res.ContactSubmitted(), res.Escalated(), res.ToolResults())
		}
		if len(res.Messages) != 2 || res.Messages[1].ToolCallID != "call_form" {
			t.Fatalf("messages %+v", res.Messages)
		}
	})

	t.Run("submit form with an invalid email", func(t *testing.T) {
		t.Parallel()
		srv, p := engineFixture(t,
			llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "contact_form", Arguments: []string{`{"fullName":"Ada","workEmail":"ada-at-example"}`}}}},
			llmtest.Turn{Text: []string{"Could you check your email address?"}},
		)
		reg := tools.NewRegistry([]parley.Tool{toolstest.ContactForm(t)}, tools.Deps{})
		res, err := RunTurn(context.Background(), p, userAsks("call me"), reg, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		ex := res.Executions[0]
		if res.ContactSubmitted() || res.ToolResults()["Contact form"] {
			t.Fatal("a failed form counts as submitted")
		}
		if ex.Success || ex.Submission != nil || !strings.Contains(ex.Summary, "not a valid email address") {
			t.Fatalf("execution %+v", ex)
		}
		msgs := srv.Requests()[1].Chat.Messages
		last := msgs[len(msgs)-1]
		if last.ToolCallID != "c1" || !strings.Contains(string(last.Content), "not a valid email address") || !strings.Contains(string(last.Content), `"success":false`) {
			t.Fatalf("tool message %+v", last)
		}
	})

	t.Run("iteration bound", func(t *testing.T) {
		t.Parallel()
		loop := llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "again", Name: "contact_form", Arguments: []string{`{}`}}}}
		srv, p := engineFixture(t, loop, loop, loop)
		reg := tools.NewRegistry([]parley.Tool{toolstest.ContactForm(t)}, tools.Deps{})
		var texts []string
		res, err := RunTurn(context.Background(), p, userAsks("loop"), reg, 2, collect(&texts))
		if err != nil {
			t.Fatal(err)
		}
		if res.StopReason != StopMaxIterations || res.Calls != 3 || len(res.Executions) != 2 {
			t.Fatalf("stop %q, calls %d, executions %d", res.StopReason, res.Calls, len(res.Executions))
		}
		if res.Text != ToolLimitMessage || strings.Join(texts, "") != ToolLimitMessage {
			t.Fatalf("text %q emitted %q", res.Text, texts)
		}
		reqs := srv.Requests()
		if len(reqs) != 3 {
			t.Fatalf("%d requests", len(reqs))
		}
		sys := string(reqs[2].Chat.Messages[0].Content)
		if !strings.Contains(sys, "Tool limit reached") || strings.Contains(string(reqs[1].Chat.Messages[0].Content), "Tool limit reached") {
			t.Fatalf("closing system prompt %q", sys)
		}
	})

	t.Run("closing call text is kept", func(t *testing.T) {
		t.Parallel()
		loop := llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "again", Name: "contact_form", Arguments: []string{`{}`}}}}
		_, p := engineFixture(t, loop, llmtest.Turn{Text: []string{"I need your name and email."}})
		reg := tools.NewRegistry([]parley.Tool{toolstest.ContactForm(t)}, tools.Deps{})
		res, err := RunTurn(context.Background(), p, userAsks("loop"), reg, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Text != "I need your name and email." || res.StopReason != StopMaxIterations {
			t.Fatalf("result %+v", res)
		}
	})

	t.Run("upstream error after partial text", func(t *testing.T) {
		t.Parallel()
		_, p := engineFixture(t,
			llmtest.Turn{Text: []string{"Checking."}, ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "contact_form", Arguments: []string{`{"fullName":"Ada","workEmail":"ada@example.com"}`}}}},
			llmtest.Turn{Status: 503, ErrorMessage: "overloaded"},
		)
		reg := tools.NewRegistry([]parley.Tool{toolstest.ContactForm(t)}, tools.Deps{})
		res, err := RunTurn(context.Background(), p, userAsks("hi"), reg, 0, nil)
		var le *llm.Error
		if !errors.As(err, &le) || le.Kind != llm.Upstream {
			t.Fatalf("error %v", err)
		}
		if res.Text != "Checking." || len(res.Executions) != 1 || !res.Executions[0].Success {
			t.Fatalf("partial result %+v", res)
		}
	})

	t.Run("unknown tool name", func(t *testing.T) {
		t.Parallel()
		_, p := engineFixture(t,
			llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "launch_rockets", Arguments: []string{`{}`}}}},
			llmtest.Turn{Text: []string{"Sorry."}},
		)
		reg := tools.NewRegistry([]parley.Tool{toolstest.ContactForm(t)}, tools.Deps{})
		res, err := RunTurn(context.Background(), p, userAsks("hi"), reg, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Executions[0].Success || !strings.Contains(res.Executions[0].Summary, "launch_rockets") {
			t.Fatalf("execution %+v", res.Executions[0])
		}
	})

	t.Run("tool specs sent to the model", func(t *testing.T) {
		t.Parallel()
		srv, p := engineFixture(t, llmtest.Turn{Text: []string{"ok"}})
		tenantTools := []parley.Tool{
			toolstest.ContactForm(t),
			toolstest.Tool(t, "Contact form", parley.ToolSubmitForm, parley.SubmitFormConfig{Fields: []parley.FormField{{Name: "email", Label: "Email", Type: "email", Required: true}}}),
			toolstest.Tool(t, "Quote!", parley.ToolGenerateQuote, toolstest.QuoteConfig()),
			toolstest.Tool(t, "Remember", parley.ToolRememberFact, parley.RememberConfig{AllowedKeys: []string{"company"}}),
			toolstest.Tool(t, "Products", parley.ToolRecommendProduct, parley.RecommendConfig{MaxResults: 2}),
			toolstest.Tool(t, "Human", parley.ToolEscalateToHuman, parley.EscalateConfig{}),
			toolstest.Tool(t, "Meeting", parley.ToolBookMeeting, parley.MeetingConfig{DurationMinutes: 30}),
			toolstest.Tool(t, "Off", parley.ToolRememberFact, parley.RememberConfig{}),
		}
		tenantTools[len(tenantTools)-1].IsActive = false
		reg := tools.NewRegistry(tenantTools, tools.Deps{Corpus: toolstest.Corpus{}})
		if _, err := RunTurn(context.Background(), p, userAsks("hi"), reg, 0, nil); err != nil {
			t.Fatal(err)
		}
		got := srv.Requests()[0].Chat.Tools
		wantNames := []string{"contact_form", "contact_form_2", "quote", "remember", "products", "human", tools.ExploreCorpusTool}
		if len(got) != len(wantNames) {
			t.Fatalf("%d tools offered, want %d", len(got), len(wantNames))
		}
		seen := map[string]bool{}
		for i, tool := range got {
			name := tool.Function.Name
			if name != wantNames[i] || seen[name] {
				t.Fatalf("tool %d is %q, want %q (unique)", i, name, wantNames[i])
			}
			seen[name] = true
			var schema struct {
				Type       string                     `json:"type"`
				Properties map[string]json.RawMessage `json:"properties"`
				Required   []string                   `json:"required"`
			}
			if err := json.Unmarshal(tool.Function.Parameters, &schema); err != nil || schema.Type != "object" || schema.Required == nil {
				t.Fatalf("tool %s schema %s: %v", name, tool.Function.Parameters, err)
			}
			for _, r := range schema.Required {
				if _, ok := schema.Properties[r]; !ok {
					t.Fatalf("tool %s requires undeclared %q", name, r)
				}
			}
			if tool.Function.Description == "" {
				t.Fatalf("tool %s has no description", name)
			}
		}
		if !strings.Contains(string(got[0].Function.Parameters), `"required":["fullName","workEmail"]`) ||
			!strings.Contains(string(got[0].Function.Parameters), `"format":"email"`) {
			t.Fatalf("form schema %s", got[0].Function.Parameters)
		}
		if !strings.Contains(string(got[3].Function.Parameters), `"enum":["company"]`) {
			t.Fatalf("remember schema %s", got[3].Function.Parameters)
		}
		if !strings.Contains(string(got[2].Function.Parameters), `"enum":["Consulting day","Audit"]`) {
			t.Fatalf("quote schema %s", got[2].Function.Parameters)
		}
		if len(reg.Skipped) != 1 || !strings.Contains(reg.Skipped[0], "BOOK_MEETING") {
			t.Fatalf("skipped %v", reg.Skipped)
		}
	})
}
