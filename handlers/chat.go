package handlers

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/agent"
	"github.com/parley/parley/db"
)

// Chat request limits (spec, Limits).
const (
	maxChatMessage    = 15000
	maxChatSessionID  = 100
	maxAgentModel     = 100
	maxChatBody       = 256 << 10
	maxChatLocale     = 35
	chatHistoryTurns  = 20
	chatMaxIterations = 4
	// chatStoreTimeout bounds the writes after the model answered; they run
	// even when the visitor went away, so that what was said is kept.
	chatStoreTimeout = 10 * time.Second
	// chatTurnTimeout bounds a turn's model calls and tools, as the
	// caller's own model's client is bounded (callerLLMTimeout).
	chatTurnTimeout = 5 * time.Minute
	// escalationTimeout bounds an escalation webhook call.
	escalationTimeout = 5 * time.Second
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

// chatTurn is what the gates and the first transaction settled for one message.
type chatTurn struct {
	tenant      parley.Tenant
	segment     parley.Segment
	visitor     *parley.Visitor
	conv        parley.Conversation
	created     bool           // this message started the conversation
	userMessage parley.Message // the message as stored
	lease       *sessionLease
	req         chatRequest
	locale      string
	channel     string
	visitorType string
	agentModel  *string
	metadata    parley.ConversationMetadata
	// verified: a visitor token proved who the visitor is. Under a visitor
	// auth mode an unverified visitor (an id alone proves nothing) gets no
	// memory: none in the prompt, no REMEMBER_FACT.
	verified bool
	// llm is the caller's own model (X-LLM-Key), nil for the managed one.
	llm agent.Provider
	// stream: the answer goes out as server-sent events, else as one envelope.
	stream bool
	// pre is the prompt data, read while the turn waits for its lease.
	pre *promptData
}

// memoryAllowed reports whether the turn may read and write the visitor's memory.
func (turn *chatTurn) memoryAllowed() bool {
	if turn.visitor == nil {
		return false
	}
	mode := turn.tenant.VisitorAuthMode
	return turn.verified || mode == nil || *mode == ""
}

// chatTenant runs the gates every public chat request passes first: the
// tenant exists, its plan has the widget, the origin is allowed and the
// widget key (when the tenant set one) matches.
func (h *Handler) chatTenant(c echo.Context, bodyWidgetKey string) (parley.Tenant, error) {
	t, err := h.DB.TenantBySlug(c.Request().Context(), c.Param("slug"))
	if err != nil {
		return t, err
	}
	if !t.PlanInfo().Widget {
		return t, &parley.Error{Kind: parley.KindNotActivated, Code: "NOT_ACTIVATED",
			Message: "Chat is not activated for this tenant: its plan does not include the widget"}
	}
	hdr := c.Request().Header
	if !originAllowed(t.AllowedDomains, hdr.Get("Origin"), hdr.Get("Referer")) {
		return t, &parley.Error{Kind: parley.KindForbidden, Message: "Origin not allowed"}
	}
	return t, checkWidgetKey(t, hdr.Get("X-Widget-Key"), bodyWidgetKey)
}

// limitChatRate counts the request against the client address's limits and
// sets Retry-After when it is refused.
func (h *Handler) limitChatRate(c echo.Context) error {
	err := chatRateLimit(c.Request().Context(), h.DB, c.RealIP(), h.now())
	if secs, ok := retryAfterSeconds(err); ok {
		c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
	}
	return err
}

// publicGates runs, in order, every gate a chat message or a form post
// passes before its body is used: chatTenant's, then the bot challenge, then
// the per-address rate limit (messages and form posts share its counters),
// then the segment (query, body, else the default). The segment is read
// while the rate limit is counted, which saves a round trip; a refusal of
// the rate limit still wins over a bad segment.
func (h *Handler) publicGates(c echo.Context, widgetKey, captchaToken, segment string) (parley.Tenant, parley.Segment, error) {
	t, err := h.chatTenant(c, widgetKey)
	if err != nil {
		return t, parley.Segment{}, err
	}
	ctx := c.Request().Context()
	if err := checkCaptchaToken(ctx, h.Captcha, h.Box, h.Logger, t, captchaToken, c.RealIP()); err != nil {
		return t, parley.Segment{}, err
	}
	var seg parley.Segment
	var segErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		seg, segErr = h.chatSegment(ctx, t, c.QueryParam("segment"), segment)
	}()
	rateErr := h.limitChatRate(c)
	<-done
	if rateErr != nil {
		return t, parley.Segment{}, rateErr
	}
	return t, seg, segErr
}

