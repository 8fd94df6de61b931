// Package llmtest runs scripted language-model servers in process, so that
// tests drive the real provider code over HTTP and can check what the model
// was sent.
package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Turn is one scripted answer. Set Status for an HTTP error; otherwise the
// answer is Text's chunks, then ToolCalls, each streamed in order.
type Turn struct {
	Text      []string   // content deltas, one chunk each
	ToolCalls []ToolCall // streamed after Text, one after the other
	// Status, when not 0, answers with this HTTP status and an OpenAI-style
	// error body carrying ErrorMessage.
	Status       int
	ErrorMessage string
	// Stall sends the headers and Text, then nothing more until the client
	// gives up (or the test ends): a model that hangs mid-answer. With no
	// Text it hangs before the first chunk.
	Stall bool
	// Usage reported in the final chunk when the client asks for it
	// (stream_options.include_usage) and in non-streaming answers.
	PromptTokens, CompletionTokens int
}

// ToolCall is a scripted tool call; its arguments arrive in the given pieces.
type ToolCall struct {
	ID        string
	Name      string
	Arguments []string
}

// Received is a request the server got.
type Received struct {
	Path   string
	Header http.Header
	Body   []byte // the raw JSON
	Chat   ChatRequest
}

// ChatRequest is the decoded body of a chat completion request.
type ChatRequest struct {
	Model               string        `json:"model"`
	Stream              bool          `json:"stream"`
	MaxTokens           int           `json:"max_tokens"`
	MaxCompletionTokens int           `json:"max_completion_tokens"`
	Messages            []ChatMessage `json:"messages"`
	Tools               []ChatTool    `json:"tools"`
	StreamOptions       struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// ChatMessage is one message of a received request.
type ChatMessage struct {
	Role       string         `json:"role"`
	Content    Content        `json:"content"`
	ToolCallID string         `json:"tool_call_id"`
	ToolCalls  []ChatToolCall `json:"tool_calls"`
}

// ChatToolCall is a tool call in a received assistant message.
type ChatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// ChatTool is a tool offered in a received request.
type ChatTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// Content is a message's text, sent either as a string or as text parts.
type Content string

// UnmarshalJSON accepts a string, null, or an array of text parts.
func (c *Content) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*c = ""
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*c = Content(s)
		return nil
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(b, &parts); err != nil {
		return fmt.Errorf("content is neither a string nor text parts: %w", err)
	}
	var sb strings.Builder
	for _, p := range parts {
		sb.WriteString(p.Text)
	}
	*c = Content(sb.String())
	return nil
}

// OpenAI is a scripted OpenAI-compatible chat completions server.
type OpenAI struct {
	// URL is the base URL to configure a client with, ending in /v1.
	URL string

	srv  *httptest.Server
	stop chan struct{}

	mu       sync.Mutex
	turns    []Turn
	received []Received
}

// NewOpenAI starts a server that answers with turns, in order, one per
// request; it is closed when the test ends. It serves POST
// /v1/chat/completions and /chat/completions.
func NewOpenAI(t testing.TB, turns ...Turn) *OpenAI {
	t.Helper()
	s := &OpenAI{stop: make(chan struct{}), turns: turns}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	// Cleanups run last first: release stalled handlers, then close.
	t.Cleanup(s.srv.Close)
	t.Cleanup(func() { close(s.stop) })
	s.URL = s.srv.URL + "/v1"
	return s
}

// Push appends turns to the script.
func (s *OpenAI) Push(turns ...Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turns = append(s.turns, turns...)
}

// Requests returns the requests received so far, oldest first.
func (s *OpenAI) Requests() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.received...)
}

