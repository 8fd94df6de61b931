// Package llm holds the clients of the language models and of the
// embedding endpoints: the model interface every provider streams through
// (Provider, Request, Event), OpenAI-compatible servers, Anthropic, a
// tenant's own reply endpoint (Webhook), and the OpenAI-compatible
// embeddings client (Embedder). The engine, in package agent, calls them
// through Provider.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/parley/parley/agent/outbound"
)

// Provider is a language model behind one streaming interface: openai (any
// OpenAI-compatible server), anthropic, webhook (a tenant's reply endpoint),
// and local (agent.Local: the knowledge base quoted, no network).
type Provider interface {
	// Name is the provider's kind: "openai", "anthropic", "local".
	Name() string
	// Model is the model asked for.
	Model() string
	// Stream sends req and returns the answer as it arrives. It returns once
	// the first event is in, so an upstream failure to start (bad key, rate
	// limit, unreachable, timeout) comes back as its error, before anything
	// has been written to the caller; a failure after that is the stream's
	// last element. The caller must range over the stream (stopping early
	// is fine) or cancel ctx: that is what releases the upstream connection.
	Stream(ctx context.Context, req Request) (Stream, error)
}

// Stream yields a model's answer in order: text deltas and complete tool
// calls, then one EventDone; or, on failure, a final non-nil error (an
// *Error, or the context's error when the caller went away).
type Stream = iter.Seq2[Event, error]

// Role says who wrote a message.
type Role string

// Message roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool" // a tool's result, answering ToolCallID
)

// Message is one turn of the conversation sent to the model.
type Message struct {
	Role       Role
	Content    string
	ToolCalls  []ToolCall // tool calls an assistant message made
	ToolCallID string     // for RoleTool: the call this result answers
}

// ToolCall is a model's request to run a tool.
type ToolCall struct {
	ID        string
	Name      string
	Arguments json.RawMessage // a JSON object, as the model wrote it
}

// ToolSpec describes a tool offered to the model.
type ToolSpec struct {
	Name        string
	Description string
	Parameters  json.RawMessage // a JSON Schema object; empty means no parameters
	// Type is the tenant tool's type (ESCALATE_TO_HUMAN, ...), empty for
	// the built-in ones. No model is sent it: the local provider, which
	// reads no description, finds the tool it can run by it.
	Type string
}

// Passage is a corpus entry the engine retrieved for this turn.
type Passage struct {
	Title   string
	Content string
	// Ref is the passage's citation marker in System ("[3]"), 0 when the
	// prompt does not hold it; an answer cites it by writing the marker.
	Ref int
}

// Request is everything a provider needs for one model call.
type Request struct {
	System    string
	Messages  []Message
	Tools     []ToolSpec
	MaxTokens int // 0: the provider's default
	// Passages are the retrieved corpus entries; the local provider answers
	// from them, the others ignore them (the engine puts them in System).
	Passages []Passage
	// Language is the language the answer is to be in (ISO 639-1, "fr"),
	// empty when unknown. Models read it in System; the local provider
	// writes its few words of its own in it.
	Language string
	// Whole says the caller takes the answer whole (the agent envelope, a
	// judge's verdict): the provider may ask the model for it in one
	// response rather than streamed, and yields it as the same events (the
	// text in one, with More false). OpenAI-compatible providers and
	// Anthropic do; the others (the local one, a reply endpoint) answer
	// as they always do.
	Whole bool
}

// EventKind says what an Event carries.
type EventKind int

// Kinds of stream events.
const (
	EventText     EventKind = iota + 1 // Text holds the next piece of the answer
	EventToolCall                      // ToolCall holds a complete call, arguments assembled
	EventDone                          // the answer is complete; StopReason and Usage are set
)

// Event is one element of a Stream.
type Event struct {
	Kind EventKind
	Text string
	// More (EventText) says that more text follows and has already arrived:
	// a writer may hold this text and send it with what follows rather than
	// flush it alone (one write to the visitor instead of several). False
	// when what comes next is not known yet, or is not text.
	More       bool
	ToolCall   ToolCall
	StopReason string // EventDone: "stop", "tool_calls", "length"
	Usage      Usage  // EventDone: zero when the provider does not report it
}

