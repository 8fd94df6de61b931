// Package migrations holds the goose SQL migrations, embedded in the binary.
package migrations

import (
	"context"
	"embed"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// FS holds every migration file.
//
//go:embed *.sql
var FS embed.FS

// lockID is the advisory lock Up holds while it migrates: two `parley
// migrate` started at once (an upgrade that runs it beside each instance)
// apply the migrations one after the other, the second finding none left.
const lockID = 0x70617273 // "pars"

// Up applies every pending goose migration and then River's own schema,
// under an advisory lock of the database.
func Up(ctx context.Context, pool *pgxpool.Pool) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("connecting to migrate: %w", err)
	}
	defer conn.Release()
	// Tried, not waited for: a session waiting on the lock would hold a
	// snapshot, which a CREATE INDEX CONCURRENTLY of the migration holding
	// it waits for, forever.
	for {
		var locked bool
		if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, lockID).Scan(&locked); err != nil {
			return fmt.Errorf("waiting for another migration to end: %w", err)
		}
		if locked {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for another migration to end: %w", ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
	defer func() { _, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, lockID) }()
	sqlDB := stdlib.OpenDBFromPool(pool)
	defer sqlDB.Close()
	provider, err := goose.NewProvider(goose.DialectPostgres, sqlDB, FS)
	if err != nil {
		return fmt.Errorf("preparing migrations: %w", err)
	}
	if _, err := provider.Up(ctx); err != nil {
		return fmt.Errorf("applying migrations: %w", err)
	}
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return fmt.Errorf("preparing river migrations: %w", err)
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("applying river migrations: %w", err)
	}
	return nil
}

// Versions are the database's schema version and the newest this binary
// holds: parley serve refuses to start on a schema older than its own
// (README, "Upgrades").
func Versions(ctx context.Context, pool *pgxpool.Pool) (current, target int64, err error) {
	sqlDB := stdlib.OpenDBFromPool(pool)
	defer sqlDB.Close()
	provider, err := goose.NewProvider(goose.DialectPostgres, sqlDB, FS)
	if err != nil {
		return 0, 0, fmt.Errorf("preparing migrations: %w", err)
	}
	current, target, err = provider.GetVersions(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("reading the schema's version: %w", err)
	}
	return current, target, nil
}
