package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeAnthropic answers POST /v1/messages with a fixed event stream (or an
// error status) and keeps the request bodies.
type fakeAnthropic struct {
	srv    *httptest.Server
	mu     sync.Mutex
	bodies [][]byte
	keys   []string
}

// anthropicWire is one server-sent event in Anthropic's wire format.
type anthropicWire struct {
	name string
	data string
}

func newFakeAnthropic(t testing.TB, status int, events ...anthropicWire) *fakeAnthropic {
	t.Helper()
	f := &fakeAnthropic{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.bodies = append(f.bodies, body)
		f.keys = append(f.keys, r.Header.Get("X-Api-Key"))
		f.mu.Unlock()
		if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
			http.NotFound(w, r)
			return
		}
		if status != http.StatusOK {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			fmt.Fprint(w, events[0].data)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range events {
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.name, ev.data)
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAnthropic) provider() *Anthropic {
	return NewAnthropic(AnthropicConfig{BaseURL: f.srv.URL, APIKey: testLLMKey, Model: "claude-test", HTTPClient: f.srv.Client()})
}

// anthropicToolTurn is a text block then one tool_use block whose input
// arrives in three pieces.
var anthropicToolTurn = []anthropicWire{
	{"message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-test","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":42,"output_tokens":1}}}`},
	{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`},
	{"ping", `{"type":"ping"}`},
	{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let me "}}`},
	{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"check."}}`},
	{"content_block_stop", `{"type":"content_block_stop","index":0}`},
	{"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}}`},
	{"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}`},
	{"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"city\": "}}`},
	{"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"Par"}}`},
	{"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"is\"}"}}`},
	{"content_block_stop", `{"type":"content_block_stop","index":1}`},
	{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":17}}`},
	{"message_stop", `{"type":"message_stop"}`},
}

