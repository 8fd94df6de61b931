package db

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// leaseInstanceGone is the SQL condition that a row of session_leases names
// an instance that is no longer alive: its row is gone, or its heartbeat is
// older than its stale_after.
const leaseInstanceGone = `(session_leases.instance_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM instances i
		WHERE i.id = session_leases.instance_id AND i.heartbeat_at + i.stale_after >= now()))`

// RegisterInstance adds the row of a starting server process and returns
// its id; the process is alive while its heartbeat (BeatInstance) is at
// most staleAfter old. It also deletes the rows of the instances that
// stopped beating and the session leases no live instance holds: their
// holders died (taking a lease already treats those leases as free: leaseInstanceGone).
func (d *DB) RegisterInstance(ctx context.Context, staleAfter time.Duration) (string, error) {
	var id string
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM instances WHERE heartbeat_at + stale_after < now()`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM session_leases WHERE `+leaseInstanceGone); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `INSERT INTO instances (id, stale_after) VALUES (gen_random_uuid(), make_interval(secs => $1)) RETURNING id`,
			staleAfter.Seconds()).Scan(&id)
	})
	if err != nil {
		return "", fmt.Errorf("registering the instance: %w", err)
	}
	return id, nil
}

// BeatInstance records that instance id is alive. A row a peer deleted
// while this instance's heartbeat was stale (the database out of reach for
// a while) is added back, by a statement of its own: the beat's own
// statement only updates, so that a beat PostgreSQL runs late (its caller
// gave up waiting on it) cannot add back the row of an instance that has
// since stopped and removed it (RemoveInstance).
func (d *DB) BeatInstance(ctx context.Context, id string, staleAfter time.Duration) error {
	tag, err := d.pool.Exec(ctx, `UPDATE instances SET heartbeat_at = now(), stale_after = make_interval(secs => $2) WHERE id = $1`,
		id, staleAfter.Seconds())
	if err == nil && tag.RowsAffected() == 0 {
		_, err = d.pool.Exec(ctx, `INSERT INTO instances (id, stale_after) VALUES ($1, make_interval(secs => $2))
			ON CONFLICT (id) DO UPDATE SET heartbeat_at = now(), stale_after = EXCLUDED.stale_after`, id, staleAfter.Seconds())
	}
	if err != nil {
		return fmt.Errorf("beating the instance's heartbeat: %w", err)
	}
	return nil
}

// RemoveInstance deletes the row of an instance that shuts down cleanly:
// any lease it still holds is free from then on.
func (d *DB) RemoveInstance(ctx context.Context, id string) error {
	if _, err := d.pool.Exec(ctx, `DELETE FROM instances WHERE id = $1`, id); err != nil {
		return fmt.Errorf("removing the instance: %w", err)
	}
	return nil
}
