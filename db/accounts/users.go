package accounts

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// User is an admin login.
type User struct {
	ID           string    `db:"id"`
	Email        string    `db:"email"`
	PasswordHash string    `db:"password_hash"`
	CreatedAt    time.Time `db:"created_at"`
}

// Membership is a tenant a user may administer.
type Membership struct {
	TenantID   string `db:"tenant_id"`
	TenantSlug string `db:"slug"`
	TenantName string `db:"name"`
	Role       string `db:"role"`
	// RequireTwoFactor is the tenant's requirement that its members sign
	// in to it in two steps (migration 00047).
	RequireTwoFactor bool `db:"require_two_factor"`
}

// AddOwnerInTx creates, in tx, the user unless one with that email exists, then makes them an owner of the tenant.
// It reports whether a new user was created.
func AddOwnerInTx(ctx context.Context, tx pgx.Tx, tenantID, email, passwordHash string) (bool, error) {
	var userID string
	var created bool
	err := tx.QueryRow(ctx, `SELECT id FROM users WHERE lower(email) = lower($1)`, email).Scan(&userID)
	switch {
	case err == pgx.ErrNoRows:
		if err := tx.QueryRow(ctx, `INSERT INTO users (email, password_hash) VALUES ($1, $2) RETURNING id`,
			email, passwordHash).Scan(&userID); err != nil {
			return false, fmt.Errorf("inserting user: %w", err)
		}
		created = true
	case err != nil:
		return false, fmt.Errorf("finding user: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO tenant_members (tenant_id, user_id, role) VALUES ($1, $2, 'owner')
		ON CONFLICT DO NOTHING`, tenantID, userID); err != nil {
		return false, fmt.Errorf("adding owner: %w", err)
	}
	return created, nil
}

// AddOwner makes the user with that email an owner of the tenant, creating the
// user with the given password hash if needed. When the user exists and
// resetPassword is set, their password is replaced.
func (d *Accounts) AddOwner(ctx context.Context, tenantID, email, passwordHash string, resetPassword bool) error {
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		created, err := AddOwnerInTx(ctx, tx, tenantID, email, passwordHash)
		if err != nil {
			return err
		}
		if !created && resetPassword {
			if _, err := tx.Exec(ctx, `UPDATE users SET password_hash = $2 WHERE lower(email) = lower($1)`,
				email, passwordHash); err != nil {
				return fmt.Errorf("updating password: %w", err)
			}
		}
		return nil
	})
}

// UserByEmail returns the user with that email, case-insensitively.
func (d *Accounts) UserByEmail(ctx context.Context, email string) (User, error) {
	if !pgbase.Storable(email) {
		return User{}, parley.Errorf(parley.KindNotFound, "User not found")
	}
	rows, _ := d.pool.Query(ctx, `SELECT id, email, password_hash, created_at FROM users WHERE lower(email) = lower($1)`, email)
	u, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[User])
	if err != nil {
		return User{}, pgbase.NotFound(err, "User")
	}
	return u, nil
}

// UserByID returns the user with that id.
func (d *Accounts) UserByID(ctx context.Context, id string) (User, error) {
	rows, _ := d.pool.Query(ctx, `SELECT id, email, password_hash, created_at FROM users WHERE id = $1`, id)
	u, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[User])
	if err != nil {
		return User{}, pgbase.NotFound(err, "User")
	}
	return u, nil
}

// Memberships lists the tenants a user administers, by name.
func (d *Accounts) Memberships(ctx context.Context, userID string) ([]Membership, error) {
	rows, _ := d.pool.Query(ctx, `SELECT m.tenant_id, t.slug, t.name, m.role, t.require_two_factor
		FROM tenant_members m JOIN tenants t ON t.id = m.tenant_id
		WHERE m.user_id = $1 ORDER BY t.name, t.slug`, userID)
	ms, err := pgx.CollectRows(rows, pgx.RowToStructByName[Membership])
	if err != nil {
		return nil, fmt.Errorf("listing memberships: %w", err)
	}
	return ms, nil
}
