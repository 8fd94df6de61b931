package db

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
	"github.com/parley/parley/db/webhooks"
)

// ConversationChannel is the PostgreSQL notification channel a change to a
// conversation that its visitor or the inbox should see is announced on
// (a person's message, a move of its state), after the change commits:
// its payload is "tenant id:conversation id". Every Parley instance on the
// database hears it.
const ConversationChannel = "parley_conversation"

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
// changes nothing. A change of status records its webhook event in the
// same transaction (recordMove).
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
		mv.Conversation, err = d.setState(ctx, tx, cur, to, h)
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
			if mv.Conversation, err = d.setState(ctx, tx, cur, parley.StatusHuman, h); err != nil {
				return err
			}
		}
		rows, _ := tx.Query(ctx, `WITH c AS (
				UPDATE conversations SET message_count = message_count + 1, last_message_at = clock_timestamp(), updated_at = now(),
					person_replied = true
				WHERE tenant_id = $1 AND id = $2 RETURNING id, tenant_id)
			INSERT INTO messages (tenant_id, conversation_id, role, content, author_name)
			SELECT tenant_id, id, 'human', $3, $4 FROM c
			RETURNING `+pgbase.MessageColumns, tenantID, id, pgbase.StorableKey(content), h.Name)
		if m, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.Message]); err != nil {
			return fmt.Errorf("storing a person's message: %w", err)
		}
		mv.Conversation.MessageCount++
		mv.Conversation.LastMessageAt = m.CreatedAt
		if err := d.recordMessage(ctx, tx, mv.Conversation, m); err != nil {
			return err
		}
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

