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
func (s *Service) MoveConversation(ctx context.Context, tenantID, id string, in ConversationStateInput, person *parley.Holder) (parley.ConversationMove, error) {
	if err := parley.ParamsError(in.Check(person == nil)); err != nil {
		return parley.ConversationMove{}, err
	}
	h := parley.Holder{Name: in.Assignee}
	if person != nil {
		h = *person
	}
	mv, err := s.DB.MoveConversation(ctx, tenantID, id, in.Status, h)
	if err != nil || (mv.From == parley.StatusHuman && mv.Conversation.Status == parley.StatusHuman) {
		return mv, err // taking it again changes nothing
	}
	return mv, s.scheduleTakeoverJob(ctx, tenantID, mv)
}

// scheduleTakeoverJob schedules, after a move to ESCALATED or HUMAN, the
// job that gives the conversation back to the assistant when nobody takes
// it within the tenant's wait, or when its person stops answering
// (db.ScheduleTakeoverJob; issue 36, "Nobody there"). A later reply moves
// the deadline without a new job: the job checks it when it runs.
func (s *Service) scheduleTakeoverJob(ctx context.Context, tenantID string, mv parley.ConversationMove) error {
	switch mv.Conversation.Status {
	case parley.StatusEscalated, parley.StatusHuman:
		return s.DB.ScheduleTakeoverJob(ctx, tenantID, mv.Conversation.ID)
	}
	return nil
}

// ReplyAsPerson stores a person's reply to the visitor of one of the
// tenant's conversations, which takes the conversation over when nobody
// holds it, for person (nil: an integrator: in.AuthorName, else the person
// an integrator took the conversation for).
func (s *Service) ReplyAsPerson(ctx context.Context, tenantID, id string, in PersonReplyInput, person *parley.Holder) (parley.Message, parley.ConversationMove, error) {
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
	m, mv, err := s.DB.AddHumanMessage(ctx, tenantID, id, h, in.Content)
	if err != nil || mv.From == parley.StatusHuman {
		return m, mv, err
	}
	return m, mv, s.scheduleTakeoverJob(ctx, tenantID, mv) // the reply took it
}
