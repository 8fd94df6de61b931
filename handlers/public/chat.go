package public

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/agent"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/jsonbody"
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

// chatTenant runs the gates every public chat request passes first: the
// tenant exists, its plan has the widget, the origin is allowed and the
// widget key (when the tenant set one) matches.
func (h *Handler) chatTenant(c echo.Context, bodyWidgetKey string) (parley.Tenant, error) {
	t, err := h.DB.TenantBySlug(c.Request().Context(), c.Param("slug"))
	if err != nil {
		return t, err
	}
	err = tenantGates(c, t, bodyWidgetKey)
	h.noteRefusal(c, t, err)
	return t, err
}

// tenantGates are chatTenant's gates on a tenant read.
func tenantGates(c echo.Context, t parley.Tenant, bodyWidgetKey string) error {
	handlers.SetTenant(c, t)
	if !t.PlanInfo().Widget {
		return handlers.ErrNotActivated
	}
	hdr := c.Request().Header
	if !originAllowed(t.AllowedDomains, hdr.Get("Origin"), hdr.Get("Referer")) {
		return errOriginNotAllowed
	}
	return checkWidgetKey(t, hdr.Get("X-Widget-Key"), bodyWidgetKey)
}

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
//
// A count the handler can leave to its turn (AddressCount.LeaveToTurn) is
// left to it once every gate passed, the segment's too: the turn makes it
// with the session's lease, in its first round trip, and takes the lease
// only when the count admits the request on this configuration's version
// (agent.TurnInput.Admission). Chat then answers a refusal as these gates
// would have.
//
// The gates are one span of the request's trace ("public gates").
func (h *Handler) publicGates(c echo.Context, count *handlers.AddressCount, widgetKey, captchaToken, segment string, kept bool) (parley.Tenant, parley.Segment, error) {
	ctx, span := h.Engine.StartSpan(c.Request().Context(), "public gates")
	t, seg, err := h.gates(ctx, c, count, widgetKey, captchaToken, segment, kept)
	agent.EndSpan(span, err)
	return t, seg, err
}

// gates are publicGates' run within its span's ctx.
func (h *Handler) gates(ctx context.Context, c echo.Context, count *handlers.AddressCount, widgetKey, captchaToken, segment string, kept bool) (parley.Tenant, parley.Segment, error) {
	slug := c.Param("slug")
	ref := strings.TrimSpace(handlers.NonBlankOr(c.QueryParam("segment"), segment))
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
			err = h.tenantAndCaptchaGates(c, t, widgetKey, captchaToken)
			segmentOK := err == nil && segmentRefusal(seg, ref) == nil
			switch {
			case segmentOK && count.Deferrable():
				// Every gate passed on t: the count, and the check of t's
				// version with it, are left to the turn (its admission).
				count.Defer(t.ConfigVersion)
				return t, *seg, nil
			case segmentOK:
				err = count.VerdictOn(t) // the anonymous visitor resolved with it, when asked
			case err == nil:
				err = count.Verdict()
			}
		}
		if !kept || count.Current(t) {
			break
		}
		t, seg, _, err = h.DB.ChatTenantAndSegment(ctx, slug, ref, true)
		kept = false
	}
	if err == nil {
		err = segmentRefusal(seg, ref)
	}
	if err != nil {
		h.noteRefusal(c, t, err)
		return t, parley.Segment{}, err
	}
	return t, *seg, nil
}

// segmentRefusal is the segment gate's refusal of seg, the segment ref
// named (the default when ""), nil when it passes.
func segmentRefusal(seg *parley.Segment, ref string) error {
	switch {
	case seg == nil && ref == "":
		return parley.Errorf(parley.KindNotFound, "Default segment not found")
	case seg == nil || !seg.IsActive && ref != "":
		return handlers.UnknownSegment(ref)
	}
	return nil
}

// tenantAndCaptchaGates are publicGates' gates on a tenant read before the
// per-address limit: plan, origin, widget key, bot challenge.
func (h *Handler) tenantAndCaptchaGates(c echo.Context, t parley.Tenant, widgetKey, captchaToken string) error {
	if err := tenantGates(c, t, widgetKey); err != nil {
		return err
	}
	return h.Captcha.Check(c.Request().Context(), h.Box, h.Log(c), t, captchaToken, c.RealIP())
}

