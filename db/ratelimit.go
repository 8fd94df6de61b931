package db

import (
	"cmp"
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
	"github.com/parley/parley/db/visitors"
)

// Count returns the count of key in the window containing now, without adding to it.
func (d *DB) Count(ctx context.Context, key string, window time.Duration, now time.Time) (int, error) {
	key = pgbase.StorableKey(key)
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
type Window = parley.RateWindow

// HitWithin counts one event against every window, in one statement, only
// when each is under its limit; otherwise it counts against none, so a
// client retrying while refused is not refused for longer. It returns each
// window's count: after the event when it was counted, before it when not.
// counted reports which. Concurrent calls racing past the check cannot push
// a count past its limit unseen: the counts after the event say so. The
// count commits without waiting for the disk (pgbase.AsyncCommit): a PostgreSQL
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
	st := hitWithinSQL(windows, now, slug, "", 0)
	h := hits{err: errSkipped}
	err = d.pipeline(ctx, [][]statement{{byIndex, st}}, func(_, i int, rows pgx.Rows) {
		if i == 1 {
			h = readHits(rows, len(windows), nil)
		}
	})
	if err != nil {
		return nil, false, nil, fmt.Errorf("counting rate windows: %w", err)
	}
	return h.counts, h.counted, h.version, h.err
}

// HitWithinResolving is HitWithinForTenant that also resolves, in the same
// round trip and transaction, the tenant's anonymous visitor of
// anonymousID (visitors.ResolveAnonymousVisitor: found, or created on its
// first message), but only when the count admits the request and the
// tenant's configuration is at version, the one the request was let in
// on: a request refused, or let in on a configuration since changed,
// writes no visitor. v is nil then, and when the resolve met a concurrent
// first message of the same id: the caller resolves it again.
func (d *DB) HitWithinResolving(ctx context.Context, windows []Window, now time.Time, slug string, version int64,
	tenantID, anonymousID string) (counts []int, counted bool, current *int64, v *parley.Visitor, err error) {
	holder := rand.Text() // this request's mark in admittedForSetting
	resolve := statement{visitors.ResolveAnonymousSQL(fmt.Sprintf("current_setting('%s', true) = $3", admittedForSetting)),
		[]any{tenantID, visitors.AnonymousKey(anonymousID), holder}}
	h := hits{err: errSkipped}
	var admitted bool
	var verr error
	err = d.pipeline(ctx, [][]statement{{byIndex, hitWithinSQL(windows, now, slug, holder, version), resolve}}, func(_, i int, rows pgx.Rows) {
		switch i {
		case 1:
			h = readHits(rows, len(windows), &admitted)
		case 2:
			vs, err := pgx.CollectRows(rows, pgx.RowToStructByName[parley.Visitor])
			if err != nil {
				verr = err
			} else if len(vs) == 1 {
				v = &vs[0]
			}
		}
	})
	if err = cmp.Or(err, h.err, verr); err != nil {
		return nil, false, nil, nil, fmt.Errorf("counting rate windows: %w", err)
	}
	return h.counts, h.counted, h.version, v, nil
}

// byIndex, the first statement of a transaction, has the transaction's
// later statements planned without a sequential scan where an index serves
// (enable_seqscan off until the transaction ends). It goes before the rate
// windows' statement (hitWithinSQL). That statement is prepared, and once
// PostgreSQL keeps one plan for it on a connection, the plan holds until the
// table's statistics change (an analysis, a vacuum). Planned while
// rate_counters is nearly empty, as on a new deployment, after a quiet
// night whose counters expired, or at the start of make bench-load, it
// scans the whole table on every call; a flood of new addresses, what the
// limits are for, then makes each call slower than the last until
// autovacuum gets round to the table, about a minute on a quiet database,
// longer on a busy one. Measured: a first message's statement went from 0.6
// to 1.9 ms over 4,000 turns at c1 (BENCHMARKS.md, issue 18, ninth pass).
// Through the index, a call reads the same few pages whatever the table's
// size.
var byIndex = statement{sql: `SELECT set_config('enable_seqscan', 'off', true)`}

// hits is what hitWithinSQL read: each window's count, after the event when
// it was counted (counted), before it when not; the configuration version
// read with them.
type hits struct {
	counts  []int
	counted bool
	version *int64
	err     error
}

