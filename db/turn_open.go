package db

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/parley/parley"
)

// OpenTurn is TakeSessionLease followed by StartTurn in one round trip to
// PostgreSQL: it takes the session's lease (counting p's conversation
// against the monthly limit should the session have none, unless p is a
// test) and reads the session's state, as TakeSessionLease does, in one
// transaction committed asynchronously; then, in a second transaction of
// the same pipeline, committed synchronously, it stores the visitor's
// message, appended to the session's conversation or as the first of a new
// one started on the lease's count, provided the lease was taken (and, for
// a new conversation, counted). The message is on disk when OpenTurn
// returns, with the lease and the count before it.
//
// The state it returns says whether the message was stored
// (SessionState.Opened). It is not when the second transaction found
// anything out of the ordinary (the conversation is the other kind, test or
// not; the limit refused the count; the segment or visitor is not the
// tenant's; p breaks the start's rules; a statement failed): the caller then
// calls StartTurn with the state, as after TakeSessionLease, which stores it
// or gives the reason, and spends or takes back the count (Counted).
func (d *DB) OpenTurn(ctx context.Context, p parley.ConversationStart, message, holder, instance string, ttl time.Duration, turns int) (bool, parley.SessionState, error) {
	count := &p
	if p.Test {
		count = nil
	}
	txs := [][]statement{leaseStatements(p.TenantID, p.SessionID, holder, instance, ttl, turns, count)}
	content, leaseKey := storableKey(message), storableKey(p.SessionID)
	start := p
	if start.Validate() == nil {
		txs = append(txs, []statement{
			{openAppendSQL, []any{p.TenantID, p.SessionID, p.Test, content, leaseKey, holder}},
			{openStartSQL, append(startArgs(&start), content, leaseKey, holder)},
		})
	}
	var (
		got                string
		month              *time.Time
		leaseErr, stateErr error
		st                 parley.SessionState
		opened             *openedConversation
		created            bool
	)
	err := d.pipeline(ctx, txs, func(tx, i int, rows pgx.Rows) error {
		switch {
		case tx == 0 && i == 0: // the lease: its holder, the month counted
			if rows.Next() {
				dest := []any{&got}
				if count != nil {
					dest = append(dest, &month, nil)
				}
				leaseErr = rows.Scan(dest...)
			}
			rows.Close()
			leaseErr = cmpErr(leaseErr, rows.Err())
		case tx == 0: // the session's state
			st, stateErr = readSessionState(rows)
		default: // the message, appended (i = 0) or starting the conversation
			os, err := pgx.CollectRows(rows, pgx.RowToStructByName[openedConversation])
			if err == nil && len(os) == 1 {
				opened, created = &os[0], i == 1
			}
		}
		return nil
	})
	switch {
	case err != nil:
		return false, parley.SessionState{}, fmt.Errorf("opening the turn: %w", err)
	case leaseErr != nil:
		return false, parley.SessionState{}, fmt.Errorf("taking the session lease: %w", leaseErr)
	case got != holder:
		return false, parley.SessionState{}, nil
	}
	if opened != nil {
		st.Opened = &parley.OpenedTurn{Conversation: opened.Conversation, Created: created,
			Message: parley.Message{ID: opened.MessageID, ConversationID: opened.ID, Role: "user", Content: content,
				CreatedAt: opened.MessageCreatedAt}}
	}
	var uncount error
	if month != nil && !created {
		var pgErr *pgconn.PgError
		switch {
		case stateErr != nil && errors.As(stateErr, &pgErr):
			// PostgreSQL refused a statement of the lease's transaction,
			// which undid the count itself.
		case stateErr != nil, opened != nil:
			// The turn fails, or continued a conversation after all: the
			// count is not spent.
			uncount = d.uncountStart(ctx, p.TenantID, *month)
		default:
			st.Counted = month // for StartTurn to spend or take back
		}
	}
	if err := errors.Join(stateErr, uncount); err != nil {
		return true, parley.SessionState{}, err
	}
	return true, st, nil
}

// leaseHeldSQL is true when holder ($ placeholder) holds the lease of the
// session of tenant $1 stored as session (a placeholder).
func leaseHeldSQL(session, holder string) string {
	return `EXISTS (SELECT 1 FROM session_leases WHERE tenant_id = $1 AND session_id = ` + session + ` AND holder = ` + holder + `)`
}

// openAppendSQL is OpenTurn's message appended to the conversation of
// session $2 of tenant $1, when it is of the kind $3 (test or not) and the
// lease ($5: the session as the lease stores it) is held by $6: the
// conversation as updated and the message, as an openedConversation. $4 is
// the message.
var openAppendSQL = `WITH c AS (
		UPDATE conversations SET message_count = message_count + 1, last_message_at = clock_timestamp(), updated_at = now(),
			first_user_message = coalesce(first_user_message, $4)
		WHERE tenant_id = $1 AND session_id = $2 AND is_test = $3 AND ` + leaseHeldSQL("$5", "$6") + `
		RETURNING ` + conversationColumns + `),
	m AS (
		INSERT INTO messages (tenant_id, conversation_id, role, content)
		SELECT tenant_id, id, 'user', $4 FROM c RETURNING id, created_at)
	SELECT c.*, m.id AS message_id, m.created_at AS message_created_at FROM c, m`

// openStartSQL is OpenTurn's conversation started with its first message
// (startConversationSQL, $13 the session as the lease stores it, $14 the
// holder) when the lease is held, the session has no conversation yet and
// the lease's statement counted this one (or it is a test, never counted).
var openStartSQL = startConversationWhereSQL(leaseHeldSQL("$13", "$14") +
	` AND ($11::boolean OR current_setting('` + countedForSetting + `', true) = $14)
	AND NOT EXISTS (SELECT 1 FROM conversations WHERE tenant_id = $1 AND session_id = $4)`)

// cmpErr is the first of its errors that is not nil.
func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