func (s *OpenAI) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || (r.URL.Path != "/v1/chat/completions" && r.URL.Path != "/chat/completions") {
		writeError(w, http.StatusNotFound, "llmtest: no route "+r.Method+" "+r.URL.Path)
		return
	}
	rec := Received{Path: r.URL.Path, Header: r.Header.Clone()}
	var err error
	if rec.Body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, 10<<20)); err != nil {
		writeError(w, http.StatusBadRequest, "llmtest: reading body: "+err.Error())
		return
	}
	if err := json.Unmarshal(rec.Body, &rec.Chat); err != nil {
		writeError(w, http.StatusBadRequest, "llmtest: body is not a chat request: "+err.Error())
		return
	}
	s.mu.Lock()
	s.received = append(s.received, rec)
	var turn Turn
	ok := len(s.turns) > 0
	if ok {
		turn, s.turns = s.turns[0], s.turns[1:]
	}
	n := len(s.received)
	s.mu.Unlock()

	switch {
	case !ok:
		writeError(w, http.StatusInternalServerError, "llmtest: no scripted turn left")
	case turn.Status != 0:
		writeError(w, turn.Status, turn.ErrorMessage)
	case rec.Chat.Stream:
		s.stream(w, r, turn, rec.Chat, n)
	default:
		s.complete(w, r, turn, rec.Chat, n)
	}
}

func (s *OpenAI) stream(w http.ResponseWriter, r *http.Request, turn Turn, req ChatRequest, n int) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	id := fmt.Sprintf("chatcmpl-llmtest-%d", n)
	send := func(choices []any, usage any) {
		chunk := map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": time.Now().Unix(),
			"model": req.Model, "system_fingerprint": "llmtest", "choices": choices,
		}
		if usage != nil {
			chunk["usage"] = usage
		}
		b, _ := json.Marshal(chunk)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	delta := func(d map[string]any, finish any) []any {
		return []any{map[string]any{"index": 0, "delta": d, "logprobs": nil, "finish_reason": finish}}
	}

	send(delta(map[string]any{"role": "assistant", "content": ""}, nil), nil)
	for _, t := range turn.Text {
		send(delta(map[string]any{"content": t}, nil), nil)
	}
	if turn.Stall {
		select {
		case <-r.Context().Done():
		case <-s.stop:
		}
		return
	}
	for i, c := range turn.ToolCalls {
		send(delta(map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""},
		}}}, nil), nil)
		for _, piece := range c.Arguments {
			send(delta(map[string]any{"tool_calls": []any{map[string]any{
				"index": i, "function": map[string]any{"arguments": piece},
			}}}, nil), nil)
		}
	}
	send(delta(map[string]any{}, finishReason(turn)), nil)
	if req.StreamOptions.IncludeUsage {
		send([]any{}, usage(turn))
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

func (s *OpenAI) complete(w http.ResponseWriter, r *http.Request, turn Turn, req ChatRequest, n int) {
	if turn.Stall {
		select {
		case <-r.Context().Done():
		case <-s.stop:
		}
		return
	}
	msg := map[string]any{"role": "assistant", "content": strings.Join(turn.Text, ""), "refusal": nil}
	var calls []any
	for _, c := range turn.ToolCalls {
		calls = append(calls, map[string]any{
			"id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": strings.Join(c.Arguments, "")},
		})
	}
	if calls != nil {
		msg["tool_calls"] = calls
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": fmt.Sprintf("chatcmpl-llmtest-%d", n), "object": "chat.completion", "created": time.Now().Unix(),
		"model": req.Model, "system_fingerprint": "llmtest",
		"choices": []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finishReason(turn)}},
		"usage":   usage(turn),
	})
}

func finishReason(turn Turn) string {
	if len(turn.ToolCalls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

func usage(turn Turn) map[string]any {
	return map[string]any{
		"prompt_tokens":     turn.PromptTokens,
		"completion_tokens": turn.CompletionTokens,
		"total_tokens":      turn.PromptTokens + turn.CompletionTokens,
	}
}

// writeError answers in OpenAI's error format.
func writeError(w http.ResponseWriter, status int, message string) {
	kind := "invalid_request_error"
	switch {
	case status == http.StatusUnauthorized:
		kind = "authentication_error"
	case status == http.StatusTooManyRequests:
		kind = "rate_limit_exceeded"
	case status >= 500:
		kind = "server_error"
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{
		"error": map[string]any{"message": message, "type": kind, "param": nil, "code": nil},
	})
}
