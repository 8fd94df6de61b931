package public

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/jsonbody"
)

// chatFeedbackRequest is the body of POST /chat/{slug}/feedback.
type chatFeedbackRequest struct {
	SessionID string `json:"sessionId"`
	MessageID string `json:"messageId"`
	Value     string `json:"value"`
	WidgetKey string `json:"widgetKey"`
}

// chatFeedbackReply is its answer.
type chatFeedbackReply struct {
	MessageID string `json:"messageId"`
	Value     string `json:"value"`
}

// SaveChatFeedback answers POST /chat/{slug}/feedback: the visitor's thumbs
// up or down on an answer of their own conversation (named by sessionId).
// Voting again replaces the vote. The chat's origin, widget-key and
// per-address gates apply; the bot challenge does not, a vote costing
// nothing to serve.
func (h *Handler) SaveChatFeedback(c echo.Context) error {
	ctx := c.Request().Context()
	count := handlers.CountAddress(c, h.DB, h.Now, h.Logger, handlers.VoteLimit)
	defer count.Settle()
	if err := jsonbody.RequireJSON(c.Request()); err != nil {
		return err
	}
	var req chatFeedbackRequest
	raw, err := jsonbody.DecodeObject(c, jsonbody.MaxJSONBody)
	if err != nil {
		return err
	}
	if errs := jsonbody.DecodeFields(raw, &req); len(errs) > 0 {
		return errs.Err()
	}
	errs := parley.FieldErrors{}
	if strings.TrimSpace(req.SessionID) == "" {
		errs.Add("sessionId", "is required")
	}
	if strings.TrimSpace(req.MessageID) == "" {
		errs.Add("messageId", "is required")
	}
	value := map[string]int{"up": 1, "down": -1}[req.Value]
	if value == 0 {
		errs.Add("value", "must be up or down")
	}
	if err := errs.Err(); err != nil {
		return err
	}
	t, err := h.chatTenant(c, req.WidgetKey)
	if err != nil {
		return err
	}
	if err := count.Verdict(); err != nil {
		return err
	}
	if err := h.DB.CheckSessionMessage(ctx, t.ID, req.SessionID, req.MessageID); err != nil {
		return err
	}
	if err := h.DB.RecordFeedback(ctx, t.ID, req.MessageID, value); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, chatFeedbackReply{MessageID: req.MessageID, Value: req.Value})
}
