package admin

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/agent"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/handlers/jsonbody"
	"github.com/parley/parley/views"
)

// testSessionPrefix starts the session id of every test chat: the server
// refuses any other, so that the owner's tests and visitors' conversations
// never share a session (db.StartTurn refuses a mix of the two anyway).
const testSessionPrefix = "test-"

// testChatRequest is the body of POST /admin/test-chat.
type testChatRequest struct {
	Message   string `json:"message"`
	SessionID string `json:"sessionId"`
	Segment   string `json:"segment"`
}

// ShowTestChatPage renders the test chat: the owner talks to their bot
// through the real widget, with the look, welcome and starters of the
// segment chosen (?segment=, else the default), and sees what it used.
func (h *Settings) ShowTestChatPage(c echo.Context) error {
	a := dash.AdminFrom(c)
	segs, err := h.DB.ListSegments(c.Request().Context(), a.Tenant.ID)
	if err != nil {
		return err
	}
	v := views.TestChat{PlanActive: a.Tenant.PlanInfo().Widget, AnswersLocally: h.Engine.AnswersLocally(a.Tenant),
		SessionPrefix: testSessionPrefix, Tenant: a.Tenant.Slug}
	var shown *parley.Segment
	for i, s := range segs {
		if s.IsActive {
			v.Segments = append(v.Segments, views.Option{Value: s.Slug, Label: s.Name})
			if shown == nil || s.Slug == c.QueryParam("segment") {
				shown = &segs[i].Segment
			}
		}
	}
	if shown != nil {
		v.Segment = shown.Slug
		ws := handlers.WidgetSettings(h.BaseURL, h.CaptchaScriptURL, a.Tenant, *shown)
		ws.Endpoints = handlers.WidgetEndpointsJSON{} // the widget sends to the test chat's endpoint
		body, _ := json.Marshal(ws)                   // plain data: cannot fail
		v.Settings = string(body)
	}
	return handlers.Render(c, http.StatusOK, views.TestChatPage(dash.Page(c, h.Sessions, "Test chat", "test-chat"), v))
}

// SendTestMessage answers POST /admin/test-chat: a message of the signed-in
// owner to their tenant's bot, run by the engine as chat runs a visitor's
// (channel web), streamed as chat's server-sent events. The conversation is
// stored as a test, which the monthly limit neither refuses nor counts; the
// final event also lists the knowledge entries the prompt held and the tools
// that ran with their results. The owner is authenticated by their session
// and the CSRF token, so chat's origin, widget key and bot challenge gates do
// not apply; the plan's and the per-address limit do.
func (h *Settings) SendTestMessage(c echo.Context) error {
	count := handlers.CountAddress(c, h.DB, h.Now, h.Logger, handlers.ChatLimit)
	defer count.Settle()
	in, err := h.testChatInput(c, count)
	if err != nil {
		return err
	}
	w := handlers.NewChatWriter(c, in, true)
	out, err := h.Engine.Reply(c.Request().Context(), in, w.Emit)
	return w.Finish(out, err)
}

// testChatInput decodes a test message and passes the gates.
func (h *core) testChatInput(c echo.Context, count *handlers.AddressCount) (*agent.TurnInput, error) {
	t := dash.AdminFrom(c).Tenant
	handlers.SetTenant(c, t)
	if !t.PlanInfo().Widget {
		return nil, handlers.ErrNotActivated
	}
	var req testChatRequest
	raw, err := jsonbody.DecodeObject(c, handlers.MaxChatBody)
	if err != nil {
		return nil, err
	}
	if errs := jsonbody.DecodeFields(raw, &req); len(errs) > 0 {
		return nil, errs.Err()
	}
	if err := handlers.CheckChatMessage(req.Message, req.SessionID); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(req.SessionID, testSessionPrefix) {
		return nil, &parley.Error{Kind: parley.KindInvalid, Message: "A test chat's sessionId starts with " + testSessionPrefix,
			Details: parley.FieldErrors{"sessionId": "must start with " + testSessionPrefix}}
	}
	seg, segErr := handlers.ChatSegment(c.Request().Context(), h.DB, t, "", req.Segment)
	if err := count.Verdict(); err != nil {
		return nil, err
	}
	if segErr != nil {
		return nil, segErr
	}
	return &agent.TurnInput{Tenant: t, Segment: seg, SessionID: req.SessionID, Message: req.Message,
		Channel: parley.ChannelWeb, VisitorType: parley.VisitorHuman, Test: true, Logger: h.Log(c),
		Metadata: parley.ConversationMetadata{UserAgent: parley.Clip(c.Request().Header.Get("User-Agent"), 500)}}, nil
}
