package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley/db"
)

// Fresh returns a database of the test's own, cloned from the migrated
// template (or empty, when empty is true: no schema at all, as a restore
// wants it), and its URL; it is closed and dropped when the test ends. For
// the few tests that change the whole database (a rotation of the secret
// key, a restore), which the binary's shared one cannot host.
func Fresh(t testing.TB, empty bool) (*db.DB, string) {
	t.Helper()
	admin := os.Getenv("PARLEY_TEST_DATABASE_URL")
	if admin == "" {
		t.Fatal(errNoCluster)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := Prefix + hex.EncodeToString(b)
	template := Template
	if empty {
		template = "template0"
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE "+template); err != nil {
		t.Fatal(err)
	}
	u := replaceDBName(admin, name)
	store, err := db.Open(ctx, u, 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		store.Close()
		conn, err := pgx.Connect(context.Background(), admin)
		if err != nil {
			return
		}
		defer conn.Close(context.Background())
		_, _ = conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	return store, u
}
