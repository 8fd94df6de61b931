package handlers

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/agent"
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

// testChatDone is the final SSE event of a test chat: chat's done event with
// what the bot used to answer.
type testChatDone struct {
	chatReply
	Knowledge []testChatKnowledge `json:"knowledge"`
	Tools     []testChatTool      `json:"tools"`
}

// testChatKnowledge is a knowledge-base entry the prompt held.
type testChatKnowledge struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Summarized: the prompt held its summary only.
	Summarized bool `json:"summarized"`
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

// ShowTestChatPage renders the test chat: the owner talks to their bot as a
// visitor would, and sees what it used.
func (h *Handler) ShowTestChatPage(c echo.Context) error {
	a := adminFrom(c)
	segs, err := h.DB.ListSegments(c.Request().Context(), a.Tenant.ID)
	if err != nil {
		return err
	}
	v := views.TestChat{PlanActive: a.Tenant.PlanInfo().Widget, AnswersLocally: h.Engine.AnswersLocally(a.Tenant),
		SessionPrefix: testSessionPrefix}
	for _, s := range segs {
		if s.IsActive {
			v.Segments = append(v.Segments, views.Option{Value: s.Slug, Label: s.Name})
		}
	}
	return Render(c, http.StatusOK, views.TestChatPage(h.page(c, "Test chat", "test-chat"), v))
}

// SendTestMessage answers POST /admin/test-chat: a message of the signed-in
// owner to their tenant's bot, run by the engine as chat runs a visitor's
// (channel web), streamed as chat's server-sent events. The conversation is
// stored as a test, which the monthly limit neither refuses nor counts; the
// final event also lists the knowledge entries the prompt held and the tools
// that ran with their results. The owner is authenticated by their session
// and the CSRF token, so chat's origin, widget key and bot challenge gates do
// not apply; the plan's and the per-address limit do.
func (h *Handler) SendTestMessage(c echo.Context) error {
	count := h.countAddress(c, parley.ChatLimit)
	defer count.settle()
	in, err := h.testChatInput(c, count)
	if err != nil {
		return err
	}
	w := &chatWriter{c: c, in: in, stream: true}
	out, err := h.Engine.Reply(c.Request().Context(), in, w.emit)
	return w.finish(out, err)
}

// testChatInput decodes a test message and passes the gates.
func (h *Handler) testChatInput(c echo.Context, count *addressCount) (*agent.TurnInput, error) {
	t := adminFrom(c).Tenant
	SetTenant(c, t)
	if !t.PlanInfo().Widget {
		return nil, errNotActivated
	}
	var req testChatRequest
	raw, err := DecodeObject(c, maxChatBody)
	if err != nil {
		return nil, err
	}
	if errs := decodeFields(raw, &req); len(errs) > 0 {
		return nil, errs.Err()
	}
	if err := checkChatMessage(req.Message, req.SessionID); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(req.SessionID, testSessionPrefix) {
		return nil, &parley.Error{Kind: parley.KindInvalid, Message: "A test chat's sessionId starts with " + testSessionPrefix,
			Details: parley.FieldErrors{"sessionId": "must start with " + testSessionPrefix}}
	}
	seg, segErr := h.chatSegment(c.Request().Context(), t, "", req.Segment)
	if err := count.verdict(); err != nil {
		return nil, err
	}
	if segErr != nil {
		return nil, segErr
	}
	return &agent.TurnInput{Tenant: t, Segment: seg, SessionID: req.SessionID, Message: req.Message,
		Channel: parley.ChannelWeb, VisitorType: parley.VisitorHuman, Test: true, Logger: h.log(c),
		Metadata: parley.ConversationMetadata{UserAgent: parley.Clip(c.Request().Header.Get("User-Agent"), 500)}}, nil
}

// testChatDoneOf adds to chat's done event what the bot used.
func testChatDoneOf(reply chatReply, out *agent.TurnOutput) testChatDone {
	d := testChatDone{chatReply: reply, Knowledge: []testChatKnowledge{}, Tools: []testChatTool{}}
	for _, k := range out.Knowledge {
		d.Knowledge = append(d.Knowledge, testChatKnowledge{ID: k.ID, Title: k.Title, Summarized: k.Summarized})
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
