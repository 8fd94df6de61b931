package accounts

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley/db/internal/pgbase"
)

// LoginThrottle is one key's escalating wait between failed sign-ins: the
// first Free failures cost nothing; each one after them makes the key's
// next attempt wait, Base after the first, twice as long after each
// further one, at most Max. Failures are forgotten Memory after the last.
type LoginThrottle struct {
	Key       string
	Free      int
	Base, Max time.Duration
	Memory    time.Duration
	// ClearOnSuccess forgets the key's failures when an attempt succeeds;
	// otherwise a success only takes back its own count.
	ClearOnSuccess bool
}

// Wait is how long after its last failure the key must wait, with failures counted.
func (l LoginThrottle) Wait(failures int) time.Duration {
	n := failures - l.Free
	if n <= 0 {
		return 0
	}
	w := l.Base
	for range n - 1 {
		if w >= l.Max {
			break
		}
		w *= 2
	}
	return min(w, l.Max)
}

// LoginAttempt is an attempt StartLoginAttempt let through (Wait zero) or
// refused (Wait: how long until the next one may be made).
type LoginAttempt struct {
	Wait time.Duration
	// Failures are each key's failures before this attempt.
	Failures []int
	keys     []LoginThrottle
	at       time.Time
	prev     []time.Time // each key's last failure before this attempt
}

// loginFailure is one key's row as it stands at some time.
type loginFailure struct {
	failures int
	last     time.Time
}

// StartLoginAttempt refuses a sign-in attempt while one of its keys waits;
// otherwise it counts the attempt as a failure of every key at once, before
// the password is checked, so that attempts sent together count each
// other. A successful attempt takes its count back with ForgiveLoginAttempt.
func (d *Accounts) StartLoginAttempt(ctx context.Context, keys []LoginThrottle, now time.Time) (LoginAttempt, error) {
	a := LoginAttempt{keys: keys, at: now, Failures: make([]int, len(keys)), prev: make([]time.Time, len(keys))}
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = pgbase.StorableKey(k.Key)
	}
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		// Row locks make the check and the count one step for keys that
		// have failed before; a key without a row has no wait to check.
		rows, _ := tx.Query(ctx, `SELECT key, failures, last_failed_at FROM login_failures
			WHERE key = ANY($1) AND expires_at > $2 ORDER BY key FOR UPDATE`, names, now)
		current := map[string]loginFailure{}
		for rows.Next() {
			var k string
			var f loginFailure
			if err := rows.Scan(&k, &f.failures, &f.last); err != nil {
				return err
			}
			current[k] = f
		}
		if err := rows.Err(); err != nil {
			return err
		}
		for i, k := range keys {
			f := current[names[i]]
			a.Failures[i], a.prev[i] = f.failures, f.last
			if w := f.last.Add(k.Wait(f.failures)).Sub(now); w > a.Wait {
				a.Wait = w
			}
		}
		if a.Wait > 0 {
			return nil
		}
		// In the order of the keys, as the locks were taken: no deadlock
		// with another attempt on the same keys.
		order := make([]int, len(keys))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(x, y int) int { return strings.Compare(names[x], names[y]) })
		for _, i := range order {
			k := keys[i]
			if _, err := tx.Exec(ctx, `INSERT INTO login_failures AS f (key, failures, last_failed_at, expires_at)
				VALUES ($1, 1, $2, $3)
				ON CONFLICT (key) DO UPDATE SET
					failures = CASE WHEN f.expires_at > $2 THEN f.failures + 1 ELSE 1 END,
					last_failed_at = $2, expires_at = $3`, names[i], now, now.Add(k.Memory)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return LoginAttempt{}, fmt.Errorf("counting a sign-in attempt: %w", err)
	}
	return a, nil
}

// ForgiveLoginAttempt takes back the failure StartLoginAttempt counted in
// advance for an attempt that succeeded, and forgets the failures of its
// ClearOnSuccess keys.
func (d *Accounts) ForgiveLoginAttempt(ctx context.Context, a LoginAttempt) error {
	if a.Wait > 0 {
		return errors.New("forgiving a refused sign-in attempt")
	}
	b := &pgx.Batch{}
	for i, k := range a.keys {
		key := pgbase.StorableKey(k.Key)
		if k.ClearOnSuccess {
			b.Queue(`DELETE FROM login_failures WHERE key = $1`, key)
			continue
		}
		// The last failure goes back to the one before, unless another
		// attempt failed since.
		b.Queue(`UPDATE login_failures SET failures = greatest(failures - 1, 0),
			last_failed_at = CASE WHEN last_failed_at = $2 THEN $3 ELSE last_failed_at END
			WHERE key = $1`, key, a.at, a.prev[i])
	}
	if err := d.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("forgiving a sign-in attempt: %w", err)
	}
	return nil
}

// LoginFailures is the key's count of failures remembered at now.
func (d *Accounts) LoginFailures(ctx context.Context, key string, now time.Time) (int, error) {
	var n int
	err := d.pool.QueryRow(ctx, `SELECT coalesce(max(failures), 0) FROM login_failures WHERE key = $1 AND expires_at > $2`,
		pgbase.StorableKey(key), now).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("reading sign-in failures: %w", err)
	}
	return n, nil
}

// DeleteExpiredLoginFailures removes the sign-in failures forgotten by now
// and returns how many.
func (d *Accounts) DeleteExpiredLoginFailures(ctx context.Context, now time.Time) (int64, error) {
	tag, err := d.pool.Exec(ctx, `DELETE FROM login_failures WHERE expires_at <= $1`, now)
	if err != nil {
		return 0, fmt.Errorf("deleting expired sign-in failures: %w", err)
	}
	return tag.RowsAffected(), nil
}
