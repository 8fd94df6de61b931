package web_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/web"
	"github.com/parley/parley/web/webtest"
)

// Run registers the process as an instance, beats its heartbeat while it
// serves, and deletes its row when it shuts down cleanly, which frees any
// session lease still naming it. Not parallel: it looks for the one
// instance row that appears while it runs.
func TestRunRemovesItsInstance(t *testing.T) {
	store := dbtest.New(t)
	cfg := webtest.Config(t, map[string]string{"PARLEY_ADDR": "127.0.0.1:0"})
	cfg.Heartbeat = 20 * time.Millisecond
	srv, err := web.NewServer(cfg, store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var since time.Time
	if err := store.Pool().QueryRow(ctx, `SELECT now()`).Scan(&since); err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- srv.Run(runCtx) }()

	// The row appears, and its heartbeat moves on.
	var id string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		err := store.Pool().QueryRow(ctx, `SELECT id::text FROM instances WHERE started_at >= $1 AND heartbeat_at > started_at`, since).Scan(&id)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no instance row with a heartbeat: %v", err)
		}
	}
	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	var n int
	if err := store.Pool().QueryRow(ctx, `SELECT count(*) FROM instances WHERE id = $1`, id).Scan(&n); err != nil || n != 0 {
		t.Errorf("after a clean shutdown, %d rows of the instance (%v), want none", n, err)
	}
}
