package pgbase

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/parley/parley"
)

// Conditional writes (HTTP If-Match) of the settings-like resources: the
// tenant, its MCP server, its embedding endpoint, its connectors, its voice
// setup and its plan. A surface puts the entity tags the client sent in the
// context (WithIfMatch); the store that writes the resource reads its
// stored representation with its rows locked, in the write's transaction,
// and writes only when that representation's ETag is one of them, so that
// no other write can come between the check and the write.

type ifMatchKey struct{}

// WithIfMatch returns ctx carrying the entity tags of an If-Match header
// (quoted, as sent); with none, ctx is returned as it is and writes are
// unconditional.
func WithIfMatch(ctx context.Context, tags []string) context.Context {
	if len(tags) == 0 {
		return ctx
	}
	return context.WithValue(ctx, ifMatchKey{}, tags)
}

// Conditional reports whether ctx carries an If-Match.
func Conditional(ctx context.Context) bool {
	_, ok := ctx.Value(ifMatchKey{}).([]string)
	return ok
}

// CheckIfMatch is nil when ctx carries no If-Match or etag is one of its
// tags; otherwise the resource changed since the client read it: a
// precondition-failed error. An etag of "" (the resource has no stored
// representation) matches no tag.
func CheckIfMatch(ctx context.Context, etag string) error {
	tags, ok := ctx.Value(ifMatchKey{}).([]string)
	if !ok || etag != "" && slices.Contains(tags, etag) {
		return nil
	}
	return &parley.Error{Kind: parley.KindPreconditionFailed, Code: "PRECONDITION_FAILED",
		Message: "The resource changed since you read it; GET it again and retry"}
}

// ETag is the strong entity tag of a stored representation v (a struct as
// read from its rows): the quoted hex of the first 16 bytes of the SHA-256
// of its JSON. Two reads of unchanged rows give the same tag; any change
// to a column v holds gives another.
func ETag(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("pgbase.ETag: %v", err)) // our own row structs always encode
	}
	sum := sha256.Sum256(b)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

// CheckLocked is CheckIfMatch of the ETag current reads in tx, for a write
// that runs in tx: current reads the stored representation with its rows
// locked (FOR UPDATE), and runs only when ctx carries an If-Match.
func CheckLocked(ctx context.Context, tx pgx.Tx, current func(pgx.Tx) (string, error)) error {
	if !Conditional(ctx) {
		return nil
	}
	etag, err := current(tx)
	if err != nil {
		return err
	}
	return CheckIfMatch(ctx, etag)
}

// WriteIfMatch runs write on the pool when ctx carries no If-Match, as the
// store always did; with one, in a transaction, after CheckLocked passed.
func WriteIfMatch(ctx context.Context, pool *pgxpool.Pool, current func(pgx.Tx) (string, error), write func(Querier) error) error {
	if !Conditional(ctx) {
		return write(pool)
	}
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := CheckLocked(ctx, tx, current); err != nil {
			return err
		}
		return write(tx)
	})
}
