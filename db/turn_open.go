package db

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// OpenTurn takes the session's lease and stores the visitor's message (as
// StartTurn does) in one round trip to PostgreSQL, as a pipeline of two
// transactions. The first takes the
// session's lease, counting p's conversation against the monthly limit
// should the session have none (unless p is a test), and commits
// asynchronously at once, so that the tenant's usage row is locked for one
// statement. The second, committed synchronously, reads the session's state
// (sessionStateSQL), then stores the visitor's message, appended to
// the session's conversation or as the first of a new one started on the
// lease's count, provided the lease was taken (and, for a new conversation,
// counted). The message is on disk when OpenTurn returns, with the lease and
// the count before it.
//
// The state it returns says whether the message was stored
// (SessionState.Opened). It is not when the second transaction found
// anything out of the ordinary (the conversation is the other kind, test or
// not; the limit refused the count; the segment or visitor is not the
// tenant's; p breaks the start's rules; a statement failed): the caller then
// calls StartTurn with the state, which stores it
// or gives the reason, and spends or takes back the count (Counted).
//
// While another turn's message is being written (alone, as above, or in a
// batch), the second transaction reads the state alone, and the message is
// stored with those of the other turns that came meanwhile, in one
// statement (DB.opens, writeOpens): the same decisions, taken row by row,
// with the lease's count read from the first transaction's answer instead
// of from its connection's setting.
func (d *DB) OpenTurn(ctx context.Context, p parley.ConversationStart, message, holder, instance string, ttl time.Duration, turns int) (bool, parley.SessionState, error) {
	count := &p
	if p.Test {
		count = nil
	}
	content, start := pgbase.StorableKey(message), p
	valid := start.Validate() == nil
	var open *statement
	lead := valid && d.opens.lead()
	if lead {
		// No visitor's message is being written: this one goes in the
		// lease's round trip.
		defer d.opens.handOn()
		open = &statement{openTurnSQL, append(startArgs(&start), content, pgbase.StorableKey(p.SessionID), holder, p.IdempotencyKey)}
	}
	l, err := d.takeLease(ctx, p.TenantID, p.SessionID, holder, instance, ttl, turns, count, open, p.IdempotencyKey, p.Admit)
	if valid && !lead && err == nil && l.taken && l.stateErr == nil {
		// Another turn's message was being written: this one goes with
		// those of the turns queued meanwhile (writeOpens).
		o := &pendingOpen{p: &start, content: content, holder: holder, counted: l.month != nil}
		d.opens.run(ctx, o, d.writeOpens)
		if o.err != nil {
			// What became of the message is unknown: the turn fails, its
			// count kept, as when the lease's round trip fails.
			return false, parley.SessionState{}, fmt.Errorf("storing the visitor's message: %w", o.err)
		}
		l.opened = o.opened
	}
	return d.settleTurn(ctx, p.TenantID, content, l, err)
}

// leaseTaken is what takeLease read: whether the lease was taken, the
// session's state, the month the lease counted a new conversation in (nil
// when it counted none), the message stored with the lease (nil when none
// was) and the state's read error.
type leaseTaken struct {
	taken    bool
	st       parley.SessionState
	month    *time.Time
	opened   *openedTurn
	stateErr error
}

// takeLease is OpenTurn's pipeline: the lease (counting count's
// conversation when not nil) in the first transaction; the session's state
// (with the message stored earlier with idempotency key key, when not "")
// and, when open is not nil, the message in the second.
//
// With admit, the first transaction counts the request against its
// address's limit before the lease, which is taken only when the count
// admits the turn (hitWithinSQL, admittedForSetting); what the count read
// is filled in admit. A lease refused for want of admission reads as not
// taken (leaseTaken.taken false), as one held by another turn does:
// admit.Admitted tells them apart. The count commits with the lease, so a failure of the first
// transaction leaves it unmade (admit.Made false).
func (d *DB) takeLease(ctx context.Context, tenantID, sessionID, holder, instance string, ttl time.Duration, turns int,
	count *parley.ConversationStart, open *statement, key string, admit *parley.Admission) (leaseTaken, error) {
	sts := leaseStatements(tenantID, sessionID, holder, instance, ttl, turns, count, key, admit != nil)
	txs := [][]statement{sts[:1], sts[1:]}
	leaseAt := 0 // the lease's statement in the first transaction
	if admit != nil {
		txs[0] = []statement{byIndex, hitWithinSQL(admit.Windows, admit.Now, admit.Slug, holder, admit.Version), sts[0]}
		leaseAt = 2
	}
	if open != nil {
		txs[1] = append(txs[1], *open)
	}
	var (
		h                   = hits{err: errSkipped}
		admitted, leaseRead bool
		got                 string
		leaseErr            error
		l                   leaseTaken
	)
	perr := d.pipeline(ctx, txs, func(tx, i int, rows pgx.Rows) {
		switch {
		case tx == 0 && i == 1 && admit != nil: // the address's count
			h = readHits(rows, len(admit.Windows), &admitted)
		case tx == 0 && i != leaseAt:
		case tx == 0: // the lease: its holder, the month counted
			if rows.Next() {
				dest := []any{&got}
				if count != nil {
					dest = append(dest, &l.month, nil) // and the mark of countedForSetting
				}
				leaseErr = rows.Scan(dest...)
			}
			rows.Close()
			leaseErr = cmp.Or(leaseErr, rows.Err())
			leaseRead = leaseErr == nil
		case i == 0: // the session's state
			l.st, l.stateErr = readSessionState(rows)
		default: // the message
			os, err := pgx.CollectRows(rows, pgx.RowToStructByName[openedTurn])
			if err == nil && len(os) == 1 {
				l.opened = &os[0]
			}
		}
	})
	if admit != nil && h.err == nil && leaseRead {
		// The first transaction ran to its commit: the count is made
		// whatever came after.
		admit.Made, admit.Counts, admit.Counted, admit.Current, admit.Admitted = true, h.counts, h.counted, h.version, admitted
	}
	switch {
	case perr != nil:
		return leaseTaken{}, fmt.Errorf("taking the session lease: %w", perr)
	case leaseErr != nil:
		return leaseTaken{}, fmt.Errorf("taking the session lease: %w", leaseErr)
	case admit != nil && h.err != nil:
		return leaseTaken{}, fmt.Errorf("taking the session lease: %w", h.err)
	}
	l.taken = got == holder
	return l, nil
}

