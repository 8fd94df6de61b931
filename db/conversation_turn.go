package db

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// openedConversation is a conversation started together with its first message.
type openedConversation struct {
	parley.Conversation
	MessageID        string    `db:"message_id"`
	MessageCreatedAt time.Time `db:"message_created_at"`
}

// StartTurn stores a visitor's message, the first step of a turn. The
// caller holds the session's lease and has just read the session's
// conversation with it (known, nil when there was none: see
// OpenTurn), so the message is appended to it without another
// look-up; else the conversation is started with the message as its first,
// counted against the monthly limit (see startConversation). A test start (p.Test) is neither
// refused nor counted by the limit, and a test never continues a visitor's
// conversation, nor a visitor a test (409). It reports whether it started the
// conversation. A start that fails the conversation's rules is 400; one the
// monthly limit refuses is 429 with parley.LimitDetails. Should two starts of one
// session race anyway, the second appends to the first's conversation.
// A start counted already (p.Counted, by the session's lease) is started on
// that count; when the turn starts no conversation, the count is taken back.
func (d *DB) StartTurn(ctx context.Context, p parley.ConversationStart, message string, known *parley.Conversation) (parley.Conversation, parley.Message, bool, error) {
	counted := p.Counted
	c, m, started, err := d.startTurn(ctx, p, message, known, &counted)
	if counted != nil { // the count was not spent
		if uerr := d.uncountStart(ctx, p.TenantID, *counted); uerr != nil {
			return parley.Conversation{}, parley.Message{}, false, errors.Join(err, uerr)
		}
	}
	return c, m, started, err
}

// startTurn is StartTurn; *counted is the count it has yet to spend, which
// it sets to nil once startConversation spent it (or took it back).
func (d *DB) startTurn(ctx context.Context, p parley.ConversationStart, message string, known *parley.Conversation, counted **time.Time) (parley.Conversation, parley.Message, bool, error) {
	p.Counted = nil
	if err := p.Validate(); err != nil {
		return parley.Conversation{}, parley.Message{}, false, err
	}
	content := pgbase.StorableKey(message)
	// The first round trusts known, what the session held when its lease
	// was taken; a second round, after another start of the session won,
	// looks the conversation up.
	for round := range 2 {
		var c parley.Conversation
		var err error = parley.Errorf(parley.KindNotFound, "Conversation not found")
		switch {
		case round > 0:
			c, err = conversationBySession(ctx, d.pool, p.TenantID, p.SessionID)
		case known != nil:
			c, err = *known, nil
		}
		if err == nil && c.Test != p.Test {
			return parley.Conversation{}, parley.Message{}, false, sessionOfOther(p.Test)
		}
		if err == nil {
			m, err := appendVisitorMessage(ctx, d.pool, p.TenantID, c.ID, content, p.IdempotencyKey)
			if err != nil {
				return parley.Conversation{}, parley.Message{}, false, err
			}
			c.MessageCount++
			return c, m, false, nil
		}
		if parley.ErrorKind(err) != parley.KindNotFound {
			return parley.Conversation{}, parley.Message{}, false, err
		}
		p.Counted, *counted = *counted, nil
		opened, err := d.startConversation(ctx, &p, content)
		p.Counted = nil
		switch {
		case err == nil:
			m := parley.Message{ID: opened.MessageID, ConversationID: opened.ID, Role: "user", Content: content,
				CreatedAt: opened.MessageCreatedAt}
			return opened.Conversation, m, true, nil
		case errors.Is(err, pgx.ErrNoRows) && round == 0:
			// Refused, but the session may have a conversation after all
			// (another start won before known was read): look, and
			// continue it rather than refuse a session that exists.
			continue
		case errors.Is(err, pgx.ErrNoRows):
			return parley.Conversation{}, parley.Message{}, false, startRefused(ctx, d.pool, p)
		case pgbase.IsUniqueViolation(err, "conversations_session"):
			continue // another start of the session won: append to its conversation
		default:
			return parley.Conversation{}, parley.Message{}, false, fmt.Errorf("starting conversation: %w", err)
		}
	}
	return parley.Conversation{}, parley.Message{}, false, errors.New("starting conversation: the session's conversation keeps changing")
}

// sessionOfOther refuses to continue a conversation of the other kind: a
// test chat's message in a visitor's session, or the reverse.
func sessionOfOther(test bool) error {
	if test {
		return parley.Errorf(parley.KindConflict, "This session id is a visitor's conversation; a test chat starts its own")
	}
	return parley.Errorf(parley.KindConflict, "This session id is a test conversation of the dashboard; start another session")
}