func TestAnthropicProvider(t *testing.T) {
	t.Parallel()

	t.Run("TextAndToolUse", func(t *testing.T) {
		t.Parallel()
		f := newFakeAnthropic(t, http.StatusOK, anthropicToolTurn...)
		schema := `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`
		req := Request{
			System: "System prompt for Claude.",
			Messages: []Message{
				{Role: RoleUser, Content: "Time in Paris?"},
				{Role: RoleAssistant, Content: "Checking.", ToolCalls: []ToolCall{{ID: "toolu_0", Name: "get_time", Arguments: json.RawMessage(`{"zone":"Europe/Paris"}`)}}},
				{Role: RoleTool, ToolCallID: "toolu_0", Content: "14:05"},
				{Role: RoleAssistant, Content: "It is 14:05."},
				{Role: RoleUser, Content: "And the weather?"},
			},
			Tools: []ToolSpec{
				{Name: "get_weather", Description: "Current weather", Parameters: json.RawMessage(schema)},
				{Name: "escalate", Description: "Hand over to a human"},
			},
		}
		s, err := f.provider().Stream(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		r := collectStream(s)
		if r.err != nil {
			t.Fatal(r.err)
		}
		if got := strings.Join(r.texts, "|"); got != "Let me |check." {
			t.Errorf("text deltas = %q", got)
		}
		if len(r.calls) != 1 || r.calls[0].ID != "toolu_1" || r.calls[0].Name != "get_weather" {
			t.Fatalf("tool calls = %+v", r.calls)
		}
		jsonEqual(t, string(r.calls[0].Arguments), `{"city":"Paris"}`)
		if r.done == nil || r.done.StopReason != StopToolCalls || r.done.Usage != (Usage{InputTokens: 42, OutputTokens: 17}) {
			t.Errorf("done = %+v, want tool_calls with usage 42/17", r.done)
		}

		if len(f.bodies) != 1 || f.keys[0] != testLLMKey {
			t.Fatalf("server got %d requests, key %q", len(f.bodies), f.keys)
		}
		jsonEqual(t, string(f.bodies[0]), `{
			"model": "claude-test",
			"max_tokens": 1024,
			"stream": true,
			"system": [{"type":"text","text":"System prompt for Claude."}],
			"messages": [
				{"role":"user","content":[{"type":"text","text":"Time in Paris?"}]},
				{"role":"assistant","content":[
					{"type":"text","text":"Checking."},
					{"type":"tool_use","id":"toolu_0","name":"get_time","input":{"zone":"Europe/Paris"}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_0","content":[{"type":"text","text":"14:05"}],"is_error":false}]},
				{"role":"assistant","content":[{"type":"text","text":"It is 14:05."}]},
				{"role":"user","content":[{"type":"text","text":"And the weather?"}]}
			],
			"tools": [
				{"name":"get_weather","description":"Current weather","input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}},
				{"name":"escalate","description":"Hand over to a human","input_schema":{"type":"object","properties":{}}}
			]
		}`)
	})

	t.Run("ToolResultsShareOneUserMessage", func(t *testing.T) {
		t.Parallel()
		p := NewAnthropic(AnthropicConfig{APIKey: testLLMKey, Model: "claude-test"})
		params, err := p.params(Request{Messages: []Message{
			{Role: RoleUser, Content: "Both?"},
			{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "a", Name: "x"}, {ID: "b", Name: "y"}}},
			{Role: RoleTool, ToolCallID: "a", Content: "1"},
			{Role: RoleTool, ToolCallID: "b", Content: "2"},
		}})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(params.Messages); n != 3 || len(params.Messages[2].Content) != 2 {
			t.Errorf("messages = %d, last with %d blocks; want 3, the last holding both results", n, len(params.Messages[n-1].Content))
		}
	})

	// A message left unanswered (its turn's process died, or the model
	// failed) comes right before the next: the API wants the roles to
	// alternate, so both go in one user message.
	t.Run("UnansweredMessageSharesOneUserMessage", func(t *testing.T) {
		t.Parallel()
		p := NewAnthropic(AnthropicConfig{APIKey: testLLMKey, Model: "claude-test"})
		params, err := p.params(Request{Messages: []Message{
			{Role: RoleUser, Content: "Hi"},
			{Role: RoleAssistant, Content: "Hello."},
			{Role: RoleUser, Content: "Are you there?"},
			{Role: RoleUser, Content: "Hello again"},
		}})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(params.Messages); n != 3 || params.Messages[2].Role != "user" || len(params.Messages[2].Content) != 2 ||
			params.Messages[2].Content[0].OfText.Text != "Are you there?" || params.Messages[2].Content[1].OfText.Text != "Hello again" {
			t.Errorf("messages %+v; want 3, the last holding both user messages in order", params.Messages)
		}
	})

	t.Run("Errors", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			name     string
			status   int
			events   []anthropicWire
			kind     ErrorKind
			contains string
		}{
			{"Unauthorized", 401, []anthropicWire{{"", `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key ` + testLLMKey + `"}}`}},
				Auth, "rejected the API key (HTTP 401)"},
			{"Overloaded", 529, []anthropicWire{{"", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}},
				RateLimited, "rate limiting or overloaded (HTTP 529)"},
			{"BadRequest", 400, []anthropicWire{{"", `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too large for ` + testLLMKey + `"}}`}},
				BadRequest, "refused the request (HTTP 400): max_tokens: too large for [redacted]"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				f := newFakeAnthropic(t, tc.status, tc.events...)
				_, err := f.provider().Stream(t.Context(), userRequest("Hi"))
				var le *Error
				if !errors.As(err, &le) || le.Kind != tc.kind {
					t.Fatalf("error %v, want kind %d", err, tc.kind)
				}
				if !strings.Contains(err.Error(), tc.contains) || strings.Contains(err.Error(), testLLMKey) {
					t.Errorf("message %q, want it to contain %q and not the key", err, tc.contains)
				}
			})
		}
	})

	t.Run("ErrorMidStream", func(t *testing.T) {
		t.Parallel()
		f := newFakeAnthropic(t, http.StatusOK,
			anthropicToolTurn[0], anthropicToolTurn[1], anthropicToolTurn[3],
			anthropicWire{"error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`})
		s, err := f.provider().Stream(t.Context(), userRequest("Hi"))
		if err != nil {
			t.Fatal(err)
		}
		r := collectStream(s)
		var le *Error
		if r.text() != "Let me " || !errors.As(r.err, &le) || le.Kind != RateLimited {
			t.Errorf("text %q err %v, want the text then a rate-limited error", r.text(), r.err)
		}
	})
}

func TestAnthropicEvents(t *testing.T) {
	t.Parallel()

	t.Run("OthersSkipped", func(t *testing.T) {
		t.Parallel()
		// Blocks and deltas a turn does not read (thinking, its signature,
		// a citation, an empty event, a server tool's result) pass unseen;
		// the text and the stop around them are read.
		f := newFakeAnthropic(t, http.StatusOK,
			anthropicToolTurn[0],
			anthropicWire{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`},
			anthropicWire{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Hmm."}}`},
			anthropicWire{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"abc"}}`},
			anthropicWire{"content_block_stop", `{"type":"content_block_stop","index":0}`},
			anthropicWire{"", ``},
			anthropicWire{"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"https://example.com","title":"Ex"}]}}`},
			anthropicWire{"content_block_stop", `{"type":"content_block_stop","index":1}`},
			anthropicWire{"content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}`},
			anthropicWire{"content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"citations_delta","citation":{"type":"char_location","cited_text":"x"}}}`},
			anthropicWire{"content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Sunny."}}`},
			anthropicWire{"content_block_stop", `{"type":"content_block_stop","index":2}`},
			anthropicWire{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"input_tokens":50,"output_tokens":9}}`},
			anthropicToolTurn[len(anthropicToolTurn)-1])
		s, err := f.provider().Stream(t.Context(), userRequest("Weather?"))
		if err != nil {
			t.Fatal(err)
		}
		r := collectStream(s)
		if r.err != nil || r.text() != "Sunny." || len(r.calls) != 0 {
			t.Fatalf("text %q, calls %+v, error %v; want the text alone", r.text(), r.calls, r.err)
		}
		if r.done == nil || r.done.StopReason != StopLength || r.done.Usage != (Usage{InputTokens: 50, OutputTokens: 9}) {
			t.Errorf("done = %+v, want length with usage 50/9", r.done)
		}
	})

	t.Run("Malformed", func(t *testing.T) {
		t.Parallel()
		// An event that is not the JSON of an event ends the stream with
		// the provider's error, after the text before it.
		for _, data := range []string{`{"type":"content_block_delta","index":0,"delta":`, `{"type":"content_block_delta","index":"zero"}`} {
			f := newFakeAnthropic(t, http.StatusOK, anthropicToolTurn[0], anthropicToolTurn[1], anthropicToolTurn[3],
				anthropicWire{"content_block_delta", data})
			s, err := f.provider().Stream(t.Context(), userRequest("Hi"))
			if err != nil {
				t.Fatal(err)
			}
			r := collectStream(s)
			var le *Error
			if r.text() != "Let me " || !errors.As(r.err, &le) || r.done != nil {
				t.Errorf("%s: text %q, error %v, done %+v; want the text then the provider's error", data, r.text(), r.err, r.done)
			}
		}
	})
}

// BenchmarkAnthropicStream streams a 50-delta answer through the provider
// from a local server: the time and allocation of a streamed turn's model
// side, the SDK's event decoding included.
func BenchmarkAnthropicStream(b *testing.B) {
	evs := []anthropicWire{anthropicToolTurn[0], anthropicToolTurn[1]}
	for i := range 50 {
		evs = append(evs, anthropicWire{"content_block_delta",
			fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"word%d "}}`, i)})
	}
	evs = append(evs, anthropicToolTurn[5], anthropicWire{"message_delta",
		`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":50}}`},
		anthropicToolTurn[len(anthropicToolTurn)-1])
	p := newFakeAnthropic(b, http.StatusOK, evs...).provider()
	req := Request{Messages: []Message{{Role: RoleUser, Content: "Hello"}}}
	b.ReportAllocs()
	for b.Loop() {
		s, err := p.Stream(b.Context(), req)
		if err != nil {
			b.Fatal(err)
		}
		if r := collectStream(s); r.err != nil || len(r.texts) != 50 {
			b.Fatalf("%d texts, error %v", len(r.texts), r.err)
		}
	}
}
