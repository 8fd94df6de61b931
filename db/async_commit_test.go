package db_test

import (
	"context"
	"testing"

	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
)

// db.AsyncCommit turns synchronous_commit off for its own statement's
// transaction only: the next statement on the same connection (the
// visitor's message, the reply) commits synchronously again.
func TestAsyncCommitIsLocalToItsTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.New(t)
	conn, err := store.Pool().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	// The test cluster runs with synchronous_commit off: this session
	// turns it on, as PostgreSQL's default is.
	if _, err := conn.Exec(ctx, `SET synchronous_commit = on`); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(ctx, `RESET synchronous_commit`)
	var during, after string
	if err := conn.QueryRow(ctx, `SELECT current_setting('synchronous_commit') FROM `+db.AsyncCommit).Scan(&during); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT current_setting('synchronous_commit')`).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if during != "off" || after != "on" {
		t.Errorf("synchronous_commit during the statement %q, after it %q; want off, then on", during, after)
	}
}
