package db

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// SessionLeaseTTL bounds a session lease: a holder that crashed blocks the
// session for at most this long.
const SessionLeaseTTL = 2 * time.Minute

// TryAcquireSessionLease takes the lease of (tenant, session) for holder
// when nobody holds it or its holder's lease expired, reporting whether it
// did. It holds no lock or connection once it returns.
func (d *DB) TryAcquireSessionLease(ctx context.Context, tenantID, sessionID, holder string) (bool, error) {
	var got string
	err := d.Pool.QueryRow(ctx, `INSERT INTO session_leases (tenant_id, session_id, holder, busy_until)
		VALUES ($1, $2, $3, now() + make_interval(secs => $4))
		ON CONFLICT (tenant_id, session_id) DO UPDATE SET holder = EXCLUDED.holder, busy_until = EXCLUDED.busy_until
		WHERE session_leases.busy_until < now()
		RETURNING holder`, tenantID, storableKey(sessionID), holder, SessionLeaseTTL.Seconds()).Scan(&got)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("taking the session lease: %w", err)
	}
	return got == holder, nil
}

// ReleaseSessionLease gives the lease back, when holder still has it.
func (d *DB) ReleaseSessionLease(ctx context.Context, tenantID, sessionID, holder string) error {
	if _, err := d.Pool.Exec(ctx, `DELETE FROM session_leases WHERE tenant_id = $1 AND session_id = $2 AND holder = $3`,
		tenantID, storableKey(sessionID), holder); err != nil {
		return fmt.Errorf("releasing the session lease: %w", err)
	}
	return nil
}
