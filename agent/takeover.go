package agent

import (
	"context"
	"time"

	"github.com/parley/parley"
)

// DefaultPersonWait is how long an escalated conversation waits for a
// person to take it before the assistant answers the visitor again.
const DefaultPersonWait = 3 * time.Minute

// stepAside decides whether the assistant answers the turn, after its
// message is stored. While a person holds the conversation (HUMAN), or it
// waits for one (ESCALATED, for PersonWait since it was escalated), the
// model is not called: the message is announced to the inbox and to the
// webhooks (message.created), and the turn ends without an answer. A
// closed conversation, or an escalated one that waited too long, goes back
// to the assistant, which answers. Voice calls are the assistant's
// throughout: a person cannot answer a call in text.
func (e *Engine) stepAside(ctx context.Context, t *turn) (*TurnOutput, error) {
	if t.in.Channel == parley.ChannelVoice {
		return nil, nil
	}
	c := t.conv
	switch c.Status {
	case parley.StatusHuman:
	case parley.StatusEscalated:
		wait := e.PersonWait
		if wait == 0 {
			wait = DefaultPersonWait
		}
		if c.EscalatedAt == nil || e.now().Sub(*c.EscalatedAt) >= wait {
			return nil, e.resume(ctx, t)
		}
	case parley.StatusClosed:
		return nil, e.resume(ctx, t)
	default:
		return nil, nil
	}
	if err := e.Store.AnnounceVisitorMessage(ctx, t.in.Tenant.ID, c.ID, t.userMessage.ID); err != nil {
		return nil, err
	}
	return &TurnOutput{ConversationID: c.ID, MessageCount: c.MessageCount, Status: c.Status, Assignee: c.Assignee}, nil
}

// resume gives the turn's conversation back to the assistant.
func (e *Engine) resume(ctx context.Context, t *turn) error {
	mv, err := e.Store.MoveConversation(ctx, t.in.Tenant.ID, t.conv.ID, parley.StatusBot, parley.Holder{})
	if err != nil {
		return err
	}
	t.conv.Status, t.conv.Assignee, t.conv.AssignedUserID = mv.Conversation.Status, nil, nil
	return nil
}