// Chat answers POST /chat/{slug}: the public agent surface. Browsers get the
// answer streamed as server-sent events; callers declaring X-Agent-Model get
// one JSON envelope (either can be asked for with stream). The visitor's
// message is stored before the model is called, and the answer, tool runs
// and submissions after it, each in a short transaction: no database lock or
// connection is held while the model streams.
//
// Chat only sequences the steps. The gates and the prompt are worked out in
// functions that have returned before the model is called, so the frames
// under which the goroutine waits on the model are small: an open stream's
// goroutine stack can then shrink to 16 KiB instead of 64 KiB (BENCHMARKS.md,
// open streams). Keep large locals out of Chat, chatCall.run and RunTurn.
func (h *Handler) Chat(c echo.Context) error {
	turn, err := h.openChatTurn(c)
	if err != nil || turn == nil {
		return err
	}
	defer turn.close()
	call, err := h.prepareChatCall(c, turn)
	if err != nil {
		return err
	}
	call.run(c.Request().Context(), cmp.Or(h.TurnTimeout, chatTurnTimeout))
	return h.answerChat(c, turn, call)
}

// openChatTurn decodes the request, passes the gates, takes the session's
// lease and stores the visitor's message. The turn it returns holds the
// lease and the prompt reads under way: the caller closes it. It returns no
// turn and no error when the caller left while waiting for the session.
func (h *Handler) openChatTurn(c echo.Context) (*chatTurn, error) {
	ctx := c.Request().Context()
	req, err := decodeChatRequest(c)
	if err != nil {
		return nil, err
	}
	t, seg, err := h.publicGates(c, req.WidgetKey, req.CaptchaToken, req.Segment)
	if err != nil {
		return nil, err
	}
	hdr := c.Request().Header

	turn := &chatTurn{tenant: t, segment: seg, req: req, channel: parley.ChannelWeb, visitorType: parley.VisitorHuman,
		metadata: parley.ConversationMetadata{UserAgent: truncate(hdr.Get("User-Agent"), 500),
			Referrer: truncate(hdr.Get("Referer"), 500), Page: truncate(req.PageURL, 500)}}
	turn.locale = strings.TrimSpace(req.Locale)
	if turn.locale == "" {
		turn.locale = strings.TrimSpace(hdr.Get("X-Service-Locale"))
	}
	if utf8.RuneCountInString(turn.locale) > maxChatLocale {
		return nil, invalid("locale too long (max %d chars)", maxChatLocale)
	}
	// A valid visitor token wins over a visitor id; an invalid one is refused.
	if token := strings.TrimSpace(cmpOr(hdr.Get("X-Visitor-Token"), req.VisitorToken)); token != "" {
		v, err := h.verifiedChatVisitor(ctx, t, token)
		if err != nil {
			return nil, err
		}
		turn.visitor, turn.verified = &v, true
	} else if ref := strings.TrimSpace(cmpOr(hdr.Get("X-Visitor-Id"), req.VisitorID)); ref != "" {
		v, err := h.DB.ResolveChatVisitor(ctx, t.ID, ref)
		if err != nil {
			return nil, err
		}
		turn.visitor = &v
	}
	if turn.llm, err = h.callerLLM(ctx, hdr); err != nil {
		return nil, err
	}
	declared := strings.TrimSpace(hdr.Get("X-Agent-Model"))
	if declared != "" {
		turn.channel = parley.ChannelAgent
		turn.visitorType = parley.VisitorAgent
		turn.agentModel = truncatePtr(declared, maxAgentModel)
	} else if model, ok := agentPrefix(req.Message); ok {
		turn.visitorType = parley.VisitorAgent
		if model != "" {
			turn.agentModel = truncatePtr(model, maxAgentModel)
		}
	}
	turn.stream = declared == ""
	if req.Stream != nil {
		turn.stream = *req.Stream
	}

	// One turn of a session at a time: the lease is taken before the user
	// message is stored and given back once the answer is, even when the
	// visitor leaves or the model fails.
	turn.pre = h.prefetchPrompt(ctx, turn)
	lease, err := h.acquireSessionLease(ctx, t.ID, req.SessionID)
	if err != nil {
		turn.close() // no read outlives the request
		if ctx.Err() != nil {
			return nil, nil // the caller left while waiting: nothing was stored
		}
		return nil, err
	}
	turn.lease = lease
	if err := h.startChatTurn(ctx, turn); err != nil {
		turn.close()
		return nil, err
	}
	return turn, nil
}

