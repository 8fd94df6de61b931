package live_test

import (
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/parley/parley"
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

// TestHubReads: the session's conversation and what is new in it are read
// within the tenant only; Since gives the people's messages after a seq,
// in order, with the conversation's state.
func TestHubReads(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	ctx := t.Context()
	h := live.New(store.Pool(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(h.Close)
	ten, other := dbtest.NewTenant(t, store), dbtest.NewTenant(t, store)
	conv := db.SeedConversation{SessionID: "reads-1", Channel: "web", Status: parley.StatusBot, VisitorType: "human",
		FirstUserMessage: "Hello", Locale: "en", CreatedAt: time.Now(), Messages: []db.SeedMessage{{Role: "user", Content: "Hello"}}}
	conv.ID = [16]byte{0x5e, 0xed, 6: 0x40, 8: 0x80, 15: 1}
	if _, err := store.CopySeedConversations(ctx, ten.ID, []db.SeedConversation{conv}); err != nil {
		t.Fatal(err)
	}
	id, err := h.Conversation(ctx, ten.ID, "reads-1")
	if err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"another tenant's session": func() error { _, err := h.Conversation(ctx, other.ID, "reads-1"); return err }(),
		"an unknown session":       func() error { _, err := h.Conversation(ctx, ten.ID, "reads-2"); return err }(),
		"another tenant's read":    func() error { _, _, _, err := h.Since(ctx, other.ID, id, 0); return err }(),
	} {
		if parley.ErrorKind(err) != parley.KindNotFound {
			t.Errorf("%s: %v, want not found", name, err)
		}
	}

	st, msgs, more, err := h.Since(ctx, ten.ID, id, 0)
	if err != nil || st.Status != parley.StatusBot || st.Assignee != nil || len(msgs) != 0 || more {
		t.Fatalf("before any person: %+v %v %v %v", st, msgs, more, err)
	}
	for _, text := range []string{"One.", "Two.", "Three."} {
		if _, _, err := store.AddHumanMessage(ctx, ten.ID, id, parley.Holder{Name: "Maya"}, text); err != nil {
			t.Fatal(err)
		}
	}
	st, msgs, _, err = h.Since(ctx, ten.ID, id, 0)
	if err != nil || st.Status != parley.StatusHuman || st.Assignee == nil || *st.Assignee != "Maya" || len(msgs) != 3 {
		t.Fatalf("after three replies: %+v %v %v", st, msgs, err)
	}
	if msgs[0].Content != "One." || msgs[2].Content != "Three." || msgs[0].AuthorName != "Maya" || msgs[0].Seq >= msgs[1].Seq {
		t.Errorf("messages out of order or incomplete: %+v", msgs)
	}
	if _, after, _, _ := h.Since(ctx, ten.ID, id, msgs[0].Seq); len(after) != 2 || after[0].ID != msgs[1].ID {
		t.Errorf("after the first: %+v, want the two others", after)
	}
	if _, after, _, _ := h.Since(ctx, ten.ID, id, msgs[2].Seq); len(after) != 0 {
		t.Errorf("after the last: %+v, want none", after)
	}
}