// Chat answers POST /chat/{slug}: the public agent surface. Browsers get the
// answer streamed as server-sent events; callers declaring X-Agent-Model get
// one JSON envelope (either can be asked for with stream). The handler
// decodes, passes the gates in the spec's order (publicGates: plan, origin,
// widget key, bot challenge, per-address limit, segment), and
// agent.Engine.Reply runs the turn once (the monthly limit is its first
// gate). The request counts against its address's chat limit whatever it
// is answered (handlers.AddressCount). A message with no visitor to
// resolve is counted with its turn (chatLeavesCount): a refusal of a gate
// after the limit's place then yields to the limit's (Over), and a turn
// the count did not admit is answered with the limit's refusal, or, when
// the kept configuration was found changed, run again on the current one.
//
// Chat's frame, and answer's under it, stay small (see agent.Engine.Reply):
// the input is built on the heap by a function that has returned before
// the model is called.
func (h *Handler) Chat(c echo.Context) error {
	count := handlers.CountAddress(c, h.DB, h.Now, h.Logger, handlers.ChatLimit)
	defer count.Settle()
	if err := jsonbody.RequireJSON(c.Request()); err != nil {
		return err
	}
	req, err := decodeChatRequest(c)
	if err != nil {
		return err
	}
	switch hdr := c.Request().Header; {
	case chatLeavesCount(hdr, req):
		count.LeaveToTurn()
	case chatResolvesWithCount(hdr, req):
		count.ResolveAlong(req.AnonymousID)
	}
	in, err := h.chatInput(c, count, req)
	if err != nil {
		return count.Over(err)
	}
	err = h.answer(c, in)
	if errors.Is(err, agent.ErrNotAdmitted) {
		// The count made with the turn refused it, or found the tenant's
		// configuration changed since it was kept: the limit's refusal, or
		// the gates again on the configuration as it is now.
		if err := count.Verdict(); err != nil {
			return err
		}
		if in, err = h.chatInput(c, count, req); err != nil {
			return err
		}
		err = h.answer(c, in)
	}
	return err
}

// answer runs the turn of in and writes its answer, streamed unless the
// caller takes it whole (in.Whole); agent.ErrNotAdmitted is returned with
// nothing written.
func (h *Handler) answer(c echo.Context, in *agent.TurnInput) error {
	w := handlers.NewChatWriter(c, in, !in.Whole)
	if len(h.StreamKey) > 0 {
		w.StreamToken = streamToken(h.StreamKey, in.Tenant.ID, in.SessionID)
	}
	out, err := h.Engine.Reply(c.Request().Context(), in, w.Emit)
	if errors.Is(err, agent.ErrNotAdmitted) {
		return err
	}
	return w.Finish(out, err)
}

// chatResolvesWithCount says whether a chat request's anonymous visitor
// (the widget's anonymous id, with no token or visitor id before it) may
// be resolved with its count, at the limit's place
// (handlers.AddressCount.ResolveAlong): none of the checks made after it
// (the locale's length, the anonymous id's form, the Idempotency-Key, the
// caller's own model, which the widget never sends) will refuse the
// request, and no admin token is read.
func chatResolvesWithCount(hdr http.Header, req *chatRequest) bool {
	_, keyErr := handlers.IdempotencyKey(hdr)
	return req.AnonymousID != "" && parley.ValidAnonymousID(req.AnonymousID) && keyErr == nil &&
		hdr.Get("X-LLM-Key") == "" && hdr.Get("X-API-Key") == "" && !chatNamesVisitor(hdr, req) &&
		utf8.RuneCountInString(chatLocale(hdr, req)) <= handlers.MaxChatLocale
}

// chatNamesVisitor says whether a chat request names its visitor by a
// token or an id (as turnInput reads them, which wins over the anonymous
// id), or carries an admin token, whose tools are read before the turn.
func chatNamesVisitor(hdr http.Header, req *chatRequest) bool {
	return strings.TrimSpace(handlers.NonBlankOr(hdr.Get("X-Visitor-Token"), req.VisitorToken)) != "" ||
		strings.TrimSpace(handlers.NonBlankOr(hdr.Get("X-Visitor-Id"), req.VisitorID)) != "" ||
		strings.TrimSpace(hdr.Get("X-Service-Admin-Token")) != ""
}

// chatLocale is the request's locale: the body's, else X-Service-Locale.
func chatLocale(hdr http.Header, req *chatRequest) string {
	if l := strings.TrimSpace(req.Locale); l != "" {
		return l
	}
	return strings.TrimSpace(hdr.Get("X-Service-Locale"))
}

// chatLeavesCount says whether a chat request's count against its
// address's limit may be left to its turn (handlers.AddressCount.Defer):
// nothing between the limit's place and the turn writes or calls out. A
// visitor (a token, an id, the widget's anonymous id) is resolved, and an
// admin token's tools read, before the turn: those requests are counted
// first.
func chatLeavesCount(hdr http.Header, req *chatRequest) bool {
	return req.AnonymousID == "" && !chatNamesVisitor(hdr, req)
}

// chatInput passes the gates on the decoded request: the turn's input
// (Whole when the answer is not streamed).
func (h *Handler) chatInput(c echo.Context, count *handlers.AddressCount, req *chatRequest) (*agent.TurnInput, error) {
	t, seg, err := h.publicGates(c, count, req.WidgetKey, req.CaptchaToken, req.Segment, true)
	if err != nil {
		return nil, err
	}
	in, err := h.turnInput(c, count, req, t, seg)
	if err == nil {
		in.Admission = count.Deferred()
	}
	return in, err
}

