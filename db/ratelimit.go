package db

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Hit counts one event against key in the fixed window of length window that
// contains now, and returns the count including this one. Counters live in
// Postgres so that every instance sees the same numbers.
func (d *DB) Hit(ctx context.Context, key string, window time.Duration, now time.Time) (int, error) {
	key = storableKey(key)
	start := now.Truncate(window)
	var n int
	err := d.pool.QueryRow(ctx, `INSERT INTO rate_counters (key, window_start, expires_at, count)
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
	err := d.pool.QueryRow(ctx, `SELECT coalesce(sum(count), 0) FROM rate_counters WHERE key = $1 AND window_start = $2`,
		key, now.Truncate(window)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("reading counter %s: %w", key, err)
	}
	return n, nil
}

// DeleteExpiredCounters removes counters whose window has ended and returns how many.
func (d *DB) DeleteExpiredCounters(ctx context.Context, now time.Time) (int64, error) {
	tag, err := d.pool.Exec(ctx, `DELETE FROM rate_counters WHERE expires_at < $1`, now)
	if err != nil {
		return 0, fmt.Errorf("deleting expired counters: %w", err)
	}
	return tag.RowsAffected(), nil
}

// Window is one fixed-window limit of HitWithin: at most Limit events of Key
// per Length.
type Window struct {
	Key    string
	Length time.Duration
	Limit  int
}

// HitWithin counts one event against every window, in one statement, only
// when each is under its limit; otherwise it counts against none, so a
// client retrying while refused is not refused for longer. It returns each
// window's count: after the event when it was counted, before it when not.
// counted reports which. Concurrent calls racing past the check cannot push
// a count past its limit unseen: the counts after the event say so. The
// count commits without waiting for the disk (asyncCommit): a PostgreSQL
// crash may forget the last fraction of a second of counts.
func (d *DB) HitWithin(ctx context.Context, windows []Window, now time.Time) (counts []int, counted bool, err error) {
	counts, counted, _, err = d.HitWithinForTenant(ctx, windows, now, "")
	return counts, counted, err
}

// HitWithinForTenant is HitWithin that also reads, in the same statement,
// the configuration version of the tenant with that slug (nil when none, or
// slug is empty): what the chat's configuration cache is checked against
// (ChatTenantAndSegment).
func (d *DB) HitWithinForTenant(ctx context.Context, windows []Window, now time.Time, slug string) (counts []int, counted bool, version *int64, err error) {
	// The windows are a VALUES list rather than unnest(arrays): the planner
	// then knows how few they are and probes the counters' primary key,
	// where it would guess a hundred rows for unnest and scan the table.
	var values strings.Builder
	args := make([]any, 0, 5*len(windows))
	for i, w := range windows {
		start := now.Truncate(w.Length)
		args = append(args, i, storableKey(w.Key), start, start.Add(w.Length), w.Limit)
		n := len(args)
		if i > 0 {
			values.WriteString(", ")
		}
		fmt.Fprintf(&values, "($%d::int, $%d::text, $%d::timestamptz, $%d::timestamptz, $%d::int)", n-4, n-3, n-2, n-1, n)
	}
	tenantVersion := "NULL::bigint"
	if slug != "" && storable(slug) {
		args = append(args, slug)
		tenantVersion = fmt.Sprintf("(SELECT config_version FROM tenants WHERE slug = $%d)", len(args))
	}
	rows, _ := d.pool.Query(ctx, `WITH w AS (
			SELECT w.ord, w.key, w.start, w.ends, w.lim, coalesce(c.count, 0) AS n
			FROM (VALUES `+values.String()+`) AS w(ord, key, start, ends, lim)
			CROSS JOIN `+asyncCommit+`
			LEFT JOIN rate_counters c ON c.key = w.key AND c.window_start = w.start),
		hit AS (
			INSERT INTO rate_counters (key, window_start, expires_at, count)
			SELECT key, start, ends, 1 FROM w WHERE NOT EXISTS (SELECT 1 FROM w WHERE n >= lim)
			ON CONFLICT (key, window_start) DO UPDATE SET count = rate_counters.count + 1
			RETURNING key, count)
		SELECT w.n, hit.count, `+tenantVersion+` FROM w LEFT JOIN hit ON hit.key = w.key ORDER BY w.ord`, args...)
	counts = make([]int, 0, len(windows))
	counted = true
	for rows.Next() {
		var before int
		var after *int
		if err := rows.Scan(&before, &after, &version); err != nil {
			return nil, false, nil, fmt.Errorf("counting rate windows: %w", err)
		}
		if after == nil {
			counted = false
			counts = append(counts, before)
		} else {
			counts = append(counts, *after)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, false, nil, fmt.Errorf("counting rate windows: %w", err)
	}
	return counts, counted, version, nil
}
