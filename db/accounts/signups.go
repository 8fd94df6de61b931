package accounts

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/parley/parley"
	"github.com/parley/parley/db/audit"
	"github.com/parley/parley/db/internal/pgbase"
)

// The kinds of sign-up link (migration 00048).
const (
	// SignupConfirmation is an open sign-up waiting for its address to be
	// confirmed by the emailed link.
	SignupConfirmation = "confirmation"
	// SignupInvitation is the operator's invitation to create a workspace.
	SignupInvitation = "invitation"
)

// How long the links work.
const (
	ConfirmationLifetime = 24 * time.Hour
	InvitationLifetime   = 7 * 24 * time.Hour
)

// signupRetention is how long a sign-up row outlives its link, so that an
// old link is still told apart from a wrong one.
const signupRetention = 7 * 24 * time.Hour

// Signup is a link that creates a workspace, known by its token's SHA-256.
type Signup struct {
	ID            string     `db:"id"`
	Kind          string     `db:"kind"`
	Email         string     `db:"email"`
	WorkspaceName string     `db:"workspace_name"`
	PasswordHash  string     `db:"password_hash"`
	CreatedAt     time.Time  `db:"created_at"`
	ExpiresAt     time.Time  `db:"expires_at"`
	UsedAt        *time.Time `db:"used_at"`
}

const signupColumns = `id, kind, email, workspace_name, password_hash, created_at, expires_at, used_at`

// Errors of a sign-up link that exists but creates nothing.
var (
	ErrSignupUsed    = errors.New("sign-up link already used")
	ErrSignupExpired = errors.New("sign-up link expired")
	// ErrSignupAccountExists: the address got an account after the
	// sign-up was asked for; the person signs in instead.
	ErrSignupAccountExists = errors.New("the address already has an account")
)

