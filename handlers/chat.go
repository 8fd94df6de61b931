package handlers

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
)

// Chat request limits (spec, Limits).
const (
	MaxChatMessage   = 15000
	maxChatSessionID = 100
	maxAgentModel    = 100
	maxChatBody      = 256 << 10
	maxChatLocale    = 35
)

// chatRequest is the body of POST /chat/{slug}.
type chatRequest struct {
	Message      string         `json:"message"`
	SessionID    string         `json:"sessionId"`
	Segment      string         `json:"segment"`
	Stream       *bool          `json:"stream"`
	PageURL      string         `json:"pageUrl"`
	PageContext  map[string]any `json:"pageContext"`
	VisitorID    string         `json:"visitorId"`
	VisitorToken string         `json:"visitorToken"`
	AnonymousID  string         `json:"anonymousId"`
	CaptchaToken string         `json:"captchaToken"`
	Locale       string         `json:"locale"`
	WidgetKey    string         `json:"widgetKey"`
}

// chatReply is the JSON envelope, and the fields of the final SSE event.
type chatReply struct {
	Done             bool             `json:"done,omitempty"`
	Message          string           `json:"message"`
	MessageID        string           `json:"messageId,omitempty"`
	SessionID        string           `json:"sessionId"`
	ConversationID   string           `json:"conversationId"`
	MessageCount     int              `json:"messageCount"`
	VisitorType      string           `json:"visitorType"`
	AgentModel       *string          `json:"agentModel,omitempty"`
	ToolExecutions   []map[string]any `json:"toolExecutions"`
	ContactSubmitted bool             `json:"contactSubmitted"`
	ToolResults      map[string]bool  `json:"toolResults"`
	LLMSource        string           `json:"llmSource"`
	LLMProvider      string           `json:"llmProvider"`
	LLMModel         *string          `json:"llmModel,omitempty"`
	Status           string           `json:"status"`
}

// chatTenant runs the gates every public chat request passes first: the
// tenant exists, its plan has the widget, the origin is allowed and the
// widget key (when the tenant set one) matches.
func (h *Handler) chatTenant(c echo.Context, bodyWidgetKey string) (parley.Tenant, error) {
	t, err := h.DB.TenantBySlug(c.Request().Context(), c.Param("slug"))
	if err != nil {
		return t, err
	}
	return t, tenantGates(c, t, bodyWidgetKey)
}

// tenantGates are chatTenant's gates on a tenant read.
func tenantGates(c echo.Context, t parley.Tenant, bodyWidgetKey string) error {
	SetTenant(c, t)
	if !t.PlanInfo().Widget {
		return errNotActivated
	}
	hdr := c.Request().Header
	if !originAllowed(t.AllowedDomains, hdr.Get("Origin"), hdr.Get("Referer")) {
		return &parley.Error{Kind: parley.KindForbidden, Message: "Origin not allowed"}
	}
	return checkWidgetKey(t, hdr.Get("X-Widget-Key"), bodyWidgetKey)
}

// errNotActivated answers chat (and the test chat) for a tenant whose plan
// has no widget.
var errNotActivated = &parley.Error{Kind: parley.KindNotActivated, Code: "NOT_ACTIVATED",
	Message: "Chat is not activated for this tenant: its plan does not include the widget"}

