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

// acquireLeaseSQL takes the lease of (tenant, session) for holder, a turn
// of instance $5 (empty for none), when nobody holds it or its holder is gone:
// its lease expired, or the instance it names stopped beating (see
// leaseInstanceGone). It returns the holder.
//
// Its transaction commits without waiting for the WAL to reach the disk
// (pgbase.AsyncCommit): a lease protects no data, and the turn's next statement,
// the visitor's message (StartTurn), commits synchronously, which flushes
// the WAL up to and including the lease; a PostgreSQL crash in between ends
// the turn anyway. One disk flush less per turn.
var acquireLeaseSQL = takeLeaseSQL("$2", "$3", "$4", "$5", false)

// acquireLeaseAdmittedSQL is acquireLeaseSQL taking the lease only when the
// address's count before it in its transaction admitted the turn
// (hitWithinSQL, admittedForSetting).
var acquireLeaseAdmittedSQL = takeLeaseSQL("$2", "$3", "$4", "$5", true)

// takeLeaseSQL is the statement of acquireLeaseSQL with the placeholders
// of its session, holder, ttl and instance (the tenant is $1): the lease
// of takeLeaseCountingSQL as well. admitted: only for a holder the
// address's count admitted (admittedForSetting).
func takeLeaseSQL(session, holder, ttl, instance string, admitted bool) string {
	where := ""
	if admitted {
		where = `
	WHERE current_setting('` + admittedForSetting + `', true) = ` + holder
	}
	return `INSERT INTO session_leases (tenant_id, session_id, holder, instance_id, busy_until)
	SELECT $1, ` + session + `, ` + holder + `, NULLIF(` + instance + `, '')::uuid, now() + make_interval(secs => ` + ttl + `)
	FROM ` + pgbase.AsyncCommit + where + `
	ON CONFLICT (tenant_id, session_id) DO UPDATE
	SET holder = EXCLUDED.holder, instance_id = EXCLUDED.instance_id, busy_until = EXCLUDED.busy_until
	WHERE session_leases.busy_until < now()
		OR ` + leaseInstanceGone + `
	RETURNING holder`
}

// takeLeaseCountingSQL is acquireLeaseSQL ($4 to $7: the session as
// stored, holder, ttl, instance) that also counts the conversation about to
// start against the month's usage of tenant $1 while under the limit $8, as
// countStartSQL does (startOKSQL: segment $2, visitor $3), when the lease
// is taken and the session ($9) has no conversation yet: a first message
// counts its conversation in the lease's round trip instead of one of its
// own. It returns the holder and the month counted, NULL when not counted,
// and leaves the holder it counted for in countedForSetting (its third
// column).
// Its transaction, the statement alone (takeLease), commits asynchronously,
// so the usage row stays locked only while it runs; the conversation's
// insert, which commits synchronously, flushes the count with it.
var takeLeaseCountingSQL = takeLeaseCounting(false)

// takeLeaseCountingAdmittedSQL is takeLeaseCountingSQL taking the lease
// only for a holder the address's count admitted, as
// acquireLeaseAdmittedSQL does.
var takeLeaseCountingAdmittedSQL = takeLeaseCounting(true)

// takeLeaseCounting is takeLeaseCountingSQL, the lease only for an
// admitted holder when admitted.
func takeLeaseCounting(admitted bool) string {
	return startOKSQL + `,
	lease AS (` + takeLeaseSQL("$4", "$5", "$6", "$7", admitted) + `),
	counted AS (
		INSERT INTO conversation_usage (tenant_id, month, count)
		SELECT $1, date_trunc('month', now() AT TIME ZONE 'UTC')::date, 1 FROM ok, lease
		WHERE ok AND lease.holder = $5 AND $8 > 0
			AND NOT EXISTS (SELECT 1 FROM conversations WHERE tenant_id = $1 AND session_id = $9)
		ON CONFLICT (tenant_id, month) DO UPDATE SET count = conversation_usage.count + 1
		WHERE conversation_usage.count < $8
		RETURNING month)
	SELECT lease.holder, counted.month,
		set_config('` + countedForSetting + `', CASE WHEN counted.month IS NULL THEN '' ELSE $5 END, false)
	FROM lease LEFT JOIN counted ON true`
}

