package db

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
)

// SessionLeaseTTL bounds a session lease: a holder that crashed blocks the
// session for at most this long. A live holder renews its lease while its
// turn runs (RenewSessionLease).
const SessionLeaseTTL = 2 * time.Minute

// acquireLeaseSQL takes the lease of (tenant, session) for holder when
// nobody holds it or its holder's lease expired; it returns the holder.
const acquireLeaseSQL = `INSERT INTO session_leases (tenant_id, session_id, holder, busy_until)
	VALUES ($1, $2, $3, now() + make_interval(secs => $4))
	ON CONFLICT (tenant_id, session_id) DO UPDATE SET holder = EXCLUDED.holder, busy_until = EXCLUDED.busy_until
	WHERE session_leases.busy_until < now()
	RETURNING holder`

// SessionState is what TryAcquireSessionLeaseFinding read once it held the
// lease: the session's conversation (nil when there is none yet) and its
// last user and assistant turns, oldest first.
type SessionState struct {
	Conversation *parley.Conversation
	Turns        []parley.Turn
}

// TryAcquireSessionLeaseFinding takes the lease of (tenant, session) for
// holder when nobody holds it or its holder's lease expired, reporting
// whether it did, and then reads the session's state with up to turns recent
// turns, in the same round trip. It holds no lock or connection once it
// returns.
func (d *DB) TryAcquireSessionLeaseFinding(ctx context.Context, tenantID, sessionID, holder string, ttl time.Duration, turns int) (bool, SessionState, error) {
	batch := &pgx.Batch{}
	batch.Queue(acquireLeaseSQL, tenantID, storableKey(sessionID), holder, ttl.Seconds())
	batch.Queue(`SELECT `+conversationColumns+` FROM conversations WHERE tenant_id = $1 AND session_id = $2`, tenantID, sessionID)
	batch.Queue(`SELECT role, content, created_at FROM (
			SELECT m.seq, m.role, m.content, m.created_at FROM messages m
			JOIN conversations c ON c.id = m.conversation_id
			WHERE c.tenant_id = $1 AND c.session_id = $2 AND m.role IN ('user', 'assistant')
			ORDER BY m.seq DESC LIMIT $3) t
		ORDER BY seq`, tenantID, sessionID, max(turns, 0))
	br := d.Pool.SendBatch(ctx, batch)
	defer br.Close()
	var got string
	if err := br.QueryRow().Scan(&got); errors.Is(err, pgx.ErrNoRows) {
		return false, SessionState{}, nil
	} else if err != nil {
		return false, SessionState{}, fmt.Errorf("taking the session lease: %w", err)
	}
	if got != holder {
		return false, SessionState{}, nil
	}
	var st SessionState
	rows, _ := br.Query()
	c, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.Conversation])
	switch {
	case err == nil:
		st.Conversation = &c
	case !errors.Is(err, pgx.ErrNoRows):
		return true, SessionState{}, fmt.Errorf("finding the session's conversation: %w", err)
	}
	rows, _ = br.Query()
	if st.Turns, err = pgx.CollectRows(rows, pgx.RowToStructByName[parley.Turn]); err != nil {
		return true, SessionState{}, fmt.Errorf("reading recent turns: %w", err)
	}
	return true, st, br.Close()
}

// RenewSessionLease extends holder's lease to ttl from now, reporting
// whether holder still had it (false: it expired and another turn took it,
// or it was given back).
func (d *DB) RenewSessionLease(ctx context.Context, tenantID, sessionID, holder string, ttl time.Duration) (bool, error) {
	tag, err := d.Pool.Exec(ctx, `UPDATE session_leases SET busy_until = now() + make_interval(secs => $4)
		WHERE tenant_id = $1 AND session_id = $2 AND holder = $3`, tenantID, storableKey(sessionID), holder, ttl.Seconds())
	if err != nil {
		return false, fmt.Errorf("renewing the session lease: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// ReleaseSessionLease gives the lease back, when holder still has it.
func (d *DB) ReleaseSessionLease(ctx context.Context, tenantID, sessionID, holder string) error {
	if _, err := d.Pool.Exec(ctx, releaseLeaseSQL, tenantID, storableKey(sessionID), holder); err != nil {
		return fmt.Errorf("releasing the session lease: %w", err)
	}
	return nil
}

const releaseLeaseSQL = `DELETE FROM session_leases WHERE tenant_id = $1 AND session_id = $2 AND holder = $3`

// AppendReplyReleasingLease stores an assistant reply of the conversation and
// gives the session's lease back, in one round trip: the two statements go
// as one batch, which PostgreSQL runs as one implicit transaction, so the
// lease is not given back unless the reply is stored. It is the end of a
// turn that ran no tools.
func (d *DB) AppendReplyReleasingLease(ctx context.Context, tenantID, conversationID, content, sessionID, holder string) (parley.Message, error) {
	if !looksLikeUUID(conversationID) {
		return parley.Message{}, parley.Errorf(parley.KindNotFound, "Conversation not found")
	}
	batch := &pgx.Batch{}
	batch.Queue(appendMessageSQL, tenantID, conversationID, "assistant", storableKey(content))
	batch.Queue(releaseLeaseSQL, tenantID, storableKey(sessionID), holder)
	br := d.Pool.SendBatch(ctx, batch)
	rows, _ := br.Query()
	m, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.Message])
	if err != nil {
		br.Close()
		return parley.Message{}, notFound(err, "Conversation")
	}
	if _, err := br.Exec(); err != nil {
		br.Close()
		return parley.Message{}, fmt.Errorf("releasing the session lease: %w", err)
	}
	if err := br.Close(); err != nil {
		return parley.Message{}, fmt.Errorf("storing the reply: %w", err)
	}
	return m, nil
}
