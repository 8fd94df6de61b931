package db

import (
	"context"
	"fmt"
	"time"
)

// Hit counts one event against key in the fixed window of length window that
// contains now, and returns the count including this one. Counters live in
// Postgres so that every instance sees the same numbers.
func (d *DB) Hit(ctx context.Context, key string, window time.Duration, now time.Time) (int, error) {
	key = storableKey(key)
	start := now.Truncate(window)
	var n int
	err := d.Pool.QueryRow(ctx, `INSERT INTO rate_counters (key, window_start, expires_at, count)
		VALUES ($1, $2, $3, 1)
		ON CONFLICT (key, window_start) DO UPDATE SET count = rate_counters.count + 1
		RETURNING count`, key, start, start.Add(window)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("counting %s: %w", key, err)
	}
	return n, nil
}

// Count returns the count of key in the window containing now, without adding to it.
func (d *DB) Count(ctx context.Context, key string, window time.Duration, now time.Time) (int, error) {
	key = storableKey(key)
	var n int
	err := d.Pool.QueryRow(ctx, `SELECT coalesce(sum(count), 0) FROM rate_counters WHERE key = $1 AND window_start = $2`,
		key, now.Truncate(window)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("reading counter %s: %w", key, err)
	}
	return n, nil
}

// ResetCounter forgets key's count in the window containing now.
func (d *DB) ResetCounter(ctx context.Context, key string, window time.Duration, now time.Time) error {
	key = storableKey(key)
	_, err := d.Pool.Exec(ctx, `DELETE FROM rate_counters WHERE key = $1 AND window_start = $2`, key, now.Truncate(window))
	return err
}

// DeleteExpiredCounters removes counters whose window has ended and returns how many.
func (d *DB) DeleteExpiredCounters(ctx context.Context, now time.Time) (int64, error) {
	tag, err := d.Pool.Exec(ctx, `DELETE FROM rate_counters WHERE expires_at < $1`, now)
	if err != nil {
		return 0, fmt.Errorf("deleting expired counters: %w", err)
	}
	return tag.RowsAffected(), nil
}
