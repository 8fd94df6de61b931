package llm

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley/agent/outbound"
	"github.com/parley/parley/agent/outbound/llm/llmtest"
)

// A request taken whole (Request.Whole) asks for a completion that is not
// streamed, and yields what a stream of it would have: the text, the tool
// calls in order with their arguments, done with the stop and the usage.
func TestOpenAIWhole(t *testing.T) {
	t.Parallel()

	t.Run("TextAndToolCalls", func(t *testing.T) {
		t.Parallel()
		b := setupOpenAI(t, llmtest.Turn{
			Text: []string{"Checking ", "both."},
			ToolCalls: []llmtest.ToolCall{
				{ID: "call_a", Name: "get_weather", Arguments: []string{`{"city":`, `"Paris"}`}},
				{ID: "call_b", Name: "escalate", Arguments: []string{`{}`}},
			},
			PromptTokens: 40, CompletionTokens: 9,
		})
		s, err := b.provider.Stream(t.Context(), wholeRequest("Weather in Paris?"))
		if err != nil {
			t.Fatal(err)
		}
		r := collectStream(s)
		if r.err != nil {
			t.Fatal(r.err)
		}
		if len(r.texts) != 1 || r.texts[0] != "Checking both." {
			t.Errorf("texts = %q, want the answer's text in one event", r.texts)
		}
		if len(r.calls) != 2 || r.calls[0].ID != "call_a" || r.calls[0].Name != "get_weather" ||
			string(r.calls[0].Arguments) != `{"city":"Paris"}` || r.calls[1].ID != "call_b" || r.calls[1].Name != "escalate" {
			t.Errorf("tool calls = %+v, want get_weather(Paris) then escalate, apart", r.calls)
		}
		if r.done == nil || r.done.StopReason != StopToolCalls || r.done.Usage != (Usage{InputTokens: 40, OutputTokens: 9}) {
			t.Errorf("done = %+v, want tool calls with usage 40/9", r.done)
		}
		got := b.srv.Requests()
		if len(got) != 1 || got[0].Chat.Stream || strings.Contains(string(got[0].Body), "stream_options") {
			t.Fatalf("requests = %d, body %s: want one, not streamed, without stream_options (OpenAI refuses it then)", len(got), got[0].Body)
		}
	})

	t.Run("TextOnly", func(t *testing.T) {
		t.Parallel()
		b := setupOpenAI(t, llmtest.Turn{Text: []string{"Hello there."}})
		s, err := b.provider.Stream(t.Context(), wholeRequest("Hi"))
		if err != nil {
			t.Fatal(err)
		}
		r := collectStream(s)
		if r.err != nil || r.text() != "Hello there." || len(r.calls) != 0 || r.done == nil || r.done.StopReason != StopEnd {
			t.Errorf("got %q, calls %v, done %+v, err %v; want the text and done", r.text(), r.calls, r.done, r.err)
		}
		if len(r.texts) != 1 || r.texts[0] != "Hello there." {
			t.Errorf("texts = %q, want one event", r.texts)
		}
	})

	t.Run("Refused", func(t *testing.T) {
		t.Parallel()
		b := setupOpenAI(t, llmtest.Turn{Status: http.StatusTooManyRequests, ErrorMessage: "slow down"})
		_, err := b.provider.Stream(t.Context(), wholeRequest("Hi"))
		var e *Error
		if !errors.As(err, &e) || e.Kind != RateLimited || e.Status != http.StatusTooManyRequests {
			t.Fatalf("err = %v, want a rate limit from Stream itself", err)
		}
	})

	// A compatible server that streams though asked not to is read as a
	// stream; one whose answer is not a completion is the provider's fault.
	for _, tc := range []struct {
		name, contentType, body string
		want                    string // the text; "" for an error
	}{
		{"StreamsAnyway", "text/event-stream",
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi \"}}]}\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"there\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n", "Hi there"},
		{"NotJSON", "application/json", `<html>oops</html>`, ""},
		// maxWholeAnswer: a completion of exactly that many bytes is read,
		// one byte more is refused.
		{"AtTheLimit", "application/json", padded(maxWholeAnswer), "ok"},
		{"OverTheLimit", "application/json", padded(maxWholeAnswer + 1), ""},
		{"NoChoices", "application/json", `{"id":"x","choices":[]}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", tc.contentType)
				_, _ = io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			out := outbound.New([]netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, nil)
			p := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1", APIKey: testLLMKey, Model: "m", HTTPClient: out.Client(10 * time.Second)})
			s, err := p.Stream(t.Context(), wholeRequest("Hi"))
			if tc.want == "" {
				var e *Error
				if !errors.As(err, &e) || e.Kind != Upstream {
					t.Fatalf("err = %v, want the provider's fault (Upstream) from Stream itself", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r := collectStream(s); r.err != nil || r.text() != tc.want || r.done == nil {
				t.Errorf("got %q, done %+v, err %v; want %q", r.text(), r.done, r.err, tc.want)
			}
		})
	}
}

// wholeRequest is userRequest taken whole.
func wholeRequest(text string) Request {
	req := userRequest(text)
	req.Whole = true
	return req
}

// padded is a completion answering "ok", n bytes long (spaces after it).
func padded(n int) string {
	c := `{"choices":[{"index":0,"message":{"content":"ok"},"finish_reason":"stop"}]}`
	return c + strings.Repeat(" ", n-len(c))
}

// Anthropic takes a request whole as OpenAI does: a message not streamed,
// yielded as its text in one event, its tool uses in order, done.
func TestAnthropicWhole(t *testing.T) {
	t.Parallel()
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(string(body), "refuse me") {
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = io.WriteString(w, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`)
			return
		}
		_, _ = io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test",
			"content":[{"type":"text","text":"Let me "},{"type":"text","text":"check."},
				{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}},
				{"type":"tool_use","id":"toolu_2","name":"escalate","input":{}}],
			"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":42,"output_tokens":17}}`)
	}))
	defer srv.Close()
	p := NewAnthropic(AnthropicConfig{BaseURL: srv.URL, APIKey: testLLMKey, Model: "claude-test", HTTPClient: srv.Client()})
	req := wholeRequest("Weather in Paris?")
	s, err := p.Stream(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	r := collectStream(s)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if len(r.texts) != 1 || r.texts[0] != "Let me check." {
		t.Errorf("texts = %q, want the message's text in one event", r.texts)
	}
	if len(r.calls) != 2 || r.calls[0].ID != "toolu_1" || r.calls[0].Name != "get_weather" ||
		string(r.calls[0].Arguments) != `{"city":"Paris"}` || r.calls[1].Name != "escalate" {
		t.Errorf("tool calls = %+v, want get_weather(Paris) then escalate", r.calls)
	}
	if r.done == nil || r.done.StopReason != StopToolCalls || r.done.Usage != (Usage{InputTokens: 42, OutputTokens: 17}) {
		t.Errorf("done = %+v, want tool calls with usage 42/17", r.done)
	}
	if strings.Contains(string(body), `"stream":true`) {
		t.Errorf("request %s asked for a stream", body)
	}

	req.Messages[0].Content = "refuse me"
	_, err = p.Stream(t.Context(), req)
	var e *Error
	if !errors.As(err, &e) || e.Kind != RateLimited {
		t.Fatalf("err = %v, want a rate limit from Stream itself", err)
	}
}
