package handlers

// A chat turn's answer, shared by the surfaces that run one over HTTP: the
// public chat, the dashboard's test chat and the voice channel (its events
// stream): the turn's limits and gates, its envelope, and the server-sent
// events it streams.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/agent"
	"github.com/parley/parley/agent/outbound/llm"
	"github.com/parley/parley/agent/tools"
	"github.com/parley/parley/db"
)

// Chat request limits (spec, Limits).
const (
	MaxChatMessage   = 15000
	maxChatSessionID = 100
	MaxAgentModel    = 100
	MaxChatBody      = 256 << 10
	MaxChatLocale    = 35
)

// ChatReply is the JSON envelope, and the fields of the final SSE event.
type ChatReply struct {
	Done             bool                      `json:"done,omitempty"`
	Message          string                    `json:"message"`
	MessageID        string                    `json:"messageId,omitempty"`
	SessionID        string                    `json:"sessionId"`
	ConversationID   string                    `json:"conversationId"`
	MessageCount     int                       `json:"messageCount"`
	VisitorType      string                    `json:"visitorType"`
	AgentModel       *string                   `json:"agentModel,omitempty"`
	ToolExecutions   []tools.ExecutionEnvelope `json:"toolExecutions"`
	ContactSubmitted bool                      `json:"contactSubmitted"`
	ToolResults      map[string]bool           `json:"toolResults"`
	LLMSource        string                    `json:"llmSource,omitempty"` // absent when no model was called
	LLMProvider      string                    `json:"llmProvider,omitempty"`
	LLMModel         *string                   `json:"llmModel,omitempty"`
	Status           string                    `json:"status"`
	// Assignee is the person who holds the conversation (status human),
	// else null.
	Assignee *string `json:"assignee"`
	// StreamToken opens the session's stream (GET /chat/{slug}/stream):
	// public chat only.
	StreamToken string `json:"streamToken,omitempty"`
	// Sources are the knowledge-base entries the answer cites, shown
	// under it (ChatSources).
	Sources []ChatSource `json:"sources"`
	// Replayed is set when the message was sent again with its
	// Idempotency-Key after it was answered: this is the stored answer.
	Replayed bool `json:"replayed,omitempty"`
}

// ChatSource is a knowledge-base entry an answer cites, as the visitor may
// see it: its title and the address it came from.
type ChatSource struct {
	Title string `json:"title"`
	// URL is the entry's sourceUrl; absent in the test chat for an entry
	// without one.
	URL string `json:"url,omitempty"`
}

// ChatSources are the entries of knowledge the answer cites that a visitor
// is shown: those with a source address, when the tenant shows sources.
// The owner's test chat shows every entry cited.
func ChatSources(t parley.Tenant, knowledge []parley.KnowledgeRef, test bool) []ChatSource {
	out := []ChatSource{}
	for _, k := range knowledge {
		if k.Cited && (test || (t.ShowSources && k.SourceURL != "")) {
			out = append(out, ChatSource{Title: k.Title, URL: k.SourceURL})
		}
	}
	return out
}

// chatStreamError is the last event of a chat stream that failed.
type chatStreamError struct {
	Error string `json:"error"`
	Code  string `json:"code"`
}

// ErrNotActivated answers chat (and the test chat) for a tenant whose plan
// has no widget.
var ErrNotActivated = &parley.Error{Kind: parley.KindNotActivated, Code: "NOT_ACTIVATED",
	Message: "Chat is not activated for this tenant: its plan does not include the widget"}

// CheckChatMessage applies chat's rules to a message and its session id,
// for chat and the dashboard's test chat alike.
func CheckChatMessage(message, sessionID string) error {
	switch {
	case strings.TrimSpace(message) == "" || strings.TrimSpace(sessionID) == "":
		return Invalid("message and sessionId are required")
	case utf8.RuneCountInString(message) > MaxChatMessage:
		return Invalid("Message too long (max %d chars)", MaxChatMessage)
	case utf8.RuneCountInString(sessionID) > maxChatSessionID:
		return Invalid("sessionId too long (max %d chars)", maxChatSessionID)
	}
	return nil
}

