package webtest

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/web"
)

// NewBench is what a benchmark of a surface starts from: the whole server
// on a test database of its own (logs discarded), served over HTTP until
// the benchmark ends, with the tenant in provisioned (its owner too, when
// in names one).
func NewBench(tb testing.TB, in parley.NewTenantInput) (*db.DB, *web.Server, *httptest.Server, auth.Provisioned) {
	tb.Helper()
	store := dbtest.New(tb)
	srv, err := web.NewServer(Config(tb), store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		tb.Fatal(err)
	}
	ts := httptest.NewServer(srv.Echo)
	tb.Cleanup(ts.Close)
	key, _ := auth.ParseKey(SecretKey)
	box, _ := auth.NewBox(key)
	p, err := auth.Provision(context.Background(), store, box, srv.Base.Passwords, in)
	if err != nil {
		tb.Fatal(err)
	}
	return store, srv, ts, p
}
