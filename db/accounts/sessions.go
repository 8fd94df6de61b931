package accounts

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// SessionSeenEvery is how often a session's last activity is written: at
// most once in this time, not at every request.
const SessionSeenEvery = 5 * time.Minute

// Session is one of a person's dashboard sessions, as the account page
// lists it: Key is the session store's key of it (its token's SHA-256),
// by which the page marks the one it is shown in.
type Session struct {
	ID        string    `db:"id"`
	Key       string    `db:"session_key"`
	CreatedAt time.Time `db:"created_at"`
	SeenAt    time.Time `db:"seen_at"`
	UserAgent string    `db:"user_agent"`
	Address   string    `db:"address"`
}

// RecordSession adds the session stored under key (committed already:
// its row is referenced) to its user's sessions.
func (d *Accounts) RecordSession(ctx context.Context, userID, key string, s Session, now time.Time) error {
	_, err := d.pool.Exec(ctx, `INSERT INTO user_sessions (session_key, user_id, created_at, seen_at, user_agent, address)
		VALUES ($1, $2, $3, $3, $4, $5)
		ON CONFLICT (session_key) DO UPDATE SET user_id = $2, created_at = $3, seen_at = $3, user_agent = $4, address = $5`,
		key, userID, now, pgbase.StorableKey(clip(s.UserAgent, 200)), pgbase.StorableKey(clip(s.Address, 100)))
	if err != nil {
		return fmt.Errorf("recording the session: %w", err)
	}
	return nil
}

// clip cuts s to at most n bytes, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// TouchSession moves the last activity of the session stored under key to
// now, from its client address, when it was written SessionSeenEvery ago
// or more. It reports false when the session has no row: it was ended
// (a request of its browser in flight as it was may have stored it again).
func (d *Accounts) TouchSession(ctx context.Context, key, address string, now time.Time) (bool, error) {
	tag, err := d.pool.Exec(ctx, `UPDATE user_sessions SET seen_at = $2, address = $3
		WHERE session_key = $1`, key, now, pgbase.StorableKey(clip(address, 100)))
	if err != nil {
		return false, fmt.Errorf("touching the session: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// UserSessions lists the user's sessions that have not expired, the last
// active first. Expiry is the session store's, by the database's clock.
func (d *Accounts) UserSessions(ctx context.Context, userID string) ([]Session, error) {
	rows, _ := d.pool.Query(ctx, `SELECT u.id, u.session_key, u.created_at, u.seen_at, u.user_agent, u.address
		FROM user_sessions u JOIN sessions s ON s.token = u.session_key
		WHERE u.user_id = $1 AND s.expiry > now() ORDER BY u.seen_at DESC, u.created_at DESC`, userID)
	ss, err := pgx.CollectRows(rows, pgx.RowToStructByName[Session])
	if err != nil {
		return nil, fmt.Errorf("listing sessions: %w", err)
	}
	return ss, nil
}

// EndSession deletes the user's session id from the session store (its
// browser is signed out at its next request) and from the user's
// sessions; another user's session, an unknown one, and the one stored
// under current (signed out by signing out) are NotFound.
func (d *Accounts) EndSession(ctx context.Context, userID, id, current string) error {
	if !pgbase.LooksLikeUUID(id) {
		return parley.Errorf(parley.KindNotFound, "Session not found")
	}
	tag, err := d.pool.Exec(ctx, `DELETE FROM sessions WHERE token =
		(SELECT session_key FROM user_sessions WHERE id = $2 AND user_id = $1 AND session_key <> $3)`, userID, id, current)
	if err != nil {
		return fmt.Errorf("ending the session: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return parley.Errorf(parley.KindNotFound, "Session not found")
	}
	return nil
}

// EndOtherSessions deletes every session of the user but the one stored
// under keep, and says how many it ended.
func (d *Accounts) EndOtherSessions(ctx context.Context, userID, keep string) (int, error) {
	return endOtherSessions(ctx, d.pool, userID, keep)
}

func endOtherSessions(ctx context.Context, q pgbase.Querier, userID, keep string) (int, error) {
	tag, err := q.Exec(ctx, `DELETE FROM sessions WHERE token IN
		(SELECT session_key FROM user_sessions WHERE user_id = $1 AND session_key <> $2)`, userID, keep)
	if err != nil {
		return 0, fmt.Errorf("ending sessions: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// ChangePassword sets the user's password hash and ends their other
// sessions (those signed in with the old password would end at their next
// request anyway), keeping the one stored under keep, in one transaction.
func (d *Accounts) ChangePassword(ctx context.Context, userID, passwordHash, keep string) error {
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE users SET password_hash = $2 WHERE id = $1`, userID, passwordHash)
		if err != nil {
			return fmt.Errorf("changing the password: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return parley.Errorf(parley.KindNotFound, "User not found")
		}
		_, err = endOtherSessions(ctx, tx, userID, keep)
		return err
	})
}
