package accounts

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
)

// TwoFactor is a person's authenticator for two-step sign-in: the TOTP
// secret, sealed; EnabledAt is nil while its setup awaits the first code.
// RecoveryLeft counts the recovery codes not used yet.
type TwoFactor struct {
	Secret       []byte     `db:"secret"`
	EnabledAt    *time.Time `db:"enabled_at"`
	LastStep     int64      `db:"last_step"`
	RecoveryLeft int        `db:"recovery_left"`
}

// On reports whether two-step sign-in is on.
func (t TwoFactor) On() bool { return t.EnabledAt != nil }

// TwoFactorOf is the user's authenticator, NotFound when they never began a setup.
func (d *Accounts) TwoFactorOf(ctx context.Context, userID string) (TwoFactor, error) {
	rows, _ := d.pool.Query(ctx, `SELECT secret, enabled_at, last_step,
		(SELECT count(*) FROM user_recovery_codes r WHERE r.user_id = f.user_id AND r.used_at IS NULL)::int AS recovery_left
		FROM user_two_factor f WHERE user_id = $1`, userID)
	t, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[TwoFactor])
	if errors.Is(err, pgx.ErrNoRows) {
		return TwoFactor{}, parley.Errorf(parley.KindNotFound, "Two-step sign-in not set up")
	}
	if err != nil {
		return TwoFactor{}, fmt.Errorf("reading two-step sign-in: %w", err)
	}
	return t, nil
}

// StartTwoFactor keeps a new sealed secret for the user's setup, replacing
// one that waits for its first code; it is Conflict when two-step sign-in is on.
func (d *Accounts) StartTwoFactor(ctx context.Context, userID string, sealed []byte) error {
	tag, err := d.pool.Exec(ctx, `INSERT INTO user_two_factor (user_id, secret) VALUES ($1, $2)
		ON CONFLICT (user_id) DO UPDATE SET secret = $2, last_step = 0 WHERE user_two_factor.enabled_at IS NULL`,
		userID, sealed)
	if err != nil {
		return fmt.Errorf("starting two-step sign-in: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return parley.Errorf(parley.KindConflict, "Two-step sign-in is already on")
	}
	return nil
}

// EnableTwoFactor turns the user's waiting setup on with the step of the
// code that confirmed it (not accepted again) and the recovery codes'
// hashes, in one transaction; Conflict when it is on already or no setup waits.
func (d *Accounts) EnableTwoFactor(ctx context.Context, userID string, step int64, codeHashes [][]byte, now time.Time) error {
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE user_two_factor SET enabled_at = $2, last_step = $3
			WHERE user_id = $1 AND enabled_at IS NULL`, userID, now, step)
		if err != nil {
			return fmt.Errorf("turning two-step sign-in on: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return parley.Errorf(parley.KindConflict, "Two-step sign-in is already on, or its setup was not started")
		}
		return replaceRecoveryCodes(ctx, tx, userID, codeHashes)
	})
}

// ReplaceRecoveryCodes gives the user new recovery codes; the old ones stop working.
func (d *Accounts) ReplaceRecoveryCodes(ctx context.Context, userID string, codeHashes [][]byte) error {
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		return replaceRecoveryCodes(ctx, tx, userID, codeHashes)
	})
}

func replaceRecoveryCodes(ctx context.Context, tx pgx.Tx, userID string, codeHashes [][]byte) error {
	if _, err := tx.Exec(ctx, `DELETE FROM user_recovery_codes WHERE user_id = $1`, userID); err != nil {
		return fmt.Errorf("removing recovery codes: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO user_recovery_codes (user_id, code_hash) SELECT $1, unnest($2::bytea[])`,
		userID, codeHashes); err != nil {
		return fmt.Errorf("adding recovery codes: %w", err)
	}
	return nil
}

// UseTOTPStep accepts a code of the user's time step step once: it reports
// false when a code of that step, or of a later one, was accepted before
// (a replayed code), or when two-step sign-in is off.
func (d *Accounts) UseTOTPStep(ctx context.Context, userID string, step int64) (bool, error) {
	tag, err := d.pool.Exec(ctx, `UPDATE user_two_factor SET last_step = $2
		WHERE user_id = $1 AND enabled_at IS NOT NULL AND last_step < $2`, userID, step)
	if err != nil {
		return false, fmt.Errorf("using a two-step code: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// UseRecoveryCode uses the user's recovery code of that hash, once: false
// when it is not one of theirs or was used already.
func (d *Accounts) UseRecoveryCode(ctx context.Context, userID string, codeHash []byte, now time.Time) (bool, error) {
	tag, err := d.pool.Exec(ctx, `UPDATE user_recovery_codes SET used_at = $3
		WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL
		AND EXISTS (SELECT 1 FROM user_two_factor WHERE user_id = $1 AND enabled_at IS NOT NULL)`, userID, codeHash, now)
	if err != nil {
		return false, fmt.Errorf("using a recovery code: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// DisableTwoFactor turns the user's two-step sign-in off and forgets its
// secret and recovery codes.
func (d *Accounts) DisableTwoFactor(ctx context.Context, userID string) error {
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM user_recovery_codes WHERE user_id = $1`, userID); err != nil {
			return fmt.Errorf("removing recovery codes: %w", err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM user_two_factor WHERE user_id = $1`, userID); err != nil {
			return fmt.Errorf("turning two-step sign-in off: %w", err)
		}
		return nil
	})
}

// SetTenantRequiresTwoFactor sets whether the tenant's members must sign
// in to it in two steps.
func (d *Accounts) SetTenantRequiresTwoFactor(ctx context.Context, tenantID string, on bool) error {
	tag, err := d.pool.Exec(ctx, `UPDATE tenants SET require_two_factor = $2 WHERE id = $1`, tenantID, on)
	if err != nil {
		return fmt.Errorf("setting the two-step requirement: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return parley.Errorf(parley.KindNotFound, "Tenant not found")
	}
	return nil
}

// MemberTwoFactor is a member of a tenant and whether they sign in in two steps.
type MemberTwoFactor struct {
	UserID    string `db:"user_id"`
	Email     string `db:"email"`
	Role      string `db:"role"`
	TwoFactor bool   `db:"two_factor"`
}

// MembersTwoFactor lists the tenant's members, by email, each with
// whether their two-step sign-in is on.
func (d *Accounts) MembersTwoFactor(ctx context.Context, tenantID string) ([]MemberTwoFactor, error) {
	rows, _ := d.pool.Query(ctx, `SELECT u.id AS user_id, u.email, m.role,
		EXISTS (SELECT 1 FROM user_two_factor f WHERE f.user_id = u.id AND f.enabled_at IS NOT NULL) AS two_factor
		FROM tenant_members m JOIN users u ON u.id = m.user_id
		WHERE m.tenant_id = $1 ORDER BY lower(u.email)`, tenantID)
	ms, err := pgx.CollectRows(rows, pgx.RowToStructByName[MemberTwoFactor])
	if err != nil {
		return nil, fmt.Errorf("listing members: %w", err)
	}
	return ms, nil
}
