package llm

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley/agent/outbound"
	"github.com/parley/parley/agent/outbound/llm/llmtest"
)

const testLLMKey = "sk-test-secret-0123456789"

// llmResult is everything a stream yielded.
type llmResult struct {
	texts []string
	calls []ToolCall
	done  *Event
	err   error
}

func (r llmResult) text() string { return strings.Join(r.texts, "") }

func collectStream(s Stream) llmResult {
	var r llmResult
	for ev, err := range s {
		if err != nil {
			r.err = err
			break
		}
		switch ev.Kind {
		case EventText:
			r.texts = append(r.texts, ev.Text)
		case EventToolCall:
			r.calls = append(r.calls, ev.ToolCall)
		case EventDone:
			r.done = &ev
		}
	}
	return r
}

type openAIBundle struct {
	srv      *llmtest.OpenAI
	provider *OpenAI
}

// setupOpenAI starts a scripted server and a provider that reaches it through
// the SSRF-guarded client, loopback allowed as tests allow it.
func setupOpenAI(t *testing.T, turns ...llmtest.Turn) openAIBundle {
	t.Helper()
	srv := llmtest.NewOpenAI(t, turns...)
	out := outbound.New([]netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, nil)
	p := NewOpenAI(OpenAIConfig{BaseURL: srv.URL, APIKey: testLLMKey, Model: "test-model", HTTPClient: out.Client(10 * time.Second)})
	return openAIBundle{srv: srv, provider: p}
}

func userRequest(text string) Request {
	return Request{System: "You are Parley's test agent.", Messages: []Message{{Role: RoleUser, Content: text}}}
}

func jsonEqual(t *testing.T, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("got is not JSON: %v: %s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want is not JSON: %v: %s", err, want)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Errorf("JSON = %s, want %s", gb, wb)
	}
}