// countedForSetting is a setting of the database session (set_config, not
// local to the transaction) in which takeLeaseCountingSQL leaves the holder
// whose conversation it counted (empty when it counted none): OpenTurn's
// insert, a later transaction of the same pipeline, starts the conversation
// only on that count. A holder is new for every turn, so a value left on a
// pooled connection by an earlier turn never matches.
const countedForSetting = "parley.counted_for"

// leaseStatements are the lease (counting count's conversation when not
// nil; only for a holder the address's count admitted when admitted), then
// the session's state (with the message of idempotency key key, when not
// "").
func leaseStatements(tenantID, sessionID, holder, instance string, ttl time.Duration, turns int, count *parley.ConversationStart, key string, admitted bool) []statement {
	acquire, counting := acquireLeaseSQL, takeLeaseCountingSQL
	if admitted {
		acquire, counting = acquireLeaseAdmittedSQL, takeLeaseCountingAdmittedSQL
	}
	lease := statement{acquire, []any{tenantID, pgbase.StorableKey(sessionID), holder, ttl.Seconds(), instance}}
	if count != nil {
		lease = statement{counting, []any{tenantID, count.SegmentID, count.VisitorID, pgbase.StorableKey(sessionID), holder,
			ttl.Seconds(), instance, count.Limit, sessionID}}
	}
	return []statement{lease, {sessionStateSQL, []any{tenantID, sessionID, max(turns, 0), key}}}
}

// sessionStateSQL reads the conversation of session $2 of tenant $1 and
// its last $3 turns in one statement, the turns as arrays, oldest first;
// and, when $4 is not empty, the visitor's message stored with idempotency key
// $4, the first answer after it (the assistant's or a person's), and
// whether its turn ended: an answer or a tool run stored after it. It runs
// while the session's lease is held, so no turn of the session stores
// anything meanwhile.
const sessionStateSQL = `SELECT ` + pgbase.ConversationColumns + `, h.roles, h.contents, h.times,
		k.keyed_id, k.keyed_content, k.keyed_created_at, k.reply_id, k.reply_role, k.reply_content, k.reply_created_at,
		coalesce(k.keyed_ended, false) AS keyed_ended
	FROM conversations
	CROSS JOIN LATERAL (SELECT coalesce(array_agg(role ORDER BY seq), '{}') AS roles,
			coalesce(array_agg(content ORDER BY seq), '{}') AS contents,
			coalesce(array_agg(created_at ORDER BY seq), '{}') AS times
		FROM (SELECT m.seq, CASE m.role WHEN 'human' THEN 'assistant' ELSE m.role END AS role, m.content, m.created_at FROM messages m
			WHERE m.conversation_id = conversations.id AND m.role IN ('user', 'assistant', 'human')
			ORDER BY m.seq DESC LIMIT $3) t) h
	LEFT JOIN LATERAL (SELECT m.id AS keyed_id, m.content AS keyed_content, m.created_at AS keyed_created_at,
			r.id AS reply_id, r.role AS reply_role, r.content AS reply_content, r.created_at AS reply_created_at,
			r.id IS NOT NULL OR EXISTS (SELECT 1 FROM tool_history th
				WHERE th.tenant_id = $1 AND th.conversation_id = conversations.id AND th.created_at >= m.created_at) AS keyed_ended
		FROM messages m
		LEFT JOIN LATERAL (SELECT id, role, content, created_at FROM messages
			WHERE conversation_id = conversations.id AND seq > m.seq AND role IN ('assistant', 'human') ORDER BY seq LIMIT 1) r ON true
		WHERE $4 <> '' AND m.conversation_id = conversations.id AND m.idempotency_key = $4 AND m.role = 'user') k ON true
	WHERE tenant_id = $1 AND session_id = $2`