// ChatSegment picks the segment of t a chat names: query, then body, else
// the default. An unknown or inactive segment is the caller's mistake, a
// 400.
func ChatSegment(ctx context.Context, store *db.DB, t parley.Tenant, query, body string) (parley.Segment, error) {
	ref := strings.TrimSpace(NonBlankOr(query, body))
	if ref == "" {
		return store.DefaultSegment(ctx, t.ID)
	}
	s, err := store.Segment(ctx, t.ID, ref)
	if parley.ErrorKind(err) == parley.KindNotFound || err == nil && !s.IsActive {
		return parley.Segment{}, UnknownSegment(ref)
	}
	return s, err
}

// UnknownSegment refuses a segment that is not one of the tenant's active
// segments: the caller's mistake, a 400.
func UnknownSegment(ref string) error {
	return &parley.Error{Kind: parley.KindInvalid, Message: fmt.Sprintf("Unknown or inactive segment: %q", ref),
		Details: parley.FieldErrors{"segment": "no active segment of this tenant has this slug"}}
}

// ChatWriter sends a turn's answer: as server-sent events, started once
// the turn is open, or as one JSON envelope.
type ChatWriter struct {
	// StreamToken goes in the answer's streamToken (public chat sets it).
	StreamToken string

	c      echo.Context
	in     *agent.TurnInput
	stream bool
	sse    *SSEWriter // set once the turn is open, when streaming
	ready  bool       // the turn is open: errors go in the answer
	texted bool       // a text was sent
}

// NewChatWriter is the writer of in's answer to c's request: an event
// stream when stream, else one JSON envelope.
func NewChatWriter(c echo.Context, in *agent.TurnInput, stream bool) *ChatWriter {
	return &ChatWriter{c: c, in: in, stream: stream}
}

// Emit is the engine's event sink (agent.Engine.Reply's emit).
func (w *ChatWriter) Emit(ev llm.Event) {
	switch {
	case ev.Kind == agent.EventReplayed:
		w.c.Response().Header().Set(IdempotencyReplayedHeader, "true")
	case ev.Kind == agent.EventReady:
		w.ready = true
		w.c.Response().Header().Set("X-AI-Generated", "true")
		if w.stream {
			w.sse = StartSSE(w.c)
		}
	case ev.Kind == llm.EventText && w.sse != nil:
		// The first text goes out at once: the visitor sees the answer
		// start without waiting for the text that came with it. Later ones
		// go out at most every textFlushEvery (sendText).
		flush := flushPaced
		switch {
		case !w.texted:
			flush = flushNow
		case ev.More:
			flush = flushLater
		}
		w.sse.sendText(ev.Text, flush)
		w.texted = true
	}
}

// Finish sends the envelope, the final SSE event or the JSON body, or the
// turn's error. The final event goes out with the response's end
// (sendAtEnd): the handler returns after Finish.
func (w *ChatWriter) Finish(out *agent.TurnOutput, err error) error {
	if w.sse != nil {
		defer w.sse.close() // no paced flush after the handler
	}
	ctx := w.c.Request().Context()
	clientGone := ctx.Err() != nil || errors.Is(err, context.Canceled)
	if !w.ready {
		if clientGone {
			return nil // the caller left while waiting for the session: nothing was stored
		}
		return err
	}
	if clientGone {
		return nil // nobody is left to read an answer; what was said is stored
	}
	if err != nil {
		notStored := errors.Is(err, agent.ErrNotStored)
		msg, code := ChatLLMError(err)
		var modelErr *llm.Error
		switch {
		case errors.As(err, &modelErr): // the model's, even when it could not be reached
		case db.Unreachable(err):
			msg, code = UnreachableMessage, UnreachableCode
		case notStored:
			msg, code = "Internal error", "INTERNAL"
		}
		switch {
		case w.sse != nil:
			w.sse.SendAtEnd(chatStreamError{Error: msg, Code: code})
			return nil
		case notStored, code == UnreachableCode:
			return err // web's error handler: 500, or 503 with Retry-After
		}
		return &parley.Error{Kind: parley.KindUpstream, Code: code, Message: msg}
	}
	res := out.Result
	reply := ChatReply{
		Message: res.Text, MessageID: out.MessageID, SessionID: w.in.SessionID, ConversationID: out.ConversationID,
		MessageCount: out.MessageCount, VisitorType: w.in.VisitorType, AgentModel: w.in.AgentModel,
		ToolExecutions: res.ToolExecutions(), ContactSubmitted: res.ContactSubmitted(), ToolResults: res.ToolResults(),
		LLMSource: out.Source, LLMProvider: out.Provider, Status: strings.ToLower(out.Status), StreamToken: w.StreamToken,
		Sources: ChatSources(w.in.Tenant, out.Knowledge, w.in.Test), Replayed: out.Replayed,
	}
	if out.Status == parley.StatusHuman {
		reply.Assignee = out.Assignee
	}
	if out.Source != "webhook" && out.Source != "" { // absent when no model was called
		model := out.Model // absent, not empty, when the tenant's endpoint answered
		reply.LLMModel = &model
	}
	if w.sse != nil {
		reply.Done = true
		if w.in.Test {
			w.sse.SendAtEnd(testChatDoneOf(reply, out))
			return nil
		}
		w.sse.SendAtEnd(reply)
		return nil
	}
	return w.c.JSON(http.StatusOK, reply)
}

