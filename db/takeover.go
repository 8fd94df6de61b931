package db

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// ConversationChannel is the PostgreSQL notification channel a change to a
// conversation that its visitor or the inbox should see is announced on
// (a person's message, a move of its state), after the change commits:
// its payload is "tenant id:conversation id". Every Parley instance on the
// database hears it.
const ConversationChannel = "parley_conversation"

// NotifyConversation announces a change of one of the tenant's
// conversations that is already stored (a visitor's message while a person
// holds it).
func (d *DB) NotifyConversation(ctx context.Context, tenantID, conversationID string) error {
	return notifyConversation(ctx, d.pool, tenantID, conversationID)
}

// notifyConversation announces a change of the conversation when tx commits.
func notifyConversation(ctx context.Context, q pgbase.Querier, tenantID, conversationID string) error {
	if _, err := q.Exec(ctx, `SELECT pg_notify($1, $2)`, ConversationChannel, tenantID+":"+conversationID); err != nil {
		return fmt.Errorf("announcing a conversation's change: %w", err)
	}
	return nil
}

// MoveConversation moves one of the tenant's conversations to state to
// (parley.StatusHuman taken by h; BOT handed back to the assistant;
// ESCALATED back to the people's queue; CLOSED), in one transaction that
// locks it: of two people taking it at once, one wins and the other gets a
// conflict naming the holder. Taking a conversation one already holds
// changes nothing.
func (d *DB) MoveConversation(ctx context.Context, tenantID, id, to string, h parley.Holder) (parley.ConversationMove, error) {
	var mv parley.ConversationMove
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		cur, err := lockConversation(ctx, tx, tenantID, id)
		if err != nil {
			return err
		}
		mv.From = cur.Status
		if to == parley.StatusHuman && cur.Status == parley.StatusHuman {
			if !sameHolder(cur, h) {
				return heldBy(cur)
			}
			mv.Conversation = cur
			return nil
		}
		mv.Conversation, err = setState(ctx, tx, tenantID, id, to, h)
		return err
	})
	return mv, err
}

// AddHumanMessage stores a person's reply in one of the tenant's
// conversations, taking it for h when nobody holds it (a reply takes the
// conversation over), and announces it. A conversation another person
// holds is a conflict naming them.
func (d *DB) AddHumanMessage(ctx context.Context, tenantID, id string, h parley.Holder, content string) (parley.Message, parley.ConversationMove, error) {
	var (
		m  parley.Message
		mv parley.ConversationMove
	)
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		cur, err := lockConversation(ctx, tx, tenantID, id)
		if err != nil {
			return err
		}
		mv = parley.ConversationMove{From: cur.Status, Conversation: cur}
		if cur.Status == parley.StatusHuman && !sameHolder(cur, h) {
			return heldBy(cur)
		}
		if cur.Status != parley.StatusHuman {
			if mv.Conversation, err = setState(ctx, tx, tenantID, id, parley.StatusHuman, h); err != nil {
				return err
			}
		}
		rows, _ := tx.Query(ctx, `WITH c AS (
				UPDATE conversations SET message_count = message_count + 1, last_message_at = clock_timestamp(), updated_at = now()
				WHERE tenant_id = $1 AND id = $2 RETURNING id, tenant_id)
			INSERT INTO messages (tenant_id, conversation_id, role, content, author_name)
			SELECT tenant_id, id, 'human', $3, $4 FROM c
			RETURNING `+pgbase.MessageColumns, tenantID, id, pgbase.StorableKey(content), h.Name)
		if m, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.Message]); err != nil {
			return fmt.Errorf("storing a person's message: %w", err)
		}
		mv.Conversation.MessageCount++
		mv.Conversation.LastMessageAt = m.CreatedAt
		return notifyConversation(ctx, tx, tenantID, id)
	})
	return m, mv, err
}

// lockConversation reads one of the tenant's conversations for update.
func lockConversation(ctx context.Context, tx pgx.Tx, tenantID, id string) (parley.Conversation, error) {
	if !pgbase.LooksLikeUUID(id) {
		return parley.Conversation{}, parley.Errorf(parley.KindNotFound, "Conversation not found")
	}
	rows, _ := tx.Query(ctx, `SELECT `+pgbase.ConversationColumns+` FROM conversations
		WHERE tenant_id = $1 AND id = $2 FOR UPDATE`, tenantID, id)
	c, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.Conversation])
	if err != nil {
		return parley.Conversation{}, pgbase.NotFound(err, "Conversation")
	}
	return c, nil
}

// setState moves the conversation to state to: HUMAN held by h from now;
// ESCALATED waiting from now; BOT and CLOSED held by nobody. It announces
// the move.
func setState(ctx context.Context, tx pgx.Tx, tenantID, id, to string, h parley.Holder) (parley.Conversation, error) {
	var userID, name any
	switch to {
	case parley.StatusHuman:
		if h.Name == "" {
			return parley.Conversation{}, errors.New("taking a conversation: the holder has no name")
		}
		userID, name = h.UserID, h.Name
	case parley.StatusBot, parley.StatusEscalated, parley.StatusClosed:
	default:
		return parley.Conversation{}, parley.Errorf(parley.KindInvalid, "Unknown conversation status %q", to)
	}
	rows, _ := tx.Query(ctx, `UPDATE conversations SET status = $3::text, assigned_user_id = $4, assignee = $5,
			taken_at = CASE WHEN $3::text = 'HUMAN' THEN now() END,
			escalated_at = CASE WHEN $3::text = 'ESCALATED' THEN now() ELSE escalated_at END, updated_at = now()
		WHERE tenant_id = $1 AND id = $2 RETURNING `+pgbase.ConversationColumns, tenantID, id, to, userID, name)
	c, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.Conversation])
	if err != nil {
		return parley.Conversation{}, fmt.Errorf("moving a conversation: %w", err)
	}
	return c, notifyConversation(ctx, tx, tenantID, id)
}

// sameHolder reports whether h holds c: the same dashboard user, or for a
// conversation an integrator took, the same name.
func sameHolder(c parley.Conversation, h parley.Holder) bool {
	if c.AssignedUserID != nil || h.UserID != nil {
		return c.AssignedUserID != nil && h.UserID != nil && *c.AssignedUserID == *h.UserID
	}
	return c.Assignee != nil && *c.Assignee == h.Name
}

// heldBy is the conflict of a conversation another person holds.
func heldBy(c parley.Conversation) error {
	who := "another person"
	if c.Assignee != nil {
		who = *c.Assignee
	}
	return parley.Errorf(parley.KindConflict, "This conversation is already taken by %s", who)
}

// escalateConversation marks the conversation as waiting for a person, from
// now, unless a person holds it already.
func escalateConversation(ctx context.Context, q pgbase.Querier, tenantID, conversationID string) error {
	if !pgbase.LooksLikeUUID(conversationID) {
		return parley.Errorf(parley.KindNotFound, "Conversation not found")
	}
	_, err := q.Exec(ctx, `UPDATE conversations SET status = 'ESCALATED', escalated_at = now(), updated_at = now()
		WHERE tenant_id = $1 AND id = $2 AND status <> 'HUMAN'`, tenantID, conversationID)
	if err != nil {
		return fmt.Errorf("escalating a conversation: %w", err)
	}
	return notifyConversation(ctx, q, tenantID, conversationID)
}