// readSessionState reads the session's conversation and its last turns
// (sessionStateSQL).
func readSessionState(rows pgx.Rows) (parley.SessionState, error) {
	var st parley.SessionState
	c, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[sessionConversation])
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return parley.SessionState{}, fmt.Errorf("reading the session's conversation: %w", err)
	case len(c.Contents) != len(c.Roles) || len(c.Times) != len(c.Roles):
		return parley.SessionState{}, errors.New("reading the session's conversation: its turns do not line up")
	default:
		st.Conversation = &c.Conversation
		st.Turns = make([]parley.Turn, len(c.Roles))
		for i := range c.Roles {
			st.Turns[i] = parley.Turn{Role: c.Roles[i], Content: c.Contents[i], Timestamp: c.Times[i]}
		}
		st.Keyed = c.keyed()
	}
	return st, nil
}

// sessionConversation is a conversation with its last turns, as the
// session's state reads them (sessionStateSQL).
type sessionConversation struct {
	parley.Conversation
	Roles    []string    `db:"roles"`
	Contents []string    `db:"contents"`
	Times    []time.Time `db:"times"`
	// The message of the turn's idempotency key, its answer and whether
	// its turn ended; nil when there is none.
	KeyedID        *string    `db:"keyed_id"`
	KeyedContent   *string    `db:"keyed_content"`
	KeyedCreatedAt *time.Time `db:"keyed_created_at"`
	ReplyID        *string    `db:"reply_id"`
	ReplyRole      *string    `db:"reply_role"`
	ReplyContent   *string    `db:"reply_content"`
	ReplyCreatedAt *time.Time `db:"reply_created_at"`
	KeyedEnded     bool       `db:"keyed_ended"`
}

// keyed is the message of the turn's idempotency key, nil when there is
// none.
func (c *sessionConversation) keyed() *parley.KeyedMessage {
	if c.KeyedID == nil {
		return nil
	}
	k := &parley.KeyedMessage{Ended: c.KeyedEnded, Message: parley.Message{ID: *c.KeyedID, ConversationID: c.ID,
		Role: "user", Content: *c.KeyedContent, CreatedAt: *c.KeyedCreatedAt}}
	if c.ReplyID != nil {
		k.Reply = &parley.Message{ID: *c.ReplyID, ConversationID: c.ID, Role: *c.ReplyRole,
			Content: *c.ReplyContent, CreatedAt: *c.ReplyCreatedAt}
	}
	return k
}

