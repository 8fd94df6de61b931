package web_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
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

// A stopping server drains before its port closes: /readyz answers 503 at
// once, so that a load balancer stops sending it requests, while every
// other request is still answered, without keeping its connection alive;
// once the drain ends (here by Hurry, as a second SIGTERM does), Run
// returns and the port is closed.
func TestRunDrainsBeforeClosing(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	cfg := webtest.Config(t, map[string]string{"PARLEY_ADDR": "127.0.0.1:0", "PARLEY_DRAIN_DELAY": "5m"})
	srv, err := web.NewServer(cfg, store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	addrc := make(chan net.Addr, 1)
	srv.Listening = func(a net.Addr) { addrc <- a }
	runCtx, stop := context.WithCancel(context.Background())
	defer stop()
	done := make(chan error, 1)
	go func() { done <- srv.Run(runCtx) }()
	var base string
	select {
	case a := <-addrc:
		base = "http://" + a.String()
	case err := <-done:
		t.Fatalf("Run stopped before listening: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not listen")
	}
	client := &http.Client{Transport: &webtest.ValidatingTransport{TB: t, Base: &http.Transport{}}}
	get := func(path string) (*http.Response, error) {
		resp, err := client.Get(base + path)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return resp, err
	}
	if resp, err := get("/readyz"); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("readyz while serving: %v %v, want 200", resp, err)
	}

	stop()
	var ready *http.Response
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if ready, err = get("/readyz"); err != nil {
			t.Fatalf("readyz while draining: %v (the port closed before the drain ended)", err)
		}
		if ready.StatusCode == http.StatusServiceUnavailable || time.Now().After(deadline) {
			break
		}
	}
	if ready.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("readyz after the shutdown began: %d, want 503", ready.StatusCode)
	}
	for _, path := range []string{"/healthz", "/widget.js"} {
		resp, err := get(path)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s while draining: %v %v, want 200", path, resp, err)
		}
		if !resp.Close {
			t.Errorf("%s while draining kept its connection alive; want Connection: close", path)
		}
	}
	select {
	case err := <-done:
		t.Fatalf("Run returned before the drain ended: %v", err)
	default:
	}

	srv.Hurry()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return once hurried")
	}
	if _, err := get("/healthz"); err == nil {
		t.Error("the port still answers after Run returned")
	}
}
