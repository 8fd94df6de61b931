package pgbase

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/parley/parley"
)

// Querier is what both the pool and a transaction offer.
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Storable reports whether PostgreSQL can take s as a text parameter: valid
// UTF-8 without NUL. Lookups by user-supplied text check it first, so that odd
// input finds nothing instead of failing the query.
func Storable(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

// StorableKey makes s Storable by replacing what PostgreSQL refuses with
// U+FFFD (parley.StorableText).
func StorableKey(s string) string { return parley.StorableText(s) }

// AsyncCommit is a FROM item of one row that sets synchronous_commit off
// for the statement's transaction (set_config's is_local): its commit
// returns before the WAL is flushed to disk, which the WAL writer does
// within wal_writer_delay (200 ms). A PostgreSQL crash within that window
// loses the transaction; any later synchronous commit flushes it first.
// Only for writes whose loss a crash may excuse: a rate counter, a lease.
const AsyncCommit = `(SELECT set_config('synchronous_commit', 'off', true)) AS async_commit`