// ChatLLMError turns a failed model call into a message safe to show and a code.
func ChatLLMError(err error) (string, string) {
	var le *llm.Error
	if !errors.As(err, &le) {
		return "The assistant could not answer right now; try again shortly", "LLM_ERROR"
	}
	code := "LLM_ERROR"
	switch le.Kind {
	case llm.Auth:
		code = "LLM_AUTH"
	case llm.RateLimited:
		code = "LLM_RATE_LIMITED"
	case llm.Timeout:
		code = "LLM_TIMEOUT"
	case llm.Unreachable:
		code = "LLM_UNREACHABLE"
	case llm.BadRequest:
		code = "LLM_BAD_REQUEST"
	}
	return le.Error(), code
}

// textFlushEvery is how often, at most, the answer's texts after its first
// are flushed to the visitor: a fast model streams a chunk every few
// milliseconds, each a write to the network of its own when flushed as it
// comes (a fifth of the server's CPU at 50 chunks an answer, BENCHMARKS.md),
// while a browser paints a frame every 16 ms. A model slower than this
// has each chunk flushed as it comes, as before.
const textFlushEvery = 15 * time.Millisecond

// How sendText flushes its event.
const (
	flushNow   = iota // at once
	flushPaced        // at once when the last flush is textFlushEvery old, else when it will be
	flushLater        // with the next event flushed: more text has arrived already
)

// SSEWriter writes server-sent events: Send flushes each at once; sendText
// may leave the answer's texts for a paced flush.
type SSEWriter struct {
	c   echo.Context
	buf []byte // the event being written, reused
	// mu guards the response between the handler and a paced flush, which
	// runs on a timer's goroutine.
	mu        sync.Mutex
	lastFlush time.Time
	unflushed bool        // an event waits for a flush
	paced     *time.Timer // the paced flush armed, nil when none
	closed    bool        // the handler returned: nothing more is written
	// now and afterFunc are the clock (tests set their own).
	now       func() time.Time
	afterFunc func(time.Duration, func()) *time.Timer
}

// StartSSE answers the request with an event stream, unbuffered by any
// proxy.
func StartSSE(c echo.Context) *SSEWriter {
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "text/event-stream")
	h.Set(echo.HeaderCacheControl, "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	c.Response().WriteHeader(http.StatusOK)
	c.Response().Flush()
	return &SSEWriter{c: c}
}

// Send writes one `data: <json>` event and flushes it with any text left
// for a paced flush; a write to a visitor who left is ignored, the request
// context tells the rest.
func (s *SSEWriter) Send(v any) { s.sendJSON(v, flushNow) }