// CreateSignupConfirmation stores an open sign-up waiting for its address
// to be confirmed, without a link yet, and enqueues job(id) (the mail that
// makes the link) in the same transaction. It deletes the rows that expired
// more than a week ago.
func (d *Accounts) CreateSignupConfirmation(ctx context.Context, email, workspaceName, passwordHash string, now time.Time,
	job func(id string) river.JobArgs) error {
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM signups WHERE expires_at < $1`, now.Add(-signupRetention)); err != nil {
			return fmt.Errorf("deleting old sign-ups: %w", err)
		}
		var id string
		if err := tx.QueryRow(ctx, `INSERT INTO signups (kind, email, workspace_name, password_hash, created_at, expires_at)
			VALUES ('confirmation', $1, $2, $3, $4, $5) RETURNING id`,
			email, workspaceName, passwordHash, now, now.Add(ConfirmationLifetime)).Scan(&id); err != nil {
			return fmt.Errorf("storing sign-up: %w", err)
		}
		if _, err := d.jobs.InsertTx(ctx, tx, job(id), nil); err != nil {
			return fmt.Errorf("enqueuing the sign-up's mail: %w", err)
		}
		return nil
	})
}

// SetSignupToken gives an unused confirmation the link of a new token (its
// SHA-256), working ConfirmationLifetime from now: each attempt of the
// mail job makes its own, so that a retry never sends the previous one.
// NotFound when the sign-up is gone or used.
func (d *Accounts) SetSignupToken(ctx context.Context, id string, tokenHash []byte, now time.Time) (Signup, error) {
	rows, _ := d.pool.Query(ctx, `UPDATE signups SET token_hash = $2, expires_at = $3
		WHERE id = $1 AND kind = 'confirmation' AND used_at IS NULL RETURNING `+signupColumns,
		id, tokenHash, now.Add(ConfirmationLifetime))
	s, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Signup])
	if err != nil {
		return Signup{}, pgbase.NotFound(err, "Sign-up")
	}
	return s, nil
}

// DeleteSignup deletes a sign-up that will make no link (its address
// already has an account).
func (d *Accounts) DeleteSignup(ctx context.Context, id string) error {
	if _, err := d.pool.Exec(ctx, `DELETE FROM signups WHERE id = $1 AND used_at IS NULL`, id); err != nil {
		return fmt.Errorf("deleting sign-up: %w", err)
	}
	return nil
}

// CreateSignupInvitation stores the operator's invitation for email, by
// the SHA-256 of its token, working InvitationLifetime from now.
func (d *Accounts) CreateSignupInvitation(ctx context.Context, email string, tokenHash []byte, now time.Time) (Signup, error) {
	rows, _ := d.pool.Query(ctx, `INSERT INTO signups (kind, email, token_hash, created_at, expires_at)
		VALUES ('invitation', $1, $2, $3, $4) RETURNING `+signupColumns, email, tokenHash, now, now.Add(InvitationLifetime))
	s, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Signup])
	if err != nil {
		return Signup{}, fmt.Errorf("storing sign-up invitation: %w", err)
	}
	return s, nil
}

// SignupByHash is the sign-up link whose token has that SHA-256; NotFound
// when there is none.
func (d *Accounts) SignupByHash(ctx context.Context, tokenHash []byte) (Signup, error) {
	rows, _ := d.pool.Query(ctx, `SELECT `+signupColumns+` FROM signups WHERE token_hash = $1`, tokenHash)
	s, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Signup])
	if err != nil {
		return Signup{}, pgbase.NotFound(err, "Sign-up")
	}
	return s, nil
}

// FreeTenantSlug is base, or base-2, base-3... whichever no tenant has yet
// (base is a slug of at most 90 characters). A tenant created between this
// and the creation makes the creation a conflict: the caller asks again.
func (d *Accounts) FreeTenantSlug(ctx context.Context, base string) (string, error) {
	rows, _ := d.pool.Query(ctx, `SELECT slug FROM tenants WHERE slug = $1 OR slug LIKE $2`, base, pgbase.EscapeLike(base)+"-%")
	taken, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", fmt.Errorf("reading the slugs in use: %w", err)
	}
	used := make(map[string]bool, len(taken))
	for _, s := range taken {
		used[s] = true
	}
	slug := base
	for n := 2; used[slug]; n++ {
		slug = base + "-" + strconv.Itoa(n)
	}
	return slug, nil
}

// SignupUse is the sign-up link a tenant's creation uses
// (db.NewTenant.Signup), in the creation's transaction.
type SignupUse struct {
	// ID is the sign-up's.
	ID string
	// Email and PasswordHash are the new owner's: the user with that email
	// must have that hash, which is so when the creation made the user
	// with it (or, for an invitation to a person with an account, when it
	// is theirs).
	Email        string
	PasswordHash string
	Now          time.Time
	// Address is the client's, for the audit log.
	Address string
	// UserID is set by UseSignupInTx: the new owner's.
	UserID string
}

// UseSignupInTx, in the transaction that created tenant t with its owner,
// marks the sign-up used (ErrSignupUsed, ErrSignupExpired, NotFound when it
// cannot be), checks that the owner is the person who signed up
// (ErrSignupAccountExists when the address had an account of another
// password) and records the creation in the audit log, the new owner its
// actor. An error rolls the whole creation back.
func UseSignupInTx(ctx context.Context, tx pgx.Tx, t parley.Tenant, u *SignupUse) error {
	// FOR UPDATE: of two uses of one link at once, the second waits and
	// then finds it used.
	rows, _ := tx.Query(ctx, `SELECT `+signupColumns+` FROM signups WHERE id = $1 FOR UPDATE`, u.ID)
	s, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Signup])
	switch {
	case err != nil:
		return pgbase.NotFound(err, "Sign-up")
	case s.UsedAt != nil:
		return ErrSignupUsed
	case !u.Now.Before(s.ExpiresAt):
		return ErrSignupExpired
	}
	if _, err := tx.Exec(ctx, `UPDATE signups SET used_at = $2, tenant_id = $3 WHERE id = $1`, u.ID, u.Now, t.ID); err != nil {
		return fmt.Errorf("using sign-up: %w", err)
	}
	err = tx.QueryRow(ctx, `SELECT id FROM users WHERE lower(email) = lower($1) AND password_hash = $2`,
		u.Email, u.PasswordHash).Scan(&u.UserID)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return ErrSignupAccountExists
	case err != nil:
		return fmt.Errorf("finding the new owner: %w", err)
	}
	return audit.RecordIn(ctx, tx, audit.Entry{TenantID: t.ID, At: u.Now,
		Actor:  audit.Actor{Kind: audit.ActorPerson, ID: u.UserID, Name: u.Email},
		Action: audit.ActionTenantCreated, Target: t.Name, TargetID: t.ID, Address: u.Address,
		Details: map[string]any{"plan": t.Plan, "slug": t.Slug, "via": s.Kind}})
}