// RenewSessionLease extends holder's lease to ttl from now, reporting
// whether holder still had it (false: it expired and another turn took it,
// or it was given back).
func (d *DB) RenewSessionLease(ctx context.Context, tenantID, sessionID, holder string, ttl time.Duration) (bool, error) {
	tag, err := d.pool.Exec(ctx, `UPDATE session_leases SET busy_until = now() + make_interval(secs => $4)
		WHERE tenant_id = $1 AND session_id = $2 AND holder = $3`, tenantID, pgbase.StorableKey(sessionID), holder, ttl.Seconds())
	if err != nil {
		return false, fmt.Errorf("renewing the session lease: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// ReleaseSessionLease gives the lease back, when holder still has it.
func (d *DB) ReleaseSessionLease(ctx context.Context, tenantID, sessionID, holder string) error {
	if _, err := d.pool.Exec(ctx, releaseLeaseSQL, tenantID, pgbase.StorableKey(sessionID), holder); err != nil {
		return fmt.Errorf("releasing the session lease: %w", err)
	}
	return nil
}

const releaseLeaseSQL = `DELETE FROM session_leases WHERE tenant_id = $1 AND session_id = $2 AND holder = $3`

// SaveTurn stores a turn in one transaction: the reply, the tool history,
// the submissions with their submission.created events and deliveries, the
// conversation's status (an escalation with its conversation.escalated
// event), and the session lease given back (when the record
// names its holder). It returns the stored reply (zero when there was none).
// The lease is not given back unless the rest is stored.
func (d *DB) SaveTurn(ctx context.Context, r parley.TurnRecord) (parley.Message, error) {
	if len(r.ToolRuns) == 0 && !r.Escalated {
		// The common turn, text alone: one round trip.
		return d.saveReply(ctx, r)
	}
	var m parley.Message
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		if r.Escalated {
			// The visitor asked for a person: the answer before this turn's
			// question did not do (a knowledge gap's sign).
			if _, err := tx.Exec(ctx, markPersonAskedSQL, r.TenantID, r.ConversationID, parley.GapPersonAsked); err != nil {
				return fmt.Errorf("marking the answer before an escalation: %w", err)
			}
		}
		if r.Reply != "" {
			var err error
			if m, err = appendMessage(ctx, tx, r.TenantID, r.ConversationID, "assistant", r.Reply, r.Knowledge, r.GapSignals, r.QuestionKey); err != nil {
				return err
			}
		}
		for _, run := range r.ToolRuns {
			if err := appendToolHistory(ctx, tx, r.TenantID, r.ConversationID, run.Call); err != nil {
				return err
			}
			if run.Submission == nil {
				continue
			}
			ns := *run.Submission
			ns.TenantID, ns.ConversationID = r.TenantID, &r.ConversationID
			if _, _, err := d.createSubmissionInTx(ctx, tx, ns, r.Transcript); err != nil {
				return err
			}
		}
		if r.Escalated {
			if err := d.escalateConversation(ctx, tx, r.TenantID, r.ConversationID); err != nil {
				return err
			}
		}
		if r.LeaseHolder != "" {
			if _, err := tx.Exec(ctx, releaseLeaseSQL, r.TenantID, pgbase.StorableKey(r.SessionID), r.LeaseHolder); err != nil {
				return fmt.Errorf("releasing the session lease: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return parley.Message{}, err
	}
	return m, nil
}

// saveReply stores a turn's reply and gives the session's lease back in one
// statement (so one round trip and one transaction): the lease is not given
// back unless the reply is stored.
func (d *DB) saveReply(ctx context.Context, r parley.TurnRecord) (parley.Message, error) {
	if !pgbase.LooksLikeUUID(r.ConversationID) {
		return parley.Message{}, parley.Errorf(parley.KindNotFound, "Conversation not found")
	}
	switch {
	case r.Reply == "" && r.LeaseHolder == "":
		return parley.Message{}, nil
	case r.Reply == "":
		return parley.Message{}, d.ReleaseSessionLease(ctx, r.TenantID, r.SessionID, r.LeaseHolder)
	case r.LeaseHolder != "":
		// A turn's reply: written with those of the turns finishing
		// beside it (DB.replies).
		return saveReplyWith(ctx, &d.replies, r, d.writeReplies)
	}
	return d.saveReplyAlone(ctx, r)
}

// saveReplyAlone is saveReply of a reply, in a statement of its own.
func (d *DB) saveReplyAlone(ctx context.Context, r parley.TurnRecord) (parley.Message, error) {
	sql, args := appendMessageSQL, []any{r.TenantID, r.ConversationID, "assistant", pgbase.StorableKey(r.Reply), knowledgeArg(r.Knowledge),
		r.GapSignals, questionKeyArg(r.QuestionKey)}
	if r.LeaseHolder != "" {
		sql, args = saveReplySQL, append(args, pgbase.StorableKey(r.SessionID), r.LeaseHolder)
	}
	rows, _ := d.pool.Query(ctx, sql, args...)
	m, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.Message])
	if err != nil {
		return parley.Message{}, pgbase.NotFound(err, "Conversation")
	}
	return m, nil
}

// saveReplySQL is appendMessageSQL (an assistant message) giving the
// session's lease ($8, $9: session, holder) back in the same statement.
const saveReplySQL = `WITH released AS (
		DELETE FROM session_leases WHERE tenant_id = $1 AND session_id = $8 AND holder = $9),
	` + appendMessageCTE

// markPersonAskedSQL adds sign $3 (parley.GapPersonAsked) to the
// conversation's last answer, the one before the question of the turn
// being stored (whose reply is stored after it): the visitor asked for a
// person right after it. None for a conversation without an answer yet.
const markPersonAskedSQL = `UPDATE messages SET gap_signals = gap_signals | $3::smallint
	WHERE id = (SELECT id FROM messages WHERE tenant_id = $1 AND conversation_id = $2 AND role = 'assistant'
		ORDER BY seq DESC LIMIT 1)`
