// Package db is Parley's data access: a pgx pool, transactions and one file of
// SQL per aggregate. Every query on tenant-owned data filters by tenant.
package db

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DB is the handle every store method hangs off.
type DB struct {
	Pool *pgxpool.Pool
}

// Open connects a pool to url and checks that the database answers.
// maxConns overrides the pool size when positive.
func Open(ctx context.Context, url string, maxConns int32) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parsing DATABASE_URL: %w", err)
	}
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("opening database: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connecting to database: %w", err)
	}
	return &DB{Pool: pool}, nil
}

// Close releases the pool.
func (d *DB) Close() { d.Pool.Close() }

// Ping reports whether the database answers.
func (d *DB) Ping(ctx context.Context) error { return d.Pool.Ping(ctx) }

// InTx runs fn in one transaction, committed when fn returns nil.
func (d *DB) InTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, d.Pool, fn)
}

// Querier is what both the pool and a transaction offer.
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// storable reports whether PostgreSQL can take s as a text parameter: valid
// UTF-8 without NUL. Lookups by user-supplied text check it first, so that odd
// input finds nothing instead of failing the query.
func storable(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

// storableKey makes s storable by replacing what PostgreSQL refuses with U+FFFD.
func storableKey(s string) string {
	if storable(s) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}