func TestOpenAIProvider(t *testing.T) {
	t.Parallel()

	t.Run("TextStreamsInOrder", func(t *testing.T) {
		t.Parallel()
		b := setupOpenAI(t, llmtest.Turn{Text: []string{"Hel", "lo, ", "world."}, PromptTokens: 12, CompletionTokens: 3})
		s, err := b.provider.Stream(t.Context(), userRequest("Hi"))
		if err != nil {
			t.Fatal(err)
		}
		r := collectStream(s)
		if r.err != nil {
			t.Fatal(r.err)
		}
		if got := strings.Join(r.texts, "|"); got != "Hel|lo, |world." {
			t.Errorf("text deltas = %q, want Hel|lo, |world.", got)
		}
		if len(r.calls) != 0 {
			t.Errorf("tool calls = %v, want none", r.calls)
		}
		if r.done == nil {
			t.Fatal("no done event")
		}
		if r.done.StopReason != StopEnd || r.done.Usage != (Usage{InputTokens: 12, OutputTokens: 3}) {
			t.Errorf("done = %+v, want stop with usage 12/3", *r.done)
		}
	})

	t.Run("RequestAsSent", func(t *testing.T) {
		t.Parallel()
		b := setupOpenAI(t, llmtest.Turn{Text: []string{"ok"}})
		schema := `{"type":"object","properties":{"city":{"type":"string","description":"City name"}},"required":["city"],"additionalProperties":false}`
		req := Request{
			System: "System prompt: answer from the knowledge base.",
			Messages: []Message{
				{Role: RoleUser, Content: "Weather in Paris?"},
				{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}}},
				{Role: RoleTool, ToolCallID: "call_1", Content: `{"temp":21}`},
				{Role: RoleAssistant, Content: "It is 21 degrees."},
				{Role: RoleUser, Content: "And tomorrow?"},
			},
			Tools: []ToolSpec{
				{Name: "get_weather", Description: "Current weather for a city", Parameters: json.RawMessage(schema)},
				{Name: "escalate", Description: "Hand over to a human"},
			},
			MaxTokens: 300,
		}
		s, err := b.provider.Stream(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		if r := collectStream(s); r.err != nil || r.text() != "ok" {
			t.Fatalf("answer = %q, %v", r.text(), r.err)
		}

		got := b.srv.Requests()
		if len(got) != 1 {
			t.Fatalf("server got %d requests, want 1", len(got))
		}
		rec := got[0]
		if rec.Path != "/v1/chat/completions" {
			t.Errorf("path = %s", rec.Path)
		}
		if h := rec.Header.Get("Authorization"); h != "Bearer "+testLLMKey {
			t.Errorf("Authorization = %q", h)
		}
		c := rec.Chat
		if c.Model != "test-model" || !c.Stream || !c.StreamOptions.IncludeUsage || c.MaxTokens != 300 {
			t.Errorf("model %q stream %v usage %v max_tokens %d", c.Model, c.Stream, c.StreamOptions.IncludeUsage, c.MaxTokens)
		}
		type msg struct{ role, content, toolCallID string }
		want := []msg{
			{"system", req.System, ""},
			{"user", "Weather in Paris?", ""},
			{"assistant", "", ""},
			{"tool", `{"temp":21}`, "call_1"},
			{"assistant", "It is 21 degrees.", ""},
			{"user", "And tomorrow?", ""},
		}
		if len(c.Messages) != len(want) {
			t.Fatalf("messages = %+v, want %d", c.Messages, len(want))
		}
		for i, w := range want {
			m := c.Messages[i]
			if (msg{m.Role, string(m.Content), m.ToolCallID}) != w {
				t.Errorf("message %d = %+v, want %+v", i, m, w)
			}
		}
		if tc := c.Messages[2].ToolCalls; len(tc) != 1 || tc[0].ID != "call_1" || tc[0].Type != "function" ||
			tc[0].Function.Name != "get_weather" || tc[0].Function.Arguments != `{"city":"Paris"}` {
			t.Errorf("assistant tool calls = %+v", tc)
		}
		if len(c.Tools) != 2 {
			t.Fatalf("tools = %+v, want 2", c.Tools)
		}
		if f := c.Tools[0]; f.Type != "function" || f.Function.Name != "get_weather" || f.Function.Description != "Current weather for a city" {
			t.Errorf("tool 0 = %+v", f)
		}
		jsonEqual(t, string(c.Tools[0].Function.Parameters), schema)
		if f := c.Tools[1]; f.Function.Name != "escalate" || len(f.Function.Parameters) != 0 {
			t.Errorf("tool 1 = %+v (parameters %s), want escalate without parameters", f, f.Function.Parameters)
		}
	})

	t.Run("ToolCallArgumentsAcrossChunks", func(t *testing.T) {
		t.Parallel()
		b := setupOpenAI(t, llmtest.Turn{
			Text:      []string{"Checking."},
			ToolCalls: []llmtest.ToolCall{{ID: "call_abc", Name: "get_weather", Arguments: []string{`{"ci`, `ty":"Par`, `is"}`}}},
		})
		s, err := b.provider.Stream(t.Context(), userRequest("Weather in Paris?"))
		if err != nil {
			t.Fatal(err)
		}
		r := collectStream(s)
		if r.err != nil {
			t.Fatal(r.err)
		}
		if len(r.calls) != 1 {
			t.Fatalf("tool calls = %+v, want 1", r.calls)
		}
		if c := r.calls[0]; c.ID != "call_abc" || c.Name != "get_weather" || string(c.Arguments) != `{"city":"Paris"}` {
			t.Errorf("tool call = %s %s %s", c.ID, c.Name, c.Arguments)
		}
		if r.text() != "Checking." || r.done == nil || r.done.StopReason != StopToolCalls {
			t.Errorf("text %q done %+v, want Checking. and tool_calls", r.text(), r.done)
		}
	})

	t.Run("ParallelToolCalls", func(t *testing.T) {
		t.Parallel()
		b := setupOpenAI(t, llmtest.Turn{ToolCalls: []llmtest.ToolCall{
			{ID: "call_1", Name: "get_weather", Arguments: []string{`{"city":`, `"Paris"}`}},
			{ID: "call_2", Name: "get_time", Arguments: []string{`{"zone":"Europe/`, `Paris"}`}},
		}})
		s, err := b.provider.Stream(t.Context(), userRequest("Weather and time in Paris?"))
		if err != nil {
			t.Fatal(err)
		}
		r := collectStream(s)
		if r.err != nil {
			t.Fatal(r.err)
		}
		want := []string{`call_1 get_weather {"city":"Paris"}`, `call_2 get_time {"zone":"Europe/Paris"}`}
		var got []string
		for _, c := range r.calls {
			got = append(got, c.ID+" "+c.Name+" "+string(c.Arguments))
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("tool calls =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if len(r.texts) != 0 {
			t.Errorf("text = %q, want none", r.texts)
		}
	})

	t.Run("UpstreamErrors", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			name     string
			status   int
			message  string
			kind     ErrorKind
			contains string
		}{
			{"Unauthorized", 401, "Incorrect API key provided: " + testLLMKey + ".", Auth, "rejected the API key (HTTP 401)"},
			{"RateLimited", 429, "Rate limit reached for key " + testLLMKey, RateLimited, "rate limiting or overloaded (HTTP 429)"},
			{"ServerError", 500, "The server had an error processing your request", Upstream, "failed (HTTP 500)"},
			{"BadRequest", 404, "The model `test-model` does not exist (key " + testLLMKey + ")", BadRequest,
				"refused the request (HTTP 404): The model `test-model` does not exist (key [redacted])"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				b := setupOpenAI(t, llmtest.Turn{Status: tc.status, ErrorMessage: tc.message})
				s, err := b.provider.Stream(t.Context(), userRequest("Hi"))
				if err == nil {
					t.Fatalf("no error; stream %v", collectStream(s))
				}
				var le *Error
				if !errors.As(err, &le) {
					t.Fatalf("error %T %v, want *Error", err, err)
				}
				if le.Kind != tc.kind || le.Status != tc.status {
					t.Errorf("kind %d status %d, want %d %d", le.Kind, le.Status, tc.kind, tc.status)
				}
				if !strings.Contains(err.Error(), tc.contains) {
					t.Errorf("message %q does not contain %q", err, tc.contains)
				}
				if strings.Contains(err.Error(), testLLMKey) || strings.Contains(err.Error(), "sk-") {
					t.Errorf("message %q echoes the key", err)
				}
				if n := len(b.srv.Requests()); n != 1 {
					t.Errorf("server got %d requests, want 1 (no retries)", n)
				}
			})
		}
	})

	t.Run("StallBeforeFirstChunk", func(t *testing.T) {
		t.Parallel()
		b := setupOpenAI(t, llmtest.Turn{Stall: true})
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := b.provider.Stream(ctx, userRequest("Hi"))
		elapsed := time.Since(start)
		// Nothing but the role chunk came, so Stream itself reports it.
		var le *Error
		if !errors.As(err, &le) || le.Kind != Timeout {
			t.Fatalf("error %v, want a timeout", err)
		}
		if elapsed > 2*time.Second {
			t.Errorf("took %v to give up, want about the 200ms deadline", elapsed)
		}
	})

	t.Run("StallMidAnswer", func(t *testing.T) {
		t.Parallel()
		b := setupOpenAI(t, llmtest.Turn{Text: []string{"Let me think"}, Stall: true})
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		s, err := b.provider.Stream(ctx, userRequest("Hi"))
		if err != nil {
			t.Fatal(err)
		}
		r := collectStream(s)
		if r.text() != "Let me think" {
			t.Errorf("text = %q, want what came before the stall", r.text())
		}
		var le *Error
		if !errors.As(r.err, &le) || le.Kind != Timeout {
			t.Fatalf("stream ended with %v, want a timeout", r.err)
		}
		if msg := r.err.Error(); msg != "the openai model provider did not answer in time" {
			t.Errorf("message = %q", msg)
		}
		if elapsed := time.Since(start); elapsed > 2*time.Second {
			t.Errorf("took %v to give up", elapsed)
		}
	})

	t.Run("ClientTimeout", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewOpenAI(t, llmtest.Turn{Text: []string{"Let me think"}, Stall: true})
		out := outbound.New([]netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, nil)
		p := NewOpenAI(OpenAIConfig{BaseURL: srv.URL, APIKey: testLLMKey, Model: "m", HTTPClient: out.Client(200 * time.Millisecond)})
		start := time.Now()
		s, err := p.Stream(t.Context(), userRequest("Hi"))
		if err != nil {
			t.Fatal(err)
		}
		r := collectStream(s)
		var le *Error
		if !errors.As(r.err, &le) || le.Kind != Timeout {
			t.Fatalf("stream ended with %v, want a timeout from the client's own limit", r.err)
		}
		if elapsed := time.Since(start); elapsed > 2*time.Second {
			t.Errorf("took %v to give up", elapsed)
		}
	})

	t.Run("StopEarly", func(t *testing.T) {
		t.Parallel()
		b := setupOpenAI(t, llmtest.Turn{Text: []string{"one", "two", "three"}})
		s, err := b.provider.Stream(t.Context(), userRequest("Hi"))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for ev, err := range s {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, ev.Text)
			break
		}
		if len(got) != 1 || got[0] != "one" {
			t.Errorf("got %q, want the first delta only", got)
		}
	})

	t.Run("Unreachable", func(t *testing.T) {
		t.Parallel()
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		out := outbound.New([]netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, nil)
		p := NewOpenAI(OpenAIConfig{BaseURL: "http://" + addr + "/v1", APIKey: testLLMKey, Model: "m", HTTPClient: out.Client(5 * time.Second)})
		_, err = p.Stream(t.Context(), userRequest("Hi"))
		var le *Error
		if !errors.As(err, &le) || le.Kind != Unreachable {
			t.Fatalf("error %v, want unreachable", err)
		}
		if msg := err.Error(); msg != "cannot reach the openai model provider: connection refused" {
			t.Errorf("message = %q", msg)
		}
	})

	t.Run("BaseURLRefusedBySSRFGuard", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewOpenAI(t, llmtest.Turn{Text: []string{"never"}})
		p := NewOpenAI(OpenAIConfig{BaseURL: srv.URL, APIKey: testLLMKey, Model: "m", HTTPClient: outbound.New(nil, nil).Client(5 * time.Second)})
		_, err := p.Stream(t.Context(), userRequest("Hi"))
		var le *Error
		if !errors.As(err, &le) || le.Kind != Unreachable {
			t.Fatalf("error %v, want unreachable", err)
		}
		if msg := err.Error(); !strings.Contains(msg, "refused: 127.0.0.1 is a private or reserved address") {
			t.Errorf("message = %q", msg)
		}
		if n := len(srv.Requests()); n != 0 {
			t.Errorf("server got %d requests, want none", n)
		}
	})

	t.Run("OpenAIUsesMaxCompletionTokens", func(t *testing.T) {
		t.Parallel()
		p := NewOpenAI(OpenAIConfig{APIKey: testLLMKey, Model: "gpt-test"})
		params, err := p.params(userRequest("Hi"))
		if err != nil {
			t.Fatal(err)
		}
		if params.MaxCompletionTokens != DefaultMaxTokens || params.MaxTokens != 0 {
			t.Errorf("max_completion_tokens %v max_tokens %v, want only max_completion_tokens", params.MaxCompletionTokens, params.MaxTokens)
		}
	})

	t.Run("InvalidToolSchema", func(t *testing.T) {
		t.Parallel()
		b := setupOpenAI(t)
		req := userRequest("Hi")
		req.Tools = []ToolSpec{{Name: "broken", Parameters: json.RawMessage(`[1,2]`)}}
		if _, err := b.provider.Stream(t.Context(), req); err == nil || !strings.Contains(err.Error(), "tool broken") {
			t.Errorf("error = %v, want one naming the tool", err)
		}
		if n := len(b.srv.Requests()); n != 0 {
			t.Errorf("server got %d requests, want none", n)
		}
	})
}