// Usage counts the tokens of one model call.
type Usage struct {
	InputTokens  int
	OutputTokens int
}

// Stop reasons, the same for every provider.
const (
	StopEnd       = "stop"
	StopToolCalls = "tool_calls"
	StopLength    = "length"
)

// DefaultMaxTokens bounds an answer when the request does not.
const DefaultMaxTokens = 1024

// ErrorKind says why a model call failed.
type ErrorKind int

// Ways a model call fails.
const (
	Auth        ErrorKind = iota + 1 // the key was refused (401, 403)
	RateLimited                      // 429, or the provider is overloaded
	Timeout                          // no complete answer before the deadline
	Upstream                         // the provider failed (5xx, or an error mid-stream)
	BadRequest                       // the provider refused the request (400, 404, 422: model, schema, size)
	Unreachable                      // DNS, connection, TLS, or a base URL the SSRF guard refuses
)

// Error is a failed model call. Its message is safe to show to the
// tenant and the visitor: it never contains the API key, and it quotes the
// provider's own words only for a bad request, with the key removed.
type Error struct {
	Kind     ErrorKind
	Provider string
	Status   int    // the upstream HTTP status, when there was one
	Detail   string // the provider's explanation (bad request) or the reason it is unreachable
	Err      error  // the underlying error, for logs; may mention the request URL
}

func (e *Error) Error() string {
	p := "the " + e.Provider + " model provider"
	status := ""
	if e.Status != 0 {
		status = fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	switch e.Kind {
	case Auth:
		if e.Provider == "webhook" {
			// A tenant's reply endpoint has no API key: it refused the call,
			// most often because it verifies with an older signing key.
			return p + " refused the call" + status + "; check that it verifies signatures with the current visitor signing key"
		}
		return p + " rejected the API key" + status
	case RateLimited:
		return p + " is rate limiting or overloaded" + status + "; try again shortly"
	case Timeout:
		return p + " did not answer in time"
	case BadRequest:
		if e.Detail != "" {
			return p + " refused the request" + status + ": " + e.Detail
		}
		return p + " refused the request" + status
	case Unreachable:
		if e.Detail != "" {
			return "cannot reach " + p + ": " + e.Detail
		}
		return "cannot reach " + p
	default:
		return p + " failed" + status
	}
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// statusKind classifies an upstream HTTP status.
func statusKind(status int) ErrorKind {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return Auth
	case status == http.StatusTooManyRequests || status == 529: // 529: Anthropic's "overloaded"
		return RateLimited
	case status == http.StatusRequestTimeout || status == http.StatusGatewayTimeout:
		return Timeout
	case status >= 500:
		return Upstream
	default:
		return BadRequest
	}
}

// transportError classifies an error that came with no upstream status:
// the caller's deadline, a cancelled caller, a failed connection, or an
// answer that could not be read. A cancelled caller gets the context's error
// back: nobody is left to read a message.
func transportError(ctx context.Context, provider string, err error) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return ctx.Err()
	}
	if ctx.Err() != nil || outbound.IsTimeout(err) {
		return &Error{Kind: Timeout, Provider: provider, Err: err}
	}
	var oe *outbound.Error
	if errors.As(err, &oe) {
		switch oe.Kind {
		case outbound.Timeout:
			return &Error{Kind: Timeout, Provider: provider, Err: err}
		case outbound.Refused:
			return &Error{Kind: Unreachable, Provider: provider, Detail: oe.Error(), Err: err}
		}
		detail := oe.Reason
		if detail == "" {
			detail = outbound.DescribeFailure(oe.Err)
		}
		return &Error{Kind: Unreachable, Provider: provider, Detail: detail, Err: err}
	}
	var ue *url.Error
	var opErr *net.OpError
	if errors.As(err, &ue) || errors.As(err, &opErr) {
		return &Error{Kind: Unreachable, Provider: provider, Detail: outbound.DescribeFailure(err), Err: err}
	}
	return &Error{Kind: Upstream, Provider: provider, Err: err}
}

