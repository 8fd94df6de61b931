package accounts

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// APIToken is a stored API token; the token itself is never stored, only its hash.
type APIToken struct {
	ID            string     `db:"id"`
	TenantID      string     `db:"tenant_id"`
	Name          string     `db:"name"`
	Legacy        bool       `db:"legacy"`
	DisplayPrefix string     `db:"display_prefix"`
	Scopes        []string   `db:"scopes"`
	CreatedAt     time.Time  `db:"created_at"`
	LastUsedAt    *time.Time `db:"last_used_at"`
	RevokedAt     *time.Time `db:"revoked_at"`
}

// NewToken is a token to store.
type NewToken struct {
	TenantID      string
	Name          string
	Legacy        bool
	Hash          []byte
	DisplayPrefix string
	Scopes        []string
}

const tokenColumns = `id, tenant_id, name, legacy, display_prefix, scopes, created_at, last_used_at, revoked_at`

// InsertToken stores a new token with q: the pool, or the transaction that
// creates its tenant.
func InsertToken(ctx context.Context, q pgbase.Querier, nt NewToken) (APIToken, error) {
	rows, _ := q.Query(ctx, `INSERT INTO api_tokens (tenant_id, name, legacy, token_hash, display_prefix, scopes)
		VALUES ($1, $2, $3, $4, $5, $6) RETURNING `+tokenColumns,
		nt.TenantID, nt.Name, nt.Legacy, nt.Hash, nt.DisplayPrefix, nt.Scopes)
	t, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[APIToken])
	if err != nil {
		return APIToken{}, fmt.Errorf("inserting token: %w", err)
	}
	return t, nil
}

// CreateToken stores a new token for a tenant.
func (d *Accounts) CreateToken(ctx context.Context, nt NewToken) (APIToken, error) {
	return InsertToken(ctx, d.pool, nt)
}

// TokenByHash returns the live (not revoked) token with that hash.
func (d *Accounts) TokenByHash(ctx context.Context, hash []byte) (APIToken, error) {
	rows, _ := d.pool.Query(ctx, `SELECT `+tokenColumns+` FROM api_tokens
		WHERE token_hash = $1 AND revoked_at IS NULL`, hash)
	t, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[APIToken])
	if err != nil {
		return APIToken{}, pgbase.NotFound(err, "Token")
	}
	return t, nil
}

// TouchToken records use of a token, at most once a minute so that reads stay reads.
func (d *Accounts) TouchToken(ctx context.Context, id string) error {
	_, err := d.pool.Exec(ctx, `UPDATE api_tokens SET last_used_at = now()
		WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`, id)
	return err
}

// ListTokens lists a tenant's tokens, live ones first, newest first.
func (d *Accounts) ListTokens(ctx context.Context, tenantID string) ([]APIToken, error) {
	rows, _ := d.pool.Query(ctx, `SELECT `+tokenColumns+` FROM api_tokens WHERE tenant_id = $1
		ORDER BY revoked_at IS NOT NULL, created_at DESC`, tenantID)
	ts, err := pgx.CollectRows(rows, pgx.RowToStructByName[APIToken])
	if err != nil {
		return nil, fmt.Errorf("listing tokens: %w", err)
	}
	return ts, nil
}

// RevokeToken revokes one of the tenant's tokens. Revoking twice is harmless.
func (d *Accounts) RevokeToken(ctx context.Context, tenantID, id string) error {
	tag, err := d.pool.Exec(ctx, `UPDATE api_tokens SET revoked_at = coalesce(revoked_at, now())
		WHERE tenant_id = $1 AND id::text = $2`, tenantID, id)
	if err != nil {
		return fmt.Errorf("revoking token: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return parley.Errorf(parley.KindNotFound, "Token not found")
	}
	return nil
}