// settleTurn is OpenTurn's answer from what takeLease read (err, its
// error) and the visitor's message (content) stored or not: the count of a
// conversation not started is left to StartTurn (SessionState.Counted), or
// taken back when the turn fails or continued a conversation after all.
func (d *DB) settleTurn(ctx context.Context, tenantID, content string, l leaseTaken, err error) (bool, parley.SessionState, error) {
	switch {
	case err != nil:
		return false, parley.SessionState{}, err
	case !l.taken:
		return false, parley.SessionState{}, nil
	}
	st, opened := l.st, l.opened
	created := opened != nil && opened.Created
	if opened != nil {
		st.Opened = &parley.OpenedTurn{Conversation: opened.Conversation, Created: created,
			Message: parley.Message{ID: opened.MessageID, ConversationID: opened.ID, Role: "user", Content: content,
				CreatedAt: opened.MessageCreatedAt}}
	}
	if l.month != nil && !created {
		if l.stateErr != nil || opened != nil {
			// The turn fails, or continued a conversation after all: the
			// count is not spent.
			if err := d.uncountStart(ctx, tenantID, *l.month); err != nil {
				return true, parley.SessionState{}, errors.Join(l.stateErr, err)
			}
		} else {
			st.Counted = l.month // for StartTurn to spend or take back
		}
	}
	if l.stateErr != nil {
		return true, parley.SessionState{}, l.stateErr
	}
	return true, st, nil
}

// openedTurn is a row of openTurnSQL.
type openedTurn struct {
	openedConversation
	Created bool `db:"created"`
}

// openTurnSQL is OpenTurn's message ($12; startArgs before it) stored when
// holder $14 holds the lease of the session ($13, as the lease stores it):
// appended to the session's conversation when it is of the kind $11 (test
// or not); else, should the session have none, as the first message of a
// new conversation (startConversationSQL) that the lease's statement
// counted (or that is a test, never counted), with its idempotency key $15
// (empty for none). Nothing is stored otherwise: another kind of conversation,
// a segment or visitor not the tenant's, no count, a message of the session
// stored with the same key. One row when stored: the conversation after it, the message, and
// whether it started the conversation.
var openTurnSQL = startOKSQL + `,
	held AS (SELECT EXISTS (SELECT 1 FROM session_leases WHERE tenant_id = $1 AND session_id = $13 AND holder = $14)
		AND ($15 = '' OR NOT EXISTS (SELECT 1 FROM conversations kc JOIN messages km ON km.conversation_id = kc.id
			WHERE kc.tenant_id = $1 AND kc.session_id = $4 AND km.idempotency_key = $15)) AS held),
	appended AS (
		UPDATE conversations SET message_count = message_count + 1, last_message_at = clock_timestamp(), updated_at = now(),
			first_user_message = coalesce(first_user_message, $12),
			repeated_question = repeated_question OR question_repeated(id, $12)
		WHERE tenant_id = $1 AND session_id = $4 AND is_test = $11 AND (SELECT held FROM held)
		RETURNING ` + pgbase.ConversationColumns + `),
	started AS (
		` + insertConversationSQL + ` FROM ok, held
		WHERE ok AND held AND NOT EXISTS (SELECT 1 FROM appended)
			AND ($11::boolean OR current_setting('` + countedForSetting + `', true) = $14)
		` + conversationOfTurnSQL + `
	msg AS (
		INSERT INTO messages (tenant_id, conversation_id, role, content, idempotency_key)
		SELECT tenant_id, id, 'user', $12, nullif($15, '') FROM conv RETURNING id, created_at)
	SELECT conv.*, msg.id AS message_id, msg.created_at AS message_created_at FROM conv, msg`

// conversationOfTurnSQL ends the CTE started of openTurnSQL and
// openTurnsSQL (a conversation inserted, unless the session has one of the
// other kind) and gives conv, the conversation appended to or started,
// with whether it was started.
const conversationOfTurnSQL = `-- a conversation of the other kind: nothing, rather than an error
		ON CONFLICT ON CONSTRAINT conversations_session DO NOTHING
		RETURNING ` + pgbase.ConversationColumns + `),
	conv AS (
		SELECT *, false AS created FROM appended UNION ALL SELECT *, true FROM started),`