// setState moves the conversation cur (locked) to state to: HUMAN held by h
// from now; ESCALATED waiting from now; BOT and CLOSED held by nobody. It
// announces the move and records its event (recordMove).
func (d *DB) setState(ctx context.Context, tx pgx.Tx, cur parley.Conversation, to string, h parley.Holder) (parley.Conversation, error) {
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
		WHERE tenant_id = $1 AND id = $2 RETURNING `+pgbase.ConversationColumns, cur.TenantID, cur.ID, to, userID, name)
	c, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.Conversation])
	if err != nil {
		return parley.Conversation{}, fmt.Errorf("moving a conversation: %w", err)
	}
	if err := d.recordMove(ctx, tx, cur.Status, c); err != nil {
		return parley.Conversation{}, err
	}
	return c, notifyConversation(ctx, tx, c.TenantID, c.ID)
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
// now, unless a person holds it already; it records conversation.escalated
// in tx when it was not waiting already.
func (d *DB) escalateConversation(ctx context.Context, tx pgx.Tx, tenantID, conversationID string) error {
	cur, err := lockConversation(ctx, tx, tenantID, conversationID)
	if err != nil || cur.Status == parley.StatusHuman {
		return err
	}
	_, err = d.setState(ctx, tx, cur, parley.StatusEscalated, parley.Holder{})
	return err
}

// AnnounceVisitorMessage announces a visitor's message, already stored,
// that the assistant leaves to a person (the conversation is HUMAN or
// ESCALATED): the inbox hears of it and its message.created event is
// recorded (when an endpoint receives it), in one transaction.
func (d *DB) AnnounceVisitorMessage(ctx context.Context, tenantID, conversationID, messageID string) error {
	if !pgbase.LooksLikeUUID(conversationID) || !pgbase.LooksLikeUUID(messageID) {
		return parley.Errorf(parley.KindNotFound, "Message not found")
	}
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, `SELECT `+pgbase.ConversationColumns+` FROM conversations
			WHERE tenant_id = $1 AND id = $2 AND EXISTS (SELECT 1 FROM messages
				WHERE tenant_id = $1 AND conversation_id = $2 AND id = $3)`, tenantID, conversationID, messageID)
		c, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.Conversation])
		if err != nil {
			return pgbase.NotFound(err, "Message")
		}
		ok, err := webhooks.Subscribed(ctx, tx, tenantID, webhooks.EventMessageCreated)
		if err != nil {
			return err
		}
		if ok {
			rows, _ = tx.Query(ctx, `SELECT `+pgbase.MessageColumns+` FROM messages WHERE tenant_id = $1 AND id = $2`, tenantID, messageID)
			m, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.Message])
			if err != nil {
				return fmt.Errorf("reading a visitor's message: %w", err)
			}
			if err := d.recordMessageEvent(ctx, tx, c, m); err != nil {
				return err
			}
		}
		return notifyConversation(ctx, tx, tenantID, conversationID)
	})
}

// ConversationEventData is a conversation as its webhook events see it,
// frozen when the event happened. PreviousStatus is the status before the
// change, in a conversation's events; empty (absent) in message.created.
// Segment is the segment's slug.
type ConversationEventData struct {
	ID             string     `json:"id"`
	SessionID      string     `json:"sessionId"`
	Channel        string     `json:"channel"`
	Status         string     `json:"status"`
	PreviousStatus string     `json:"previousStatus,omitempty"`
	Assignee       *string    `json:"assignee"`
	EscalatedAt    *time.Time `json:"escalatedAt"`
	TakenAt        *time.Time `json:"takenAt"`
	PageURL        *string    `json:"pageUrl"`
	VisitorID      *string    `json:"visitorId"`
	Segment        *string    `json:"segment"`
}

// ConversationEventPayload is the webhook body of a conversation's event
// (conversation.escalated, taken, handed_back, closed).
type ConversationEventPayload = webhooks.Payload[ConversationEventData]

// MessageEventPayload is the webhook body of message.created.
type MessageEventPayload = webhooks.Payload[MessageEventData]

// MessageEventData is the message of a message.created event, with its
// conversation as it then stood.
type MessageEventData struct {
	ID             string                `json:"id"`
	ConversationID string                `json:"conversationId"`
	Role           string                `json:"role"`
	Content        string                `json:"content"`
	AuthorName     *string               `json:"authorName"`
	CreatedAt      time.Time             `json:"createdAt"`
	Conversation   ConversationEventData `json:"conversation"`
}

// moveEvents are the events of a conversation's arrival in each status.
var moveEvents = map[string]string{
	parley.StatusEscalated: webhooks.EventConversationEscalated,
	parley.StatusHuman:     webhooks.EventConversationTaken,
	parley.StatusBot:       webhooks.EventConversationHandedBack,
	parley.StatusClosed:    webhooks.EventConversationClosed,
}

// recordMove records, in tx, the event of c's move from status from, with
// its deliveries: none when the status did not change (an escalated
// conversation escalated again still waits; a held one is still held).
//
// A conversation's events, unlike a submission's, are recorded only when an
// endpoint receives them: each holds what the conversation is about (a
// message's text), which the events table need not keep 30 days for
// nobody; and an endpoint gets only the events recorded after it
// subscribed, so one recorded for none would never be sent.
func (d *DB) recordMove(ctx context.Context, tx pgx.Tx, from string, c parley.Conversation) error {
	if from == c.Status {
		return nil
	}
	typ := moveEvents[c.Status]
	if ok, err := webhooks.Subscribed(ctx, tx, c.TenantID, typ); !ok || err != nil {
		return err
	}
	data, err := conversationEventData(ctx, tx, c)
	if err != nil {
		return err
	}
	data.PreviousStatus = from
	_, err = webhooks.RecordEvent(ctx, tx, d.jobs, webhooks.NewEvent{TenantID: c.TenantID, Type: typ,
		ConversationID: &c.ID, At: c.UpdatedAt, Data: data})
	return err
}

// recordMessage records, in tx, the message.created event of m, a message
// of the conversation c, with its deliveries, when an endpoint receives it
// (as recordMove).
func (d *DB) recordMessage(ctx context.Context, tx pgx.Tx, c parley.Conversation, m parley.Message) error {
	if ok, err := webhooks.Subscribed(ctx, tx, c.TenantID, webhooks.EventMessageCreated); !ok || err != nil {
		return err
	}
	return d.recordMessageEvent(ctx, tx, c, m)
}

// recordMessageEvent records, in tx, the message.created event of m, a
// message of the conversation c, with its deliveries.
func (d *DB) recordMessageEvent(ctx context.Context, tx pgx.Tx, c parley.Conversation, m parley.Message) error {
	conv, err := conversationEventData(ctx, tx, c)
	if err != nil {
		return err
	}
	_, err = webhooks.RecordEvent(ctx, tx, d.jobs, webhooks.NewEvent{TenantID: c.TenantID, Type: webhooks.EventMessageCreated,
		ConversationID: &c.ID, At: m.CreatedAt, Data: MessageEventData{ID: m.ID, ConversationID: c.ID, Role: m.Role,
			Content: m.Content, AuthorName: m.AuthorName, CreatedAt: m.CreatedAt.UTC(), Conversation: conv}})
	return err
}

// conversationEventData reads c's segment's slug and returns c as its
// events see it.
func conversationEventData(ctx context.Context, tx pgx.Tx, c parley.Conversation) (ConversationEventData, error) {
	var segment *string
	if c.SegmentID != nil {
		err := tx.QueryRow(ctx, `SELECT slug FROM segments WHERE tenant_id = $1 AND id = $2`, c.TenantID, *c.SegmentID).Scan(&segment)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return ConversationEventData{}, fmt.Errorf("reading a conversation's segment: %w", err)
		}
	}
	return ConversationEventData{ID: c.ID, SessionID: c.SessionID, Channel: c.Channel, Status: c.Status,
		Assignee: c.Assignee, EscalatedAt: parley.UTCPtr(c.EscalatedAt), TakenAt: parley.UTCPtr(c.TakenAt), PageURL: c.PageURL,
		VisitorID: c.VisitorID, Segment: segment}, nil
}