// readHits reads the rows of hitWithinSQL; admitted, when not nil, is set
// to its admission's column (when made for a holder).
func readHits(rows pgx.Rows, n int, admitted *bool) hits {
	defer rows.Close()
	h := hits{counts: make([]int, 0, n), counted: true}
	for rows.Next() {
		var before int
		var after *int
		dest := []any{&before, &after, &h.version}
		if admitted != nil {
			dest = append(dest, admitted)
		}
		if err := rows.Scan(dest...); err != nil {
			return hits{err: fmt.Errorf("counting rate windows: %w", err)}
		}
		if after == nil {
			h.counted = false
			h.counts = append(h.counts, before)
		} else {
			h.counts = append(h.counts, *after)
		}
	}
	if err := rows.Err(); err != nil {
		return hits{err: fmt.Errorf("counting rate windows: %w", err)}
	}
	return h
}

// admittedForSetting is a setting of the database session (set_config,
// not local to the transaction) in which hitWithinSQL, counting for a turn
// (its holder), leaves that holder when the count admits the turn: every
// window counted and none past its limit, and the tenant's configuration
// at the version the turn was let in on. The lease's statement of the same
// transaction takes the lease only for that holder (takeLeaseSQL). A
// holder is new for every turn, so a value left on a pooled connection by
// an earlier turn never matches.
const admittedForSetting = "parley.admitted_for"

// hitWithinSQL is HitWithinForTenant's statement. With a holder (not ""),
// it is also a turn's admission (parley.Admission): it leaves the holder
// in admittedForSetting when the count admits the turn and the tenant's
// configuration version is version, and says so in a fourth column.
func hitWithinSQL(windows []Window, now time.Time, slug, holder string, version int64) statement {
	// The windows are a VALUES list rather than unnest(arrays): the planner
	// then knows how few they are and probes the counters' primary key,
	// where it would guess a hundred rows for unnest and scan the table.
	var values strings.Builder
	args := make([]any, 0, 5*len(windows)+3)
	for i, w := range windows {
		start := now.Truncate(w.Length)
		args = append(args, i, pgbase.StorableKey(w.Key), start, start.Add(w.Length), w.Limit)
		n := len(args)
		if i > 0 {
			values.WriteString(", ")
		}
		fmt.Fprintf(&values, "($%d::int, $%d::text, $%d::timestamptz, $%d::timestamptz, $%d::int)", n-4, n-3, n-2, n-1, n)
	}
	tenantVersion := "NULL::bigint"
	if slug != "" && pgbase.Storable(slug) {
		args = append(args, slug)
		tenantVersion = fmt.Sprintf("(SELECT config_version FROM tenants WHERE slug = $%d)", len(args))
	}
	// The admission: the windows were counted (all or none are) and none
	// is past its limit (a race; handlers.AddressLimit.Verdict decides
	// alike), and the version is the one the turn was let in on.
	var admission, admitted, admittedJoin string
	if holder != "" {
		args = append(args, holder, version)
		h, ver := len(args)-1, len(args)
		admission = fmt.Sprintf(`,
		adm AS (SELECT set_config('%s', CASE WHEN EXISTS (SELECT 1 FROM hit)
			AND NOT EXISTS (SELECT 1 FROM hit JOIN w ON w.key = hit.key WHERE hit.count > w.lim)
			AND (SELECT version FROM v) = $%d::bigint THEN $%d::text ELSE '' END, false) = $%d::text AS admitted)`,
			admittedForSetting, ver, h, h)
		admitted, admittedJoin = ", adm.admitted", " CROSS JOIN adm"
	}
	return statement{`WITH w AS (
			SELECT w.ord, w.key, w.start, w.ends, w.lim, coalesce(c.count, 0) AS n
			FROM (VALUES ` + values.String() + `) AS w(ord, key, start, ends, lim)
			CROSS JOIN ` + pgbase.AsyncCommit + `
			LEFT JOIN rate_counters c ON c.key = w.key AND c.window_start = w.start),
		hit AS (
			INSERT INTO rate_counters (key, window_start, expires_at, count)
			SELECT key, start, ends, 1 FROM w WHERE NOT EXISTS (SELECT 1 FROM w WHERE n >= lim)
			ON CONFLICT (key, window_start) DO UPDATE SET count = rate_counters.count + 1
			RETURNING key, count),
		v AS (SELECT ` + tenantVersion + ` AS version)` + admission + `
		SELECT w.n, hit.count, v.version` + admitted + `
		FROM w LEFT JOIN hit ON hit.key = w.key CROSS JOIN v` + admittedJoin + ` ORDER BY w.ord`, args}
}