// redact makes an upstream message safe to show: the key removed, one
// line, bounded.
func redact(msg, key string) string {
	if key != "" {
		msg = strings.ReplaceAll(msg, key, "[redacted]")
	}
	msg = strings.Join(strings.Fields(msg), " ")
	const maxLen = 300
	if len(msg) > maxLen {
		cut := maxLen
		for cut > 0 && !isRuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return msg
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// arguments returns a tool call's arguments as a JSON object: the empty
// object when the model sent none.
func arguments(s string) json.RawMessage {
	if strings.TrimSpace(s) == "" {
		return json.RawMessage("{}")
	}
	return json.RawMessage(s)
}

// streamOf yields evs, an answer that came whole, as a Stream.
func streamOf(evs []Event) Stream {
	return func(yield func(Event, error) bool) {
		for _, ev := range evs {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// chunkSource is an SDK's stream of chunks (openai-go's and
// anthropic-sdk-go's ssestream.Stream both are).
type chunkSource[C any] interface {
	Next() bool
	Current() C
	Err() error
	Close() error
}

// streamChunks turns a provider's chunk stream into a Stream. Chunks are read
// here until the first event (add returns the events a chunk completes), so
// that a failure to start (bad key, rate limit, unreachable, a model that
// says nothing) is the error of Provider.Stream itself; the rest are read as
// the caller ranges, on the caller's goroutine: no coroutine, so an open
// stream costs one goroutine less, and no switch per chunk. finish returns
// the events after the last chunk (tool calls, done); classify turns an SDK
// error into an *Error. gate, when the call was made with one, is waited
// on before each chunk is read (see sse_gate.go).
func streamChunks[C any](src chunkSource[C], gate *eventGate, add func(C) []Event, finish func() []Event, classify func(error) error) (Stream, error) {
	s := &chunkStream[C]{src: src, gate: gate, add: add, finish: finish, classify: classify}
	for len(s.pending) == 0 && !s.ended {
		s.gate.wait()
		if err := s.step(); err != nil {
			src.Close()
			return nil, err
		}
	}
	return s.events, nil
}

// chunkStream is the state of a stream of chunks being turned into events.
type chunkStream[C any] struct {
	src      chunkSource[C]
	gate     *eventGate
	add      func(C) []Event
	finish   func() []Event
	classify func(error) error
	pending  []Event // events read and not yet yielded
	ended    bool
	err      error // the stream's error, yielded after what is pending
}

// step reads one chunk, adding the events it completes to pending, or marks
// the end. It returns the stream's error, classified.
//
// It is not inlined so that the chunk, a large value, stays in its frame and
// out of the frame of events, under which the goroutine waits.
//
//go:noinline
func (s *chunkStream[C]) step() error {
	if s.src.Next() {
		s.pending = append(s.pending, s.add(s.src.Current())...)
		return nil
	}
	if err := s.src.Err(); err != nil {
		return s.classify(err)
	}
	s.ended = true
	return nil
}

// events is the Stream: it yields what is pending, then waits for and reads
// the next chunk, until the end.
func (s *chunkStream[C]) events(yield func(Event, error) bool) {
	defer s.src.Close()
	for {
		for i := 0; i < len(s.pending); i++ {
			ev := s.pending[i]
			if ev.Kind == EventText {
				// While the next chunk has arrived already, read it: then
				// whether more text follows is known (Event.More).
				for i == len(s.pending)-1 && !s.ended && s.err == nil && s.gate.ahead() {
					s.gate.wait()
					s.err = s.step()
				}
				ev.More = i < len(s.pending)-1 && s.pending[i+1].Kind == EventText
			}
			if !yield(ev, nil) {
				return
			}
		}
		s.pending = s.pending[:0]
		if s.err != nil {
			yield(Event{}, s.err)
			return
		}
		if s.ended {
			break
		}
		s.gate.wait()
		if err := s.step(); err != nil {
			yield(Event{}, err)
			return
		}
	}
	for _, ev := range s.finish() {
		if !yield(ev, nil) {
			return
		}
	}
}