// publicGates runs, in the spec's order, every gate a chat message or a
// form post passes before its body is used: the tenant exists, its plan has
// the widget, the origin is allowed, the widget key matches (tenantGates),
// the bot challenge, the per-address limit (count's verdict), then the
// segment (query, body, else the default). A refusal of the rate limit wins
// over a bad segment; one of an earlier gate wins over the rate limit's.
//
// kept: the tenant and segment are read through the chat's configuration
// cache (db.ChatTenantAndSegment), which serves a kept configuration
// without a round trip. The count's statement reads the tenant's current
// configuration version; a kept configuration found older is read afresh
// and its gates passed again (the request counted already), so a kept
// configuration never decides a request, whether it lets it in or refuses
// it. Otherwise (form posts) the tenant and segment are read afresh.
func (h *Handler) publicGates(c echo.Context, count *addressCount, widgetKey, captchaToken, segment string, kept bool) (parley.Tenant, parley.Segment, error) {
	ctx := c.Request().Context()
	slug := c.Param("slug")
	ref := strings.TrimSpace(NonBlankOr(c.QueryParam("segment"), segment))
	var t parley.Tenant
	var seg *parley.Segment
	var err error
	if kept {
		t, seg, kept, err = h.DB.ChatTenantAndSegment(ctx, slug, ref, false)
	} else {
		t, seg, err = h.DB.TenantAndSegment(ctx, slug, ref)
	}
	for {
		if err == nil {
			err = h.tenantAndAddressGates(c, count, t, widgetKey, captchaToken)
		}
		if !kept || count.current(t) {
			break
		}
		t, seg, _, err = h.DB.ChatTenantAndSegment(ctx, slug, ref, true)
		kept = false
	}
	if err != nil {
		return t, parley.Segment{}, err
	}
	switch {
	case seg == nil && ref == "":
		return t, parley.Segment{}, parley.Errorf(parley.KindNotFound, "Default segment not found")
	case seg == nil || !seg.IsActive && ref != "":
		return t, parley.Segment{}, unknownSegment(ref)
	}
	return t, *seg, nil
}

// tenantAndAddressGates are publicGates' gates on a tenant read: plan,
// origin, widget key, bot challenge, then the per-address limit.
func (h *Handler) tenantAndAddressGates(c echo.Context, count *addressCount, t parley.Tenant, widgetKey, captchaToken string) error {
	if err := tenantGates(c, t, widgetKey); err != nil {
		return err
	}
	if err := h.Captcha.Check(c.Request().Context(), h.Box, h.log(c), t, captchaToken, c.RealIP()); err != nil {
		return err
	}
	return count.verdict()
}

// Chat answers POST /chat/{slug}: the public agent surface. Browsers get the
// answer streamed as server-sent events; callers declaring X-Agent-Model get
// one JSON envelope (either can be asked for with stream). The handler
// decodes, passes the gates in the spec's order (publicGates: plan, origin,
// widget key, bot challenge, per-address limit, segment), and
// agent.Engine.Reply runs the turn once (the monthly limit is its first
// gate). The request counts against its address's chat limit whatever it
// is answered (addressCount).
//
// Chat's frame stays small (see agent.Engine.Reply): the input is built on
// the heap by a function that has returned before the model is called.
func (h *Handler) Chat(c echo.Context) error {
	count := h.countAddress(c, parley.ChatLimit)
	defer count.settle()
	if err := RequireJSON(c.Request()); err != nil {
		return err
	}
	req, err := decodeChatRequest(c)
	if err != nil {
		return err
	}
	in, stream, err := h.chatInput(c, count, req)
	if err != nil {
		return err
	}
	w := &chatWriter{c: c, in: in, stream: stream}
	out, err := h.Engine.Reply(c.Request().Context(), in, w.emit)
	return w.finish(out, err)
}

// chatInput passes the gates on the decoded request: the turn's input, and
// whether the answer is streamed.
func (h *Handler) chatInput(c echo.Context, count *addressCount, req *chatRequest) (*agent.TurnInput, bool, error) {
	t, seg, err := h.publicGates(c, count, req.WidgetKey, req.CaptchaToken, req.Segment, true)
	if err != nil {
		return nil, false, err
	}
	return h.turnInput(c, req, t, seg)
}