// close waits for the prompt reads and gives the session's lease back.
func (turn *chatTurn) close() {
	if turn.pre != nil {
		_ = turn.pre.wait()
	}
	if turn.lease != nil {
		turn.lease.release()
	}
}

// decodeChatRequest reads and validates the body, with the spec's messages.
func decodeChatRequest(c echo.Context) (chatRequest, error) {
	var req chatRequest
	raw, err := decodeObject(c, maxChatBody)
	if err != nil {
		return req, err
	}
	if errs := decodeFields(raw, &req); len(errs) > 0 {
		return req, errs.Err()
	}
	if strings.TrimSpace(req.Message) == "" || strings.TrimSpace(req.SessionID) == "" {
		return req, invalid("message and sessionId are required")
	}
	if utf8.RuneCountInString(req.Message) > maxChatMessage {
		return req, invalid("Message too long (max %d chars)", maxChatMessage)
	}
	if utf8.RuneCountInString(req.SessionID) > maxChatSessionID {
		return req, invalid("sessionId too long (max %d chars)", maxChatSessionID)
	}
	return req, nil
}

// chatSegment picks the segment: query, then body, else the default. An
// unknown or inactive segment is the caller's mistake, a 400.
func (h *Handler) chatSegment(ctx context.Context, t parley.Tenant, query, body string) (parley.Segment, error) {
	ref := strings.TrimSpace(cmpOr(query, body))
	if ref == "" {
		return h.DB.DefaultSegment(ctx, t.ID)
	}
	s, err := h.DB.Segment(ctx, t.ID, ref)
	if parley.ErrorKind(err) == parley.KindNotFound || err == nil && !s.IsActive {
		return parley.Segment{}, &parley.Error{Kind: parley.KindInvalid, Message: fmt.Sprintf("Unknown or inactive segment: %q", ref),
			Details: parley.FieldErrors{"segment": "no active segment of this tenant has this slug"}}
	}
	return s, err
}

// startChatTurn stores the visitor's message in the session's conversation,
// starting it (within the monthly limit) when it is the first.
func (h *Handler) startChatTurn(ctx context.Context, turn *chatTurn) error {
	t := turn.tenant
	start := db.ConversationStart{
		TenantID: t.ID, SessionID: turn.req.SessionID, Limit: t.ConversationsLimit(),
		SegmentID: &turn.segment.ID, Channel: turn.channel, VisitorType: turn.visitorType,
		AgentModel: turn.agentModel, PageURL: nonEmptyPtr(turn.req.PageURL), Locale: nonEmptyPtr(turn.locale),
		Metadata: turn.metadata,
	}
	if turn.visitor != nil {
		start.VisitorID = &turn.visitor.ID
	}
	conv, msg, created, err := h.DB.OpenTurnFound(ctx, start, turn.req.Message, turn.lease.state.Conversation)
	if err != nil {
		return err
	}
	turn.conv, turn.userMessage, turn.created = conv, msg, created
	return nil
}

// chatCall is one model call of a turn, with what it needs while the model
// streams: kept small and on the heap (see Chat).
type chatCall struct {
	provider agent.Provider
	source   string // llmSource: managed or webhook
	req      agent.Request
	registry *agent.ToolRegistry
	history  []parley.Turn // the turns the model was given, the visitor's message last
	sse      *sseWriter
	res      agent.TurnResult // what the model said and did
	err      error            // the model call's failure
}

