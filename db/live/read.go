package live

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/internal/pgbase"
)

// State is what a visitor's stream shows of its conversation: its status
// (parley.StatusBot, ...) and, while a person holds it, their name.
type State struct {
	Status   string
	Assignee *string
	// Typing names the person typing a reply (db.SignalPersonTyping), nil
	// when nobody is or their signal is older than the last message; TypingUntil is when their last signal ends: each new
	// signal moves it.
	Typing      *string
	TypingUntil time.Time
}

// Message is a person's message as a visitor's stream sends it. Seq
// orders the conversation's messages: a person's messages are stored under
// the conversation's row lock (db.AddHumanMessage), so their seq follows
// the order they commit in, and "after seq N" misses none.
type Message struct {
	Seq        int64
	ID         string
	Content    string
	AuthorName string
	CreatedAt  time.Time
}

// typingFor is db.TypingFor in seconds, for SQL: a signal older than the
// conversation's last message is over (the message it announced came).
var typingFor = strconv.FormatFloat(db.TypingFor.Seconds(), 'f', -1, 64)

// maxBatch is how many messages one read returns at most; Since's caller
// reads again while it gets full batches.
const maxBatch = 100

// Conversation is the id of the tenant's conversation of the session; a
// session without one is not found.
func (h *Hub) Conversation(ctx context.Context, tenantID, sessionID string) (string, error) {
	if !pgbase.Storable(sessionID) {
		return "", parley.Errorf(parley.KindNotFound, "Conversation not found")
	}
	var id string
	err := h.pool.QueryRow(ctx, `SELECT id FROM conversations WHERE tenant_id = $1 AND session_id = $2`,
		tenantID, sessionID).Scan(&id)
	if err != nil {
		return "", pgbase.NotFound(err, "Conversation")
	}
	return id, nil
}

// Since reads, in one round trip, the state of the tenant's conversation
// (with the person typing, if one is) and the messages people wrote in it after seq after, in order, at most
// maxBatch of them (more reports whether there may be more).
func (h *Hub) Since(ctx context.Context, tenantID, conversationID string, after int64) (State, []Message, bool, error) {
	rows, _ := h.pool.Query(ctx, `SELECT c.status, c.assignee, t.name, t.until, m.seq, m.id::text, m.content, m.author_name, m.created_at
		FROM conversations c
		LEFT JOIN conversation_typing t ON t.conversation_id = c.id AND t.tenant_id = c.tenant_id AND t.party = 'person'
			AND t.until > now() AND t.until - make_interval(secs => `+typingFor+`) > c.last_message_at AND c.status = 'HUMAN'
		LEFT JOIN LATERAL (SELECT seq, id, content, author_name, created_at FROM messages
			WHERE conversation_id = c.id AND tenant_id = c.tenant_id AND role = $4 AND seq > $3
			ORDER BY seq LIMIT $5) m ON true
		WHERE c.tenant_id = $1 AND c.id = $2
		ORDER BY m.seq`, tenantID, conversationID, after, parley.RoleHuman, maxBatch)
	st, msgs, err := scanSince(rows)
	return st, msgs, len(msgs) == maxBatch, err
}

// scanSince reads Since's rows: the state on each, and a message on
// each but the one of a conversation with none new.
func scanSince(rows pgx.Rows) (State, []Message, error) {
	var (
		st   State
		msgs []Message
		n    int
	)
	for rows.Next() {
		var (
			seq                 *int64
			id, content, author *string
			at, until           *time.Time
		)
		if err := rows.Scan(&st.Status, &st.Assignee, &st.Typing, &until, &seq, &id, &content, &author, &at); err != nil {
			rows.Close()
			return st, nil, fmt.Errorf("reading a conversation's news: %w", err)
		}
		n++
		if until != nil {
			st.TypingUntil = *until
		}
		if seq == nil {
			continue
		}
		m := Message{Seq: *seq, ID: *id, Content: *content, CreatedAt: *at}
		if author != nil {
			m.AuthorName = *author
		}
		msgs = append(msgs, m)
	}
	if err := rows.Err(); err != nil {
		return st, nil, fmt.Errorf("reading a conversation's news: %w", err)
	}
	if n == 0 {
		return st, nil, parley.Errorf(parley.KindNotFound, "Conversation not found")
	}
	return st, msgs, nil
}
