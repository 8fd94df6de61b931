// Package sealed is the store of the values sealed with the secret box
// (auth.Box, PARLEY_SECRET_KEY): the list of every sealed column, the key
// check of migration 00053, and the reads and compare-and-set writes with
// which `parley secret rotate` re-seals them in batches. It holds no key:
// auth opens and seals.
package sealed

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Column is a column of sealed values, keyed by Key (a primary key of one
// column, of type KeyType).
type Column struct {
	Table, Column, Key, KeyType string
}

// String names the column as table.column.
func (c Column) String() string { return c.Table + "." + c.Column }

// Columns are every column that holds values sealed with the secret box,
// the key check last. TestEveryByteaColumnIsListed keeps the list whole:
// each bytea column of the schema is here or in NotSealed.
var Columns = []Column{
	{"tenants", "visitor_signing_key", "id", "uuid"},
	{"tenants", "captcha_secret_key", "id", "uuid"},
	{"tenants", "mcp_tools_api_key", "id", "uuid"},
	{"tenants", "voice_secret", "id", "uuid"},
	{"tenants", "embeddings_api_key", "id", "uuid"},
	{"tools", "webhook_secret", "id", "uuid"},
	{"webhook_endpoints", "secret_sealed", "id", "uuid"},
	{"oauth_keys", "private_key", "kid", "text"},
	{"calendar_connectors", "password", "tenant_id", "uuid"},
	{"payment_connectors", "secret_key", "tenant_id", "uuid"},
	{"user_two_factor", "secret", "user_id", "uuid"},
	{"idempotency_keys", "body", "id", "uuid"},
	{"secret_key_check", "sealed", "id", "boolean"},
}

// NotSealed are the bytea columns that hold no sealed value: hashes, salts,
// images, vectors, the anonymous visitors' public keys, River's unique
// keys and the idempotency keys' request fingerprints.
var NotSealed = []string{
	"api_tokens.token_hash", "sessions.data", "password_resets.token_hash", "tenant_avatars.data",
	"oauth_codes.code_hash", "oauth_refresh_tokens.token_hash", "verification_codes.code_hash",
	"verification_codes.salt", "visitors.anonymous_key", "corpus_embeddings.text_hash",
	"corpus_embeddings.embedding", "user_recovery_codes.code_hash", "signups.token_hash",
	"invitations.token_hash", "river_job.unique_key", "idempotency_keys.fingerprint",
}

// Store reads and writes sealed values.
type Store struct{ pool *pgxpool.Pool }

// New makes the store over pool.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// KeyCheck returns the sealed key check, nil when none was written yet.
func (s *Store) KeyCheck(ctx context.Context) ([]byte, error) {
	var v []byte
	err := s.pool.QueryRow(ctx, `SELECT sealed FROM secret_key_check`).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P01" { // undefined_table
		return nil, errors.New("the database has no secret key check table: it is not migrated (run parley migrate first)")
	}
	if err != nil {
		return nil, fmt.Errorf("reading the secret key check: %w", err)
	}
	return v, nil
}

// SetKeyCheck writes the key check unless one exists, and returns the one
// that stands (another process's, if it was first).
func (s *Store) SetKeyCheck(ctx context.Context, sealed []byte) ([]byte, error) {
	if _, err := s.pool.Exec(ctx, `INSERT INTO secret_key_check (sealed) VALUES ($1) ON CONFLICT (id) DO NOTHING`, sealed); err != nil {
		return nil, fmt.Errorf("writing the secret key check: %w", err)
	}
	return s.KeyCheck(ctx)
}

// AnySealed returns one sealed value of the data, nil when there is none:
// what a key is tried on before the key check is first written.
func (s *Store) AnySealed(ctx context.Context) ([]byte, error) {
	for _, c := range Columns[:len(Columns)-1] {
		var v []byte
		err := s.pool.QueryRow(ctx, fmt.Sprintf(`SELECT %s FROM %s WHERE %s IS NOT NULL LIMIT 1`, c.Column, c.Table, c.Column)).Scan(&v)
		if errors.Is(err, pgx.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", c, err)
		}
		return v, nil
	}
	return nil, nil
}

// Value is one sealed value and the key of its row (as text).
type Value struct {
	Key    string
	Sealed []byte
}

// Batch returns up to n sealed values of c in the order of their rows'
// keys, after the row keyed after (all from the first when after is nil).
func (s *Store) Batch(ctx context.Context, c Column, after *string, n int) ([]Value, error) {
	q := fmt.Sprintf(`SELECT %s::text, %s FROM %s WHERE %s IS NOT NULL AND ($1::text IS NULL OR %s > $1::%s) ORDER BY %s LIMIT $2`,
		c.Key, c.Column, c.Table, c.Column, c.Key, c.KeyType, c.Key)
	rows, err := s.pool.Query(ctx, q, after, n)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", c, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Value, error) {
		var v Value
		return v, r.Scan(&v.Key, &v.Sealed)
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", c, err)
	}
	return out, nil
}

// Replace sets the value of c in the row keyed key to sealed if it still
// holds old (a compare-and-set: a value a running instance wrote meanwhile
// stands), in a statement of its own; it reports whether it did.
func (s *Store) Replace(ctx context.Context, c Column, key string, old, sealed []byte) (bool, error) {
	q := fmt.Sprintf(`UPDATE %s SET %s = $3 WHERE %s = $1::%s AND %s = $2`, c.Table, c.Column, c.Key, c.KeyType, c.Column)
	tag, err := s.pool.Exec(ctx, q, key, old, sealed)
	if err != nil {
		return false, fmt.Errorf("re-sealing %s: %w", c, err)
	}
	return tag.RowsAffected() == 1, nil
}