// prepareChatCall builds the prompt and the tool registry from the turn's
// prompt data and history, picks the model, and starts the event stream
// when the answer is streamed.
func (h *Handler) prepareChatCall(c echo.Context, turn *chatTurn) (*chatCall, error) {
	ctx := c.Request().Context()
	t, seg, pre := turn.tenant, turn.segment, turn.pre
	if err := pre.wait(); err != nil {
		return nil, err
	}
	corpus, hasSummaries, memory, tools := pre.corpus, pre.hasSummaries, pre.memory, pre.tools
	prompt := agent.BuildPrompt(agent.PromptInput{
		Tenant: t, Segment: seg, Corpus: corpus, HasSummaries: hasSummaries, Memory: memory,
		VisitorVerified: turn.verified, VisitorContext: pre.visitorContext,
		PageContext: turn.req.PageContext, PageURL: turn.req.PageURL, Locale: turn.locale,
		Now: h.now(), Logger: h.Logger,
	})
	tt := agent.Enrich(tools, agent.EnrichFacts{SegmentID: seg.ID, MemoryAllowed: turn.memoryAllowed(),
		HasProducts: pre.hasProducts, HasSummaries: prompt.ExploreCorpus})
	call := &chatCall{registry: agent.NewToolRegistry(tt.Tools, h.chatToolDeps(turn, tt.Explore))}
	if skipped := append(tt.Skipped, call.registry.Skipped...); len(skipped) > 0 {
		h.Logger.Debug("chat tools not offered", "tenant", t.Slug, "tools", skipped)
	}
	// The history is the turns read with the lease (none for a new
	// conversation) and the message just stored.
	switch {
	case turn.created:
	case turn.lease.state.Conversation != nil:
		call.history = append(call.history, turn.lease.state.Turns...)
	default: // another start of the session won a race: read what it has
		turns, err := h.DB.RecentTurns(ctx, t.ID, turn.conv.ID, chatHistoryTurns)
		if err != nil {
			return nil, err
		}
		call.history = turns[:max(len(turns)-1, 0)]
	}
	call.history = append(call.history, parley.Turn{Role: "user", Content: turn.userMessage.Content, Timestamp: turn.userMessage.CreatedAt})
	call.req = agent.Request{System: prompt.System}
	for _, m := range call.history {
		call.req.Messages = append(call.req.Messages, agent.Message{Role: agent.Role(m.Role), Content: m.Content})
	}
	for _, e := range corpus {
		call.req.Passages = append(call.req.Passages, agent.Passage{Title: e.Title, Content: e.Content})
	}
	// A caller's own model wins; else the tenant's reply endpoint; else the managed model.
	call.provider, call.source = h.LLM, "managed"
	if turn.llm != nil {
		call.provider = turn.llm
	} else if hook, err := h.webhookLLM(turn); err != nil {
		return nil, err
	} else if hook != nil {
		call.provider, call.source = hook, "webhook"
	}
	if call.provider == nil {
		call.provider = agent.NewLocal()
	}

	c.Response().Header().Set("X-AI-Generated", "true")
	if turn.stream {
		call.sse = startSSE(c)
	}
	return call, nil
}

// run calls the model and runs its tools, streaming the text as it comes
// when the answer is streamed. A model that stays silent, or a turn that
// takes longer than timeout, ends with an LLM_TIMEOUT error, never a
// stream left hanging.
func (call *chatCall) run(ctx context.Context, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	call.res, call.err = agent.RunTurn(ctx, call.provider, call.req, call.registry, chatMaxIterations, call.emit)
}

func (call *chatCall) emit(ev agent.Event) {
	if call.sse != nil && ev.Kind == agent.EventText {
		call.sse.send(map[string]string{"text": ev.Text})
	}
}

// answerChat stores what the model said and did, and sends the envelope:
// the final SSE event, or the JSON body.
func (h *Handler) answerChat(c echo.Context, turn *chatTurn, call *chatCall) error {
	ctx := c.Request().Context()
	t, provider, sse, res, runErr := turn.tenant, call.provider, call.sse, call.res, call.err
	// What was said is stored even when the visitor went away or the model
	// failed half-way.
	storeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), chatStoreTimeout)
	defer cancel()
	msgID, storeErr := h.finishChatTurn(storeCtx, turn, res, call.history)
	if storeErr != nil {
		h.Logger.Error("storing chat turn", "tenant", t.Slug, "conversation", turn.conv.ID, "err", storeErr)
	}
	clientGone := errors.Is(runErr, context.Canceled) || ctx.Err() != nil
	if runErr != nil && !clientGone {
		h.Logger.Warn("chat model call failed", "tenant", t.Slug, "provider", provider.Name(), "err", runErr)
	}
	for _, ex := range res.Executions {
		if ex.Err != nil {
			h.Logger.Warn("chat tool failed", "tenant", t.Slug, "tool", ex.ToolName, "err", ex.Err)
		}
	}

	if sse != nil {
		switch {
		case clientGone:
			return nil
		case runErr != nil:
			msg, code := chatLLMError(runErr)
			sse.send(map[string]string{"error": msg, "code": code})
			return nil
		case storeErr != nil:
			sse.send(map[string]string{"error": "Internal error", "code": "INTERNAL"})
			return nil
		}
	} else {
		switch {
		case clientGone:
			return nil // nobody is left to read an answer; what was said is stored
		case runErr != nil:
			msg, code := chatLLMError(runErr)
			return &parley.Error{Kind: parley.KindUpstream, Code: code, Message: msg}
		case storeErr != nil:
			return storeErr
		}
	}

	// The turn held the session: the conversation is as it left it.
	conv := turn.conv
	if msgID != "" {
		conv.MessageCount++
	}
	if res.Escalated() {
		conv.Status = parley.StatusEscalated
	}
	reply := chatReply{
		Message: res.Text, MessageID: msgID, SessionID: turn.req.SessionID, ConversationID: conv.ID,
		MessageCount: conv.MessageCount, VisitorType: turn.visitorType, AgentModel: turn.agentModel,
		ToolExecutions: res.ToolExecutions(), ContactSubmitted: res.ContactSubmitted(), ToolResults: res.ToolResults(),
		LLMSource: call.source, LLMProvider: provider.Name(), Status: strings.ToLower(conv.Status),
	}
	if call.source != "webhook" {
		model := provider.Model() // absent, not empty, when the tenant's endpoint answered
		reply.LLMModel = &model
	}
	if sse != nil {
		reply.Done = true
		sse.send(reply)
		return nil
	}
	return c.JSON(http.StatusOK, reply)
}

