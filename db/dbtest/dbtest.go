// Package dbtest gives each test binary its own database, cloned from the
// migrated template that make test prepares.
package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley/db"
)

// Template is the migrated database every test database is cloned from.
const Template = "parley_template"

// Prefix starts the name of every test database; make test drops leftovers.
const Prefix = "parley_test_"

var (
	once   sync.Once
	shared *db.DB
	url    string
	err    error
)

// New returns the test binary's database, creating it on first use. It fails
// the test (never skips) when the test cluster is not configured.
func New(t testing.TB) *db.DB {
	t.Helper()
	once.Do(func() { shared, url, err = create() })
	if err != nil {
		t.Fatalf("test database: %v", err)
	}
	return shared
}

// URL returns the connection URL of the test binary's database (after New).
func URL() string { return url }

func create() (*db.DB, string, error) {
	admin := os.Getenv("PARLEY_TEST_DATABASE_URL")
	if admin == "" {
		return nil, "", errNoCluster
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return nil, "", err
	}
	defer conn.Close(ctx)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := Prefix + hex.EncodeToString(b)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE "+Template); err != nil {
		return nil, "", err
	}
	u := replaceDBName(admin, name)
	store, err := db.Open(ctx, u, 20)
	return store, u, err
}

type setupError string

func (e setupError) Error() string { return string(e) }

const errNoCluster = setupError("PARLEY_TEST_DATABASE_URL is not set: run the suite with `make test`, which starts the test cluster and migrates the template, or start it for one package with `export PARLEY_TEST_DATABASE_URL=$(scripts/test-cluster.sh)`")

// replaceDBName swaps the database of a postgres:// URL.
func replaceDBName(u, name string) string {
	q := ""
	if i := strings.IndexByte(u, '?'); i >= 0 {
		u, q = u[:i], u[i:]
	}
	i := strings.LastIndexByte(u, '/')
	return u[:i+1] + name + q
}