// SendAtEnd writes one of the stream's last events, as send would, but
// leaves it for the response's end, which the handler reaches next:
// net/http then writes it with whatever waits and the end of the chunked
// body, in one write to the network instead of two or more.
func (s *SSEWriter) SendAtEnd(v any) { s.sendJSON(v, flushLater) }

func (s *SSEWriter) sendJSON(v any, flush int) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writeEvent(append(append(append(s.buf[:0], "data: "...), b...), "\n\n"...), flush)
}

// sendText writes a piece of the answer, `data: {"text":"..."}`, as send
// would, with no map to marshal and the text quoted into the event's buffer
// (appendJSONString): it runs once per chunk of the model.
// flush says when the event goes out (flushNow, flushPaced, flushLater).
func (s *SSEWriter) sendText(text string, flush int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writeEvent(append(appendJSONString(append(s.buf[:0], `data: {"text":`...), text), "}\n\n"...), flush)
}

// writeEvent writes event and flushes as asked; s.mu is held.
func (s *SSEWriter) writeEvent(event []byte, flush int) {
	if s.closed {
		return
	}
	s.buf = event
	w := s.c.Response()
	if _, err := w.Write(event); err != nil {
		return
	}
	s.unflushed = true
	now := s.clock()
	wait := textFlushEvery - now.Sub(s.lastFlush)
	switch {
	case flush == flushLater:
	case flush == flushNow || wait <= 0:
		s.flush(now)
	case s.paced == nil:
		after := s.afterFunc
		if after == nil {
			after = time.AfterFunc
		}
		s.paced = after(wait, s.pacedFlush)
	}
}

// flush sends what was written; s.mu is held.
func (s *SSEWriter) flush(now time.Time) {
	if s.paced != nil {
		s.paced.Stop()
		s.paced = nil
	}
	s.c.Response().Flush()
	s.unflushed, s.lastFlush = false, now
}

// pacedFlush is the paced flush, on its timer's goroutine.
func (s *SSEWriter) pacedFlush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.paced = nil
	if s.unflushed && !s.closed {
		s.flush(s.clock())
	}
}

// close stops the paced flush: the handler is returning. What was written
// and not flushed goes out with the response's end.
func (s *SSEWriter) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.paced != nil {
		s.paced.Stop()
		s.paced = nil
	}
	s.closed = true
}

func (s *SSEWriter) clock() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now()
}

// NonBlankOr is a unless it is blank, else b.
func NonBlankOr(a, b string) string {
	if strings.TrimSpace(a) != "" {
		return a
	}
	return b
}

func NonEmptyPtr(s string) *string {
	if s = strings.TrimSpace(s); s == "" {
		return nil
	}
	return &s
}

// testChatDone is the final SSE event of a test chat: chat's done event with
// what the bot used to answer.
type testChatDone struct {
	ChatReply
	// Knowledge is the entries the prompt held, as the conversation API
	// gives them (those the answer cited marked).
	Knowledge []parley.KnowledgeRef `json:"knowledge"`
	Tools     []testChatTool        `json:"tools"`
}

// testChatTool is a tool run of the turn as the owner may see it: unlike
// chat's toolExecutions, with the input the model wrote and the result it
// was given.
type testChatTool struct {
	Name    string          `json:"name"`
	Type    string          `json:"type"`
	Input   json.RawMessage `json:"input"`
	Result  map[string]any  `json:"result"`
	Summary string          `json:"summary"`
	Success bool            `json:"success"`
}

// testChatDoneOf adds to chat's done event what the bot used.
func testChatDoneOf(reply ChatReply, out *agent.TurnOutput) testChatDone {
	d := testChatDone{ChatReply: reply, Knowledge: out.Knowledge, Tools: []testChatTool{}}
	if d.Knowledge == nil {
		d.Knowledge = []parley.KnowledgeRef{}
	}
	for _, ex := range out.Result.Executions {
		input := ex.Input
		if !json.Valid(input) {
			input, _ = json.Marshal(string(ex.Input))
		}
		d.Tools = append(d.Tools, testChatTool{Name: ex.ToolName, Type: ex.ToolType, Input: input, Result: ex.Result,
			Summary: ex.Summary, Success: ex.Success})
	}
	return d
}