// chatToolDeps binds the tool executors to this tenant, segment, visitor and conversation.
func (h *Handler) chatToolDeps(turn *chatTurn, explore bool) agent.ToolDeps {
	t := turn.tenant
	deps := agent.ToolDeps{
		Products: chatProducts{db: h.DB, tenantID: t.ID},
		EscalationContext: map[string]any{
			"conversationId": turn.conv.ID, "sessionId": turn.req.SessionID, "pageUrl": turn.req.PageURL,
		},
		Now: h.Now,
		EscalatorFor: func(tool parley.Tool) agent.Escalator {
			if tool.WebhookURL == nil || *tool.WebhookURL == "" || h.Outbound == nil {
				return nil
			}
			var secret []byte
			if len(tool.WebhookSecret) > 0 && h.Box != nil {
				s, err := h.Box.Open(tool.WebhookSecret)
				if err != nil {
					h.Logger.Error("cannot open an escalation webhook secret", "tenant", t.Slug, "tool", tool.ID, "err", err)
					return nil
				}
				secret = s
			}
			return agent.WebhookEscalator{URL: *tool.WebhookURL, Secret: secret, Client: h.Outbound.Client(escalationTimeout), Now: h.Now}
		},
	}
	if turn.memoryAllowed() {
		deps.Memory = chatMemory{db: h.DB, tenantID: t.ID, visitorID: turn.visitor.ID}
	}
	if turn.visitor != nil {
		deps.EscalationContext["visitorId"] = turn.visitor.ID
	}
	if explore {
		deps.Corpus = chatCorpus{db: h.DB, tenantID: t.ID, segmentID: turn.segment.ID, locale: turn.locale}
	}
	return deps
}

