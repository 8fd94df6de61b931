// Package typing is the store of who is typing in a conversation
// (migration 00043): the visitor in the widget, shown on the dashboard's
// conversation page; a person in the dashboard's reply box, shown in the
// widget through its stream. A signal holds for For; the clients send one
// at most every Every while typing, and the store writes at most one per
// side and conversation in that time whatever they send (a signal sooner is
// accepted and dropped), so a burst of signals costs no burst of writes.
// db.DB embeds its store, so that its methods are the DB's.
package typing

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

const (
	// For is how long a signal shows its side typing.
	For = 5 * time.Second
	// Every is how often a client signals while its side types.
	Every = 3 * time.Second
)

// The sides of a conversation that type: the visitor, or a person of the
// team.
const (
	Visitor = "visitor"
	Person  = "person"
)

// Typing is the store of the typing signals.
type Typing struct {
	pool *pgxpool.Pool
	// channel is the notification channel of conversation changes
	// (db.ConversationChannel), on which a person's signal wakes the
	// visitor's stream.
	channel string
}

// New is the store over pool, announcing on channel.
func New(pool *pgxpool.Pool, channel string) *Typing { return &Typing{pool: pool, channel: channel} }

// typingUpsert records a signal of party for the conversation of the CTE
// "c" (its id and tenant_id) when cond holds, unless the party's last
// recorded signal is younger than Every (less half a second of the
// clients' timers' slack). The statement answers whether the conversation
// exists and whether a row was written.
func typingUpsert(conversation, cond string) string {
	return `WITH c AS (` + conversation + `),
		w AS (INSERT INTO conversation_typing (conversation_id, party, tenant_id, name, until)
			SELECT c.id, $3, c.tenant_id, $4, now() + make_interval(secs => ` + fmt.Sprint(For.Seconds()) + `)
			FROM c WHERE ` + cond + `
			ON CONFLICT (conversation_id, party) DO UPDATE SET name = EXCLUDED.name, until = EXCLUDED.until
			WHERE conversation_typing.until <= now() + make_interval(secs => ` +
		fmt.Sprint((For - Every + 500*time.Millisecond).Seconds()) + `)
			RETURNING 1)
		SELECT EXISTS (SELECT 1 FROM c), EXISTS (SELECT 1 FROM w)`
}

// SignalVisitorTyping records that the visitor of the tenant's session is
// typing. A session without a conversation is not found. The signal is
// recorded only while the conversation waits for a person or a person
// holds it (nobody reads it otherwise): recorded tells whether it was, or
// whether it was dropped (the conversation is the assistant's or closed,
// or the last signal is too recent).
func (s *Typing) SignalVisitorTyping(ctx context.Context, tenantID, sessionID string) (recorded bool, err error) {
	if !pgbase.Storable(sessionID) {
		return false, parley.Errorf(parley.KindNotFound, "Conversation not found")
	}
	var found bool
	err = s.pool.QueryRow(ctx, typingUpsert(`SELECT id, tenant_id, status FROM conversations WHERE tenant_id = $1 AND session_id = $2`,
		`c.status IN ('ESCALATED', 'HUMAN')`), tenantID, sessionID, Visitor, nil).Scan(&found, &recorded)
	if err != nil {
		return false, fmt.Errorf("recording that the visitor types: %w", err)
	}
	if !found {
		return false, parley.Errorf(parley.KindNotFound, "Conversation not found")
	}
	return recorded, nil
}

// SignalPersonTyping records that person, who holds the tenant's
// conversation, is typing a reply, and announces it to the visitor's
// stream (db.ConversationChannel) when the signal was written: at most once
// every Every. A conversation the person does not hold (the
// assistant's, waiting, another person's, closed) records nothing:
// recorded is false. Another tenant's or an unknown conversation is not
// found.
func (s *Typing) SignalPersonTyping(ctx context.Context, tenantID, conversationID string, person parley.Holder) (recorded bool, err error) {
	if !pgbase.LooksLikeUUID(conversationID) {
		return false, parley.Errorf(parley.KindNotFound, "Conversation not found")
	}
	var found bool
	err = s.pool.QueryRow(ctx, typingUpsert(`SELECT id, tenant_id, status, assigned_user_id FROM conversations WHERE tenant_id = $1 AND id = $2`,
		`c.status = 'HUMAN' AND c.assigned_user_id = $5`), tenantID, conversationID, Person, person.Name, person.UserID).Scan(&found, &recorded)
	if err != nil {
		return false, fmt.Errorf("recording that a person types: %w", err)
	}
	if !found {
		return false, parley.Errorf(parley.KindNotFound, "Conversation not found")
	}
	if recorded {
		if _, err := s.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, s.channel, tenantID+":"+conversationID); err != nil {
			return true, fmt.Errorf("announcing a conversation's change: %w", err)
		}
	}
	return recorded, nil
}

// VisitorTyping tells whether the visitor of the tenant's conversation is
// typing: a signal within For, and sent after the conversation's
// last message (the message the visitor was typing ends it).
func (s *Typing) VisitorTyping(ctx context.Context, tenantID, conversationID string) (bool, error) {
	if !pgbase.LooksLikeUUID(conversationID) {
		return false, nil
	}
	var typing bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM conversation_typing t
			JOIN conversations c ON c.id = t.conversation_id AND c.tenant_id = t.tenant_id
			WHERE t.tenant_id = $1 AND t.conversation_id = $2 AND t.party = $3 AND t.until > now()
				AND t.until - make_interval(secs => `+fmt.Sprint(For.Seconds())+`) > c.last_message_at)`,
		tenantID, conversationID, Visitor).Scan(&typing)
	if err != nil {
		return false, fmt.Errorf("reading whether the visitor types: %w", err)
	}
	return typing, nil
}