// turnInput is the turn's input from a request past the gates.
func (h *Handler) turnInput(c echo.Context, req *chatRequest, t parley.Tenant, seg parley.Segment) (*agent.TurnInput, bool, error) {
	ctx := c.Request().Context()
	var err error
	hdr := c.Request().Header
	in := &agent.TurnInput{Tenant: t, Segment: seg, CachedConfig: true, SessionID: req.SessionID, Message: req.Message,
		PageURL: req.PageURL, PageContext: req.PageContext, Channel: parley.ChannelWeb, VisitorType: parley.VisitorHuman,
		Metadata: parley.ConversationMetadata{UserAgent: parley.Clip(hdr.Get("User-Agent"), 500),
			Referrer: parley.Clip(hdr.Get("Referer"), 500), Page: parley.Clip(req.PageURL, 500)}}
	in.Locale = strings.TrimSpace(req.Locale)
	if in.Locale == "" {
		in.Locale = strings.TrimSpace(hdr.Get("X-Service-Locale"))
	}
	if utf8.RuneCountInString(in.Locale) > maxChatLocale {
		return nil, false, Invalid("locale too long (max %d chars)", maxChatLocale)
	}
	// The widget's anonymous id is checked whatever wins over it: a
	// malformed one is the caller's mistake, told rather than ignored.
	if req.AnonymousID != "" && !parley.ValidAnonymousID(req.AnonymousID) {
		return nil, false, parley.InvalidAnonymousID()
	}
	in.AnonymousID = req.AnonymousID
	// A valid visitor token wins over a visitor id; an invalid one is
	// refused. Then the spec's order: header X-Visitor-Id, body visitorId,
	// then the anonymous id (the widget's browser: an anonymous visitor).
	// A verified visitor is linked to the anonymous id's (Engine).
	if token := strings.TrimSpace(NonBlankOr(hdr.Get("X-Visitor-Token"), req.VisitorToken)); token != "" {
		v, err := h.verifiedChatVisitor(c, t, token)
		if err != nil {
			return nil, false, err
		}
		in.Visitor, in.Verified = &v, true
	} else if ref := strings.TrimSpace(NonBlankOr(hdr.Get("X-Visitor-Id"), req.VisitorID)); ref != "" {
		v, err := h.DB.ResolveChatVisitor(ctx, t.ID, ref)
		if err != nil {
			return nil, false, err
		}
		in.Visitor = &v
	} else if in.AnonymousID != "" {
		v, err := h.DB.ResolveAnonymousVisitor(ctx, t.ID, in.AnonymousID)
		if err != nil {
			return nil, false, err
		}
		in.Visitor = &v
	}
	if token := strings.TrimSpace(hdr.Get("X-Service-Admin-Token")); token != "" {
		if in.ExtraTools, err = h.adminChatTools(ctx, t, token); err != nil {
			return nil, false, err
		}
	}
	in.Logger = h.log(c)
	if in.LLM, err = h.callerLLM(ctx, hdr); err != nil {
		return nil, false, err
	}
	declared := strings.TrimSpace(hdr.Get("X-Agent-Model"))
	if declared != "" {
		in.Channel = parley.ChannelAgent
		in.VisitorType = parley.VisitorAgent
		in.AgentModel = truncatePtr(declared, maxAgentModel)
	} else if model, ok := agentPrefix(req.Message); ok {
		in.VisitorType = parley.VisitorAgent
		if model != "" {
			in.AgentModel = truncatePtr(model, maxAgentModel)
		}
	}
	stream := declared == ""
	if req.Stream != nil {
		stream = *req.Stream
	}
	return in, stream, nil
}

// decodeChatRequest reads and validates the body, with the spec's messages.
func decodeChatRequest(c echo.Context) (*chatRequest, error) {
	req := new(chatRequest)
	raw, err := DecodeObject(c, maxChatBody)
	if err != nil {
		return req, err
	}
	if errs := decodeFields(raw, req); len(errs) > 0 {
		return req, errs.Err()
	}
	return req, checkChatMessage(req.Message, req.SessionID)
}