// finishChatTurn stores, in one transaction, the answer, the tool runs, the
// submissions they produced (with their submission.created events) and an
// escalation. It returns the stored answer's id ("" when nothing was said).
func (h *Handler) finishChatTurn(ctx context.Context, turn *chatTurn, res agent.TurnResult, history []parley.Turn) (string, error) {
	t := turn.tenant
	channel := parley.ChannelWeb
	if turn.channel == parley.ChannelAgent {
		channel = parley.ChannelAPI
	}
	turns := append([]parley.Turn(nil), history...)
	if res.Text != "" {
		turns = append(turns, parley.Turn{Role: "assistant", Content: res.Text, Timestamp: h.now()})
	}
	if len(res.Executions) == 0 && !res.Escalated() {
		// The common turn, text alone: one round trip stores the reply and
		// gives the session back.
		if res.Text == "" {
			return "", nil
		}
		if turn.lease == nil {
			m, err := db.AppendMessage(ctx, h.DB.Pool, t.ID, turn.conv.ID, "assistant", res.Text)
			return m.ID, err
		}
		m, err := h.DB.AppendReplyReleasingLease(ctx, t.ID, turn.conv.ID, res.Text, turn.req.SessionID, turn.lease.holder)
		if err != nil {
			return "", err
		}
		turn.lease.markReleased()
		return m.ID, nil
	}
	// The session's lease keeps other turns of the session out; the
	// conversation's row lock, taken by each append, orders the writes.
	var msgID string
	err := h.DB.InTx(ctx, func(tx pgx.Tx) error {
		if res.Text != "" {
			m, err := db.AppendMessage(ctx, tx, t.ID, turn.conv.ID, "assistant", res.Text)
			if err != nil {
				return err
			}
			msgID = m.ID
		}
		for _, ex := range res.Executions {
			input := json.RawMessage(ex.Input)
			if !json.Valid(input) {
				b, _ := json.Marshal(map[string]string{"raw": string(ex.Input)})
				input = b
			}
			result, err := json.Marshal(map[string]any{"success": ex.Success, "summary": ex.Summary, "result": ex.Result})
			if err != nil {
				return fmt.Errorf("encoding tool result: %w", err)
			}
			if err := db.AppendToolHistory(ctx, tx, t.ID, turn.conv.ID, parley.ToolCall{
				ToolName: ex.ToolName, ToolType: ex.ToolType, Input: input, Result: result}); err != nil {
				return err
			}
			if ex.Submission == nil {
				continue
			}
			sub := ex.Submission
			in, err := json.Marshal(sub.Input)
			if err != nil {
				return fmt.Errorf("encoding submission input: %w", err)
			}
			out, err := json.Marshal(sub.Result)
			if err != nil {
				return fmt.Errorf("encoding submission result: %w", err)
			}
			ns := parley.NewSubmission{
				TenantID: t.ID, ToolID: nonEmptyPtr(sub.ToolID), ToolType: sub.ToolType, ToolName: sub.ToolName,
				ConversationID: &turn.conv.ID, Channel: channel, Input: in, Result: out, PageURL: nonEmptyPtr(turn.req.PageURL),
			}
			if turn.visitor != nil {
				ns.VisitorID = &turn.visitor.ID
			}
			if _, _, err := h.DB.CreateSubmissionInTx(ctx, tx, ns, turns); err != nil {
				return err
			}
		}
		if res.Escalated() {
			return db.SetConversationStatus(ctx, tx, t.ID, turn.conv.ID, parley.StatusEscalated)
		}
		return nil
	})
	return msgID, err
}

// chatLLMError turns a failed model call into a message safe to show and a code.
func chatLLMError(err error) (string, string) {
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

// sseWriter writes server-sent events, flushing each.
type sseWriter struct{ c echo.Context }

func startSSE(c echo.Context) *sseWriter {
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "text/event-stream")
	h.Set(echo.HeaderCacheControl, "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	c.Response().WriteHeader(http.StatusOK)
	c.Response().Flush()
	return &sseWriter{c: c}
}

// send writes one `data: <json>` event; a write to a visitor who left is
// ignored, the request context tells the rest.
func (s *sseWriter) send(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	w := s.c.Response()
	if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
		return
	}
	w.Flush()
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

// chatMemory is REMEMBER_FACT's store for one visitor.
type chatMemory struct {
	db                  *db.DB
	tenantID, visitorID string
}

func (m chatMemory) Remember(ctx context.Context, key, value string) error {
	_, err := m.db.UpsertMemory(ctx, m.tenantID, m.visitorID, key, value)
	return err
}

// chatProducts is RECOMMEND_PRODUCT's search of the tenant's active catalog.
type chatProducts struct {
	db       *db.DB
	tenantID string
}

func (p chatProducts) Search(ctx context.Context, query string, limit int) ([]agent.Product, error) {
	found, _, err := p.db.ListProducts(ctx, p.tenantID, db.ProductQuery{Search: query, ActiveOnly: true, Page: 1, Limit: limit})
	if err != nil {
		return nil, err
	}
	out := make([]agent.Product, len(found))
	for i, f := range found {
		out[i] = agent.Product{ID: f.ID, Name: f.Name, Description: deref(f.Description), Price: f.Price,
			Currency: deref(f.Currency), URL: deref(f.URL), ImageURL: deref(f.ImageURL)}
	}
	return out, nil
}

// chatCorpus is explore_corpus's reader of the segment's entries.
type chatCorpus struct {
	db                          *db.DB
	tenantID, segmentID, locale string
}

func (c chatCorpus) Explore(ctx context.Context, query string, limit int) ([]agent.Passage, error) {
	entries, err := c.db.ExploreCorpus(ctx, c.tenantID, c.segmentID, c.locale, query, limit)
	if err != nil {
		return nil, err
	}
	out := make([]agent.Passage, len(entries))
	for i, e := range entries {
		out[i] = agent.Passage{Title: e.Title, Content: e.Content}
	}
	return out, nil
}

func cmpOr(a, b string) string {
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
	s = truncate(s, n)
	return &s
}

// truncate cuts s to at most n characters.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}