// turnInput is the turn's input from a request past the gates.
func (h *Handler) turnInput(c echo.Context, count *handlers.AddressCount, req *chatRequest, t parley.Tenant, seg parley.Segment) (*agent.TurnInput, error) {
	ctx := c.Request().Context()
	var err error
	hdr := c.Request().Header
	in := &agent.TurnInput{Tenant: t, Segment: seg, CachedConfig: true, SessionID: req.SessionID, Message: req.Message,
		PageURL: req.PageURL, PageContext: req.PageContext, Channel: parley.ChannelWeb, VisitorType: parley.VisitorHuman,
		Metadata: parley.ConversationMetadata{UserAgent: parley.Clip(hdr.Get("User-Agent"), 500),
			Referrer: parley.Clip(hdr.Get("Referer"), 500), Page: parley.Clip(req.PageURL, 500)}}
	in.Locale = chatLocale(hdr, req)
	if utf8.RuneCountInString(in.Locale) > handlers.MaxChatLocale {
		return nil, handlers.Invalid("locale too long (max %d chars)", handlers.MaxChatLocale)
	}
	// The widget's anonymous id is checked whatever wins over it: a
	// malformed one is the caller's mistake, told rather than ignored.
	if req.AnonymousID != "" && !parley.ValidAnonymousID(req.AnonymousID) {
		return nil, parley.InvalidAnonymousID()
	}
	in.AnonymousID = req.AnonymousID
	if in.IdempotencyKey, err = handlers.IdempotencyKey(hdr); err != nil {
		return nil, err
	}
	// The caller's model and the admin token's tools before the visitor,
	// which may be written: a request they refuse writes nothing.
	if in.LLM, err = h.callerLLM(ctx, hdr); err != nil {
		return nil, err
	}
	if token := strings.TrimSpace(hdr.Get("X-Service-Admin-Token")); token != "" {
		if in.ExtraTools, err = h.AdminTools(ctx, t, token); err != nil {
			return nil, err
		}
	}
	// A valid visitor token wins over a visitor id; an invalid one is
	// refused. Then the spec's order: header X-Visitor-Id, body visitorId,
	// then the anonymous id (the widget's browser: an anonymous visitor).
	// A verified visitor is linked to the anonymous id's (Engine).
	if token := strings.TrimSpace(handlers.NonBlankOr(hdr.Get("X-Visitor-Token"), req.VisitorToken)); token != "" {
		v, err := h.verifiedChatVisitor(c, t, token)
		if err != nil {
			return nil, err
		}
		in.Visitor, in.Verified = &v, true
	} else if ref := strings.TrimSpace(handlers.NonBlankOr(hdr.Get("X-Visitor-Id"), req.VisitorID)); ref != "" {
		v, err := h.DB.ResolveChatVisitor(ctx, t.ID, ref)
		if err != nil {
			return nil, err
		}
		in.Visitor = &v
	} else if v := count.Visitor(t.ID); in.AnonymousID != "" && v != nil {
		in.Visitor = v // resolved with the count
	} else if in.AnonymousID != "" {
		v, err := h.DB.ResolveAnonymousVisitor(ctx, t.ID, in.AnonymousID)
		if err != nil {
			return nil, err
		}
		in.Visitor = &v
	}
	in.Logger = h.Log(c)
	declared := strings.TrimSpace(hdr.Get("X-Agent-Model"))
	if declared != "" {
		in.Channel = parley.ChannelAgent
		in.VisitorType = parley.VisitorAgent
		in.AgentModel = truncatePtr(declared, handlers.MaxAgentModel)
	} else if model, ok := agentPrefix(req.Message); ok {
		in.VisitorType = parley.VisitorAgent
		if model != "" {
			in.AgentModel = truncatePtr(model, handlers.MaxAgentModel)
		}
	}
	// An agent's envelope unless the request says otherwise.
	in.Whole = declared != ""
	if req.Stream != nil {
		in.Whole = !*req.Stream
	}
	return in, nil
}

// decodeChatRequest reads and validates the body, with the spec's messages.
func decodeChatRequest(c echo.Context) (*chatRequest, error) {
	req := new(chatRequest)
	raw, err := jsonbody.DecodeObject(c, handlers.MaxChatBody)
	if err != nil {
		return req, err
	}
	if errs := jsonbody.DecodeFields(raw, req); len(errs) > 0 {
		return req, errs.Err()
	}
	return req, handlers.CheckChatMessage(req.Message, req.SessionID)
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

func truncatePtr(s string, n int) *string {
	s = parley.Clip(s, n)
	return &s
}
