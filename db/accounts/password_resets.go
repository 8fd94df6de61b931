package accounts

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/parley/parley/db/internal/pgbase"
)

// PasswordReset is an emailed password-reset link, known by its token's
// SHA-256.
type PasswordReset struct {
	UserID    string     `db:"user_id"`
	CreatedAt time.Time  `db:"created_at"`
	ExpiresAt time.Time  `db:"expires_at"`
	UsedAt    *time.Time `db:"used_at"`
}

// Errors of ResetPassword for a link that exists but no longer resets.
var (
	ErrResetUsed    = errors.New("password reset link already used")
	ErrResetExpired = errors.New("password reset link expired")
)

// resetRetention is how long a reset row outlives its link, so that an old
// link is still told apart from a wrong one.
const resetRetention = 7 * 24 * time.Hour

// CreatePasswordReset stores a link for the user, valid until expires, by
// the SHA-256 of its token; it deletes the rows that expired more than a
// week ago.
func (d *Accounts) CreatePasswordReset(ctx context.Context, userID string, tokenHash []byte, now, expires time.Time) error {
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM password_resets WHERE expires_at < $1`, now.Add(-resetRetention)); err != nil {
			return fmt.Errorf("deleting old password resets: %w", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO password_resets (token_hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4)`,
			tokenHash, userID, now, expires); err != nil {
			return fmt.Errorf("storing password reset: %w", err)
		}
		return nil
	})
}

// PasswordResetByHash is the link whose token has that SHA-256; NotFound
// when there is none.
func (d *Accounts) PasswordResetByHash(ctx context.Context, tokenHash []byte) (PasswordReset, error) {
	rows, _ := d.pool.Query(ctx, `SELECT user_id, created_at, expires_at, used_at FROM password_resets WHERE token_hash = $1`, tokenHash)
	r, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[PasswordReset])
	if err != nil {
		return PasswordReset{}, pgbase.NotFound(err, "Password reset")
	}
	return r, nil
}

// ResetPassword uses the link whose token has that SHA-256 to set its
// user's password hash, in one transaction that also uses every other
// unused link of the user's. It answers NotFound for an unknown link,
// ErrResetUsed or ErrResetExpired for one that no longer resets, and the
// user otherwise.
func (d *Accounts) ResetPassword(ctx context.Context, tokenHash []byte, passwordHash string, now time.Time) (User, error) {
	var u User
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		// FOR UPDATE: of two concurrent resets with one link, the second
		// waits and then finds it used.
		rows, _ := tx.Query(ctx, `SELECT user_id, created_at, expires_at, used_at FROM password_resets
			WHERE token_hash = $1 FOR UPDATE`, tokenHash)
		r, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[PasswordReset])
		switch {
		case err != nil:
			return pgbase.NotFound(err, "Password reset")
		case r.UsedAt != nil:
			return ErrResetUsed
		case !now.Before(r.ExpiresAt):
			return ErrResetExpired
		}
		rows, _ = tx.Query(ctx, `UPDATE users SET password_hash = $2 WHERE id = $1
			RETURNING id, email, password_hash, created_at`, r.UserID, passwordHash)
		if u, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[User]); err != nil {
			return pgbase.NotFound(err, "User")
		}
		if _, err := tx.Exec(ctx, `UPDATE password_resets SET used_at = $2 WHERE user_id = $1 AND used_at IS NULL`, r.UserID, now); err != nil {
			return fmt.Errorf("using password resets: %w", err)
		}
		// Every session of the old password ends now, not at its next
		// request, so that none stays listed.
		_, err = endOtherSessions(ctx, tx, r.UserID, "")
		return err
	})
	if err != nil {
		return User{}, err
	}
	return u, nil
}

// InsertJob enqueues a River job that goes with no change of ours (a
// change's jobs are inserted in its own transaction, like webhook
// deliveries).
func (d *Accounts) InsertJob(ctx context.Context, args river.JobArgs) error {
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		if _, err := d.jobs.InsertTx(ctx, tx, args, nil); err != nil {
			return fmt.Errorf("enqueuing %s: %w", args.Kind(), err)
		}
		return nil
	})
}