// checkChatMessage applies chat's rules to a message and its session id,
// for chat and the dashboard's test chat alike.
func checkChatMessage(message, sessionID string) error {
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

// chatSegment picks the segment: query, then body, else the default. An
// unknown or inactive segment is the caller's mistake, a 400.
func (h *Handler) chatSegment(ctx context.Context, t parley.Tenant, query, body string) (parley.Segment, error) {
	ref := strings.TrimSpace(NonBlankOr(query, body))
	if ref == "" {
		return h.DB.DefaultSegment(ctx, t.ID)
	}
	s, err := h.DB.Segment(ctx, t.ID, ref)
	if parley.ErrorKind(err) == parley.KindNotFound || err == nil && !s.IsActive {
		return parley.Segment{}, unknownSegment(ref)
	}
	return s, err
}

// unknownSegment refuses a segment that is not one of the tenant's active
// segments: the caller's mistake, a 400.
func unknownSegment(ref string) error {
	return &parley.Error{Kind: parley.KindInvalid, Message: fmt.Sprintf("Unknown or inactive segment: %q", ref),
		Details: parley.FieldErrors{"segment": "no active segment of this tenant has this slug"}}
}

// chatWriter sends a turn's answer: as server-sent events, started once
// the turn is open, or as one JSON envelope.
type chatWriter struct {
	c      echo.Context
	in     *agent.TurnInput
	stream bool
	sse    *SSEWriter // set once the turn is open, when streaming
	ready  bool       // the turn is open: errors go in the answer
	texted bool       // a text was sent
}

func (w *chatWriter) emit(ev agent.Event) {
	switch {
	case ev.Kind == agent.EventReady:
		w.ready = true
		w.c.Response().Header().Set("X-AI-Generated", "true")
		if w.stream {
			w.sse = StartSSE(w.c)
		}
	case ev.Kind == agent.EventText && w.sse != nil:
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

// finish sends the envelope, the final SSE event or the JSON body, or the
// turn's error. The final event goes out with the response's end
// (sendAtEnd): the handler returns after finish.
func (w *chatWriter) finish(out *agent.TurnOutput, err error) error {
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
		if notStored {
			msg, code = "Internal error", "INTERNAL"
		}
		switch {
		case w.sse != nil:
			w.sse.SendAtEnd(map[string]string{"error": msg, "code": code})
			return nil
		case notStored:
			return err
		}
		return &parley.Error{Kind: parley.KindUpstream, Code: code, Message: msg}
	}
	res := out.Result
	reply := chatReply{
		Message: res.Text, MessageID: out.MessageID, SessionID: w.in.SessionID, ConversationID: out.ConversationID,
		MessageCount: out.MessageCount, VisitorType: w.in.VisitorType, AgentModel: w.in.AgentModel,
		ToolExecutions: res.ToolExecutions(), ContactSubmitted: res.ContactSubmitted(), ToolResults: res.ToolResults(),
		LLMSource: out.Source, LLMProvider: out.Provider, Status: strings.ToLower(out.Status),
	}
	if out.Source != "webhook" {
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
	var le *agent.LLMError
	if !errors.As(err, &le) {
		return "The assistant could not answer right now; try again shortly", "LLM_ERROR"
	}
	code := "LLM_ERROR"
	switch le.Kind {
	case agent.LLMAuth:
		code = "LLM_AUTH"
	case agent.LLMRateLimited:
		code = "LLM_RATE_LIMITED"
	case agent.LLMTimeout:
		code = "LLM_TIMEOUT"
	case agent.LLMUnreachable:
		code = "LLM_UNREACHABLE"
	case agent.LLMBadRequest:
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

// agentPrefix recognises a message that declares its author an agent with
// an "[AGENT:<model>]" prefix, returning the model named (possibly empty).
func agentPrefix(msg string) (string, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(msg), "[AGENT:")
	if !ok {
		return "", false
	}
	model, _, _ := strings.Cut(rest, "]")
	return strings.TrimSpace(model), true
}

// NonBlankOr is a unless it is blank, else b.
func NonBlankOr(a, b string) string {
	if strings.TrimSpace(a) != "" {
		return a
	}
	return b
}

func nonEmptyPtr(s string) *string {
	if s = strings.TrimSpace(s); s == "" {
		return nil
	}
	return &s
}

func truncatePtr(s string, n int) *string {
	s = parley.Clip(s, n)
	return &s
}
