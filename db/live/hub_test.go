package live_test

import (
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/db/live"
)

// woken waits for a wake of s; a hang fails the test.
func woken(t *testing.T, s *live.Sub, what string) {
	t.Helper()
	select {
	case <-s.Wake:
	case <-time.After(15 * time.Second):
		t.Fatalf("%s: not woken within 15 s", what)
	}
}

// TestHub: a notification wakes the subscriptions of its conversation
// only; when the listening connection drops, the hub connects again and
// wakes every subscription (a notification may have been missed); Close
// ends the subscriptions.
func TestHub(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	ctx := t.Context()
	h := live.New(store.Pool(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	h.Retry = 10 * time.Millisecond
	t.Cleanup(h.Close)
	const tenant = "7d3c1a8e-0000-4000-8000-000000000001"
	a, b := h.Subscribe(tenant, "conv-a"), h.Subscribe(tenant, "conv-b")
	if err := a.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if n := h.Subscribers(); n != 2 {
		t.Errorf("%d subscribers, want 2", n)
	}
	notify := func(payload string) {
		t.Helper()
		if _, err := store.Pool().Exec(ctx, `SELECT pg_notify($1, $2)`, db.ConversationChannel, payload); err != nil {
			t.Fatal(err)
		}
	}

	notify(tenant + ":conv-a")
	woken(t, a, "a's notification")
	notify(tenant + ":conv-b")
	woken(t, b, "b's notification")
	select {
	case <-a.Wake:
		t.Error("a was woken by b's notification")
	default:
	}

	pid := h.ListenerPID()
	if pid == 0 {
		t.Fatal("no listening connection")
	}
	if _, err := store.Pool().Exec(ctx, `SELECT pg_terminate_backend($1)`, int32(pid)); err != nil {
		t.Fatal(err)
	}
	woken(t, a, "a after the reconnection")
	woken(t, b, "b after the reconnection")
	if again := h.ListenerPID(); again == pid || again == 0 {
		t.Errorf("listening connection %d after the drop, want a new one", again)
	}
	notify(tenant + ":conv-a")
	woken(t, a, "a's notification after the reconnection")

	b.Close()
	if n := h.Subscribers(); n != 1 {
		t.Errorf("%d subscribers after one closed, want 1", n)
	}
	h.Close()
	select {
	case <-h.Done():
	default:
		t.Error("Done is open after Close")
	}
	if err := h.Subscribe(tenant, "conv-c").Wait(ctx); !errors.Is(err, live.ErrClosed) {
		t.Errorf("Wait on a closed hub = %v, want ErrClosed", err)
	}
}
