package handlers

import (
	"context"
	"errors"

	"github.com/parley/parley"
	"github.com/parley/parley/agent"
)

// DraftReply drafts the next reply of a person to the visitor of one of the
// tenant's conversations, with a one-line summary of it (agent.Engine.DraftReply),
// for the dashboard and the REST API alike: another tenant's conversation
// is not found; it is read in its segment (the default one when it has none
// left) and locale. A model's failure is an upstream error with the chat's
// codes (ChatLLMError).
func (h *Base) DraftReply(ctx context.Context, t parley.Tenant, conversationID string) (agent.Draft, error) {
	c, err := h.DB.Conversation(ctx, t.ID, conversationID)
	if err != nil {
		return agent.Draft{}, err
	}
	var seg parley.Segment
	if c.SegmentID != nil {
		seg, err = h.DB.Segment(ctx, t.ID, *c.SegmentID)
	}
	if c.SegmentID == nil || parley.ErrorKind(err) == parley.KindNotFound {
		seg, err = h.DB.DefaultSegment(ctx, t.ID)
	}
	if err != nil {
		return agent.Draft{}, err
	}
	locale := ""
	if c.Locale != nil {
		locale = *c.Locale
	}
	d, err := h.Engine.DraftReply(ctx, t, seg, c.ID, locale)
	var pe *parley.Error
	if err != nil && !errors.As(err, &pe) && ctx.Err() == nil {
		msg, code := ChatLLMError(err)
		return agent.Draft{}, &parley.Error{Kind: parley.KindUpstream, Code: code, Message: msg}
	}
	return d, err
}