// startConversation starts p's conversation with content as its first
// message. Unless it is a test (neither refused by the limit nor counted) or
// was counted already (p.Counted, by the session's lease), the conversation is first counted against the monthly limit by a statement
// of its own (countStartSQL, which commits without waiting for the disk, so
// that the tenant's usage row is locked for the time of one short statement
// and no WAL flush), then inserted in one statement committed synchronously,
// which flushes the count with it. A start the limit refuses, or whose
// segment or visitor is not the tenant's, inserts nothing and is
// pgx.ErrNoRows; one whose insert fails takes its count back.
func (d *DB) startConversation(ctx context.Context, p *parley.ConversationStart, content string) (openedConversation, error) {
	month := p.Counted
	if !p.Test && month == nil {
		var ok bool
		if err := d.pool.QueryRow(ctx, countStartSQL, p.TenantID, p.SegmentID, p.VisitorID, p.Limit).Scan(&ok, &month); err != nil {
			return openedConversation{}, fmt.Errorf("counting the conversation: %w", err)
		}
		if month == nil {
			return openedConversation{}, pgx.ErrNoRows
		}
	}
	rows, _ := d.pool.Query(ctx, startConversationSQL, append(startArgs(p), content, p.IdempotencyKey)...)
	opened, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[openedConversation])
	if err != nil && month != nil {
		// Not started: take the count back.
		if uerr := d.uncountStart(ctx, p.TenantID, *month); uerr != nil {
			return openedConversation{}, errors.Join(err, uerr)
		}
	}
	return opened, err
}

// startConversationSQL starts a conversation (startArgs, $12 its first
// message, $13 the message's idempotency key, empty for none) when its segment
// and visitor are the tenant's: the conversation and its first message,
// returned as an openedConversation.
const startConversationSQL = startOKSQL + `,
		conv AS (
			` + insertConversationSQL + ` FROM ok WHERE ok
			RETURNING ` + pgbase.ConversationColumns + `),
		msg AS (
			INSERT INTO messages (tenant_id, conversation_id, role, content, idempotency_key)
			SELECT tenant_id, id, 'user', $12, nullif($13, '') FROM conv RETURNING id, created_at)
		SELECT conv.*, msg.id AS message_id, msg.created_at AS message_created_at FROM conv, msg`

// insertConversationSQL inserts a conversation of startArgs with $12 as its
// first message, up to its FROM: startConversationSQL's and openTurnSQL's.
const insertConversationSQL = `INSERT INTO conversations (tenant_id, segment_id, visitor_id, session_id, channel, visitor_type,
			agent_model, page_url, locale, metadata, is_test, message_count, first_user_message, last_message_at)
		SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 1, $12, clock_timestamp()`

// uncountStart takes back a count of a conversation that did not start
// after all, even should the caller have gone (a count left would only be
// a conversation too many).
func (d *DB) uncountStart(ctx context.Context, tenantID string, month time.Time) error {
	if _, err := d.pool.Exec(context.WithoutCancel(ctx), uncountStartSQL, tenantID, month); err != nil {
		return fmt.Errorf("taking back the conversation's count: %w", err)
	}
	return nil
}

// appendVisitorMessage is appendMessage for a visitor's message, stored with
// its idempotency key (ConversationStart.IdempotencyKey; "" for none).
func appendVisitorMessage(ctx context.Context, q pgbase.Querier, tenantID, conversationID, content, key string) (parley.Message, error) {
	if !pgbase.LooksLikeUUID(conversationID) {
		return parley.Message{}, parley.Errorf(parley.KindNotFound, "Conversation not found")
	}
	rows, _ := q.Query(ctx, appendVisitorMessageSQL, tenantID, conversationID, content, key)
	m, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.Message])
	if err != nil {
		return parley.Message{}, pgbase.NotFound(err, "Conversation")
	}
	return m, nil
}

// appendVisitorMessageSQL is appendMessageSQL for visitor's message $3 with
// its idempotency key $4 (empty for none).
const appendVisitorMessageSQL = `WITH c AS (
		UPDATE conversations SET message_count = message_count + 1, last_message_at = clock_timestamp(), updated_at = now(),
			first_user_message = coalesce(first_user_message, $3),
			repeated_question = repeated_question OR question_repeated(id, $3)
		WHERE tenant_id = $1 AND id = $2 RETURNING id, tenant_id)
	INSERT INTO messages (tenant_id, conversation_id, role, content, idempotency_key) SELECT tenant_id, id, 'user', $3, nullif($4, '') FROM c
	RETURNING ` + pgbase.MessageColumns
