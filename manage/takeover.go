package manage

import (
	"context"

	"github.com/parley/parley"
)

// A person's part in a conversation: taking it over from the assistant,
// replying to the visitor, handing it back, closing it. The dashboard acts
// as its signed-in user (a *parley.Holder); the REST API and the MCP
// server as a person the integrator names.

// MoveConversation moves one of the tenant's conversations as in asks, for
// person (nil: an integrator, whose in.Assignee names who takes it). Of two
// people taking it at once, one wins; the other gets a conflict naming the
// holder.
func (s *Service) MoveConversation(ctx context.Context, tenantID, id string, in parley.ConversationStateInput, person *parley.Holder) (parley.ConversationMove, error) {
	if err := parley.ParamsError(in.Check(person == nil)); err != nil {
		return parley.ConversationMove{}, err
	}
	h := parley.Holder{Name: in.Assignee}
	if person != nil {
		h = *person
	}
	return s.DB.MoveConversation(ctx, tenantID, id, in.Status, h)
}

// ReplyAsPerson stores a person's reply to the visitor of one of the
// tenant's conversations, which takes the conversation over when nobody
// holds it, for person (nil: an integrator: in.AuthorName, else the person
// an integrator took the conversation for).
func (s *Service) ReplyAsPerson(ctx context.Context, tenantID, id string, in parley.PersonReplyInput, person *parley.Holder) (parley.Message, parley.ConversationMove, error) {
	errs := in.Check()
	if err := parley.ParamsError(errs); err != nil {
		return parley.Message{}, parley.ConversationMove{}, err
	}
	h := parley.Holder{Name: in.AuthorName}
	switch {
	case person != nil:
		h = *person
	case h.Name == "":
		c, err := s.DB.Conversation(ctx, tenantID, id)
		if err != nil {
			return parley.Message{}, parley.ConversationMove{}, err
		}
		if c.Status != parley.StatusHuman || c.AssignedUserID != nil || c.Assignee == nil {
			errs.Add("authorName", "is required: the name the visitor is shown (nobody took the conversation through the API)")
			return parley.Message{}, parley.ConversationMove{}, parley.ParamsError(errs)
		}
		h.Name = *c.Assignee
	}
	return s.DB.AddHumanMessage(ctx, tenantID, id, h, in.Content)
}
