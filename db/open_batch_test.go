package db_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
)

// openResult is what one OpenTurn returned.
type openResult struct {
	ok  bool
	st  parley.SessionState
	err error
}

// ownStore is a store of its own on the test binary's database: its queue
// of visitors' messages is the test's alone.
func ownStore(t *testing.T) *db.DB {
	t.Helper()
	dbtest.New(t)
	store, err := db.Open(context.Background(), dbtest.URL(), 10)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	return store
}

// openHeld runs the turns at once on store while another turn's message is
// being written (HoldOpens), so that those that take their lease queue
// their messages (want of them); then it lets the first of them write them
// all, in one statement, and returns what each OpenTurn returned.
func openHeld(t *testing.T, store *db.DB, want int, turns ...func() openResult) []openResult {
	t.Helper()
	release, ok := store.HoldOpens()
	if !ok {
		t.Fatal("the queue is led already")
	}
	out := make([]openResult, len(turns))
	var wg sync.WaitGroup
	for i, turn := range turns {
		wg.Go(func() { out[i] = turn() })
	}
	for deadline := time.Now().Add(10 * time.Second); store.OpensQueued() != want; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			release()
			t.Fatalf("%d messages queued, want %d", store.OpensQueued(), want)
		}
	}
	release()
	wg.Wait()
	return out
}

// Messages written together are decided as each written alone: a first
// message starts its conversation on the lease's count, a next one
// continues it (the state read before it), a test chat starts uncounted;
// nothing is stored for a test chat in a visitor's session, a segment of
// another tenant, a session at the limit or a message sent again with its
// key; another tenant's session of the same name is its own. A session
// whose lease is held takes no part.
func TestOpenTurnsTogether(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := dbtest.SetupConversations(t)
	store := ownStore(t)
	used := func() int { return usedCount(t, f) }
	start := func(tenant, session string) parley.ConversationStart {
		return parley.ConversationStart{TenantID: tenant, SessionID: session, Limit: 100, Channel: parley.ChannelAgent}
	}
	open := func(p parley.ConversationStart, message, holder string) func() openResult {
		return func() openResult {
			ok, st, err := store.OpenTurn(ctx, p, message, holder, "", 2*time.Minute, 3)
			return openResult{ok, st, err}
		}
	}
	// Before: a conversation answered once (session "next"), one whose
	// message was stored with a key ("keyed"), a visitor's ("visitor"),
	// and a session whose lease is held ("held").
	for _, s := range []string{"next", "visitor", "held"} {
		if r := open(start(f.Tenant.ID, s), "Hello", "before-"+s)(); r.err != nil || r.st.Opened == nil {
			t.Fatalf("opening %s before: %+v", s, r)
		}
	}
	keyed := start(f.Tenant.ID, "keyed")
	keyed.IdempotencyKey = "key-1"
	r := open(keyed, "Keyed", "before-keyed")()
	if r.err != nil || r.st.Opened == nil {
		t.Fatalf("opening keyed before: %+v", r)
	}
	for _, s := range []string{"next", "visitor", "keyed"} {
		id := ""
		if err := f.Store.Pool().QueryRow(ctx, `SELECT id FROM conversations WHERE tenant_id = $1 AND session_id = $2`,
			f.Tenant.ID, s).Scan(&id); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Store.SaveTurn(ctx, parley.TurnRecord{TenantID: f.Tenant.ID, ConversationID: id, SessionID: s,
			LeaseHolder: "before-" + s, Reply: "Hi!"}); err != nil {
			t.Fatal(err)
		}
	}
	if used() != 4 {
		t.Fatalf("used %d before, want 4", used())
	}

	test := start(f.Tenant.ID, "test")
	test.Test = true
	ownerInVisitors := start(f.Tenant.ID, "visitor")
	ownerInVisitors.Test = true
	theirs := segment(t, f, f.Other.ID)
	theirSegment := start(f.Tenant.ID, "their-segment")
	theirSegment.SegmentID = &theirs
	atLimit := start(f.Tenant.ID, "at-limit")
	atLimit.Limit = 4 // 4 of 4 used
	out := openHeld(t, store, 8,
		open(start(f.Tenant.ID, "first"), "First", "h-first"),
		open(start(f.Tenant.ID, "next"), "Next", "h-next"),
		open(test, "Trying", "h-test"),
		open(ownerInVisitors, "Owner here", "h-owner"),
		open(theirSegment, "Hi", "h-their-segment"),
		open(atLimit, "Hi", "h-at-limit"),
		open(keyed, "Keyed", "h-keyed"),
		open(start(f.Other.ID, "first"), "Theirs", "h-other"),
		open(start(f.Tenant.ID, "held"), "Too soon", "h-held"),
	)
	for i, o := range out {
		if o.err != nil {
			t.Fatalf("turn %d: %v", i, o.err)
		}
	}
	first, next, tst, owner, seg, limit, again, other, held := out[0], out[1], out[2], out[3], out[4], out[5], out[6], out[7], out[8]

	if o := first.st.Opened; !first.ok || o == nil || !o.Created || first.st.Counted != nil || first.st.Conversation != nil ||
		o.Conversation.MessageCount != 1 || o.Conversation.SessionID != "first" || o.Conversation.TenantID != f.Tenant.ID ||
		o.Conversation.Channel != parley.ChannelAgent || o.Message.Content != "First" || o.Message.ConversationID != o.Conversation.ID ||
		o.Message.ID == "" || o.Message.CreatedAt.IsZero() {
		t.Errorf("first message: %v %+v", first.ok, first.st)
	}
	if o := next.st.Opened; !next.ok || o == nil || o.Created || o.Conversation.MessageCount != 3 || o.Message.Content != "Next" ||
		next.st.Conversation == nil || next.st.Conversation.MessageCount != 2 || len(next.st.Turns) != 2 || next.st.Turns[1].Content != "Hi!" {
		t.Errorf("next message: %v %+v", next.ok, next.st)
	}
	if o := tst.st.Opened; !tst.ok || o == nil || !o.Created || !o.Conversation.Test || tst.st.Counted != nil {
		t.Errorf("test chat: %v %+v", tst.ok, tst.st)
	}
	if !owner.ok || owner.st.Opened != nil || owner.st.Counted != nil || owner.st.Conversation == nil {
		t.Errorf("a test chat in a visitor's session: %v %+v", owner.ok, owner.st)
	}
	if !seg.ok || seg.st.Opened != nil || seg.st.Counted != nil {
		t.Errorf("another tenant's segment: %v %+v", seg.ok, seg.st)
	}
	if !limit.ok || limit.st.Opened != nil || limit.st.Counted != nil {
		t.Errorf("at the limit: %v %+v", limit.ok, limit.st)
	}
	if !again.ok || again.st.Opened != nil || again.st.Keyed == nil || again.st.Keyed.Message.Content != "Keyed" {
		t.Errorf("sent again with its key: %v %+v", again.ok, again.st)
	}
	if o := other.st.Opened; !other.ok || o == nil || !o.Created || o.Conversation.TenantID != f.Other.ID || o.Message.Content != "Theirs" {
		t.Errorf("another tenant's session: %v %+v", other.ok, other.st)
	}
	if held.ok || held.st.Opened != nil {
		t.Errorf("a held session: %v %+v", held.ok, held.st)
	}
	// Counted: the first message only (its own tenant's); the test chat,
	// the refused starts and the continued conversation not.
	if used() != 5 {
		t.Errorf("used %d after, want 5", used())
	}
	var n int
	if err := f.Store.Pool().QueryRow(ctx, `SELECT count(*) FROM messages m JOIN conversations c ON c.id = m.conversation_id
		WHERE c.tenant_id = $1 AND m.role = 'user'`, f.Tenant.ID).Scan(&n); err != nil || n != 7 {
		t.Errorf("%d visitors' messages stored (%v), want 7: four before, first, next, test", n, err)
	}
}

// A batch written nothing (PostgreSQL refused it, or it was refused before
// it was sent) leaves each message to StartTurn, without an error; a batch
// written stores the messages of the turns that hold their leases, on the
// lease's count for a new conversation.
func TestOpenTurnsWrittenNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := dbtest.SetupConversations(t)
	lease := func(session, holder string) parley.ConversationStart {
		t.Helper()
		p := parley.ConversationStart{TenantID: f.Tenant.ID, SessionID: session, Limit: 100}
		if ok, _, err := f.Store.TakeSessionLease(ctx, f.Tenant.ID, session, holder, "", 2*time.Minute, 3, &p); !ok || err != nil {
			t.Fatalf("lease of %s: %v %v", session, ok, err)
		}
		return p
	}
	a, b := lease("wa", "h-wa"), lease("wb", "h-wb")
	bad := b
	bad.TenantID = "not-a-uuid"
	for _, c := range []struct {
		name string
		ps   []parley.ConversationStart
	}{
		{"refused by PostgreSQL", []parley.ConversationStart{a, bad}},
		{"two of one session", []parley.ConversationStart{a, a}},
	} {
		stored, errs := f.Store.WriteOpens(ctx, c.ps, "Hello", []string{"h-wa", "h-wb"}, []bool{true, true})
		if stored[0] || stored[1] || errs[0] != nil || errs[1] != nil {
			t.Errorf("%s: stored %v, errors %v; want nothing and no error", c.name, stored, errs)
		}
	}
	var n int
	if err := f.Store.Pool().QueryRow(ctx, `SELECT count(*) FROM conversations WHERE tenant_id = $1`, f.Tenant.ID).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d conversations after the refused batches (%v)", n, err)
	}
	// Stored: the message of a counted start whose lease its turn holds;
	// not: one not counted, one whose lease another holds.
	c := lease("wc", "h-wc")
	stored, errs := f.Store.WriteOpens(ctx, []parley.ConversationStart{a, b, c}, "Hello", []string{"h-wa", "h-wb", "h-not-wc"},
		[]bool{true, false, true})
	if !stored[0] || stored[1] || stored[2] || errs[0] != nil || errs[1] != nil || errs[2] != nil {
		t.Fatalf("a batch: stored %v, errors %v; want the first only", stored, errs)
	}
}

// Turns opening at once each get their own message stored and returned,
// however the messages were batched: first messages, each counted once,
// and continued conversations.
func TestOpenTurnConcurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := dbtest.SetupConversations(t)
	const n = 24
	run := func(round string) []openResult {
		out := make([]openResult, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				p := parley.ConversationStart{TenantID: f.Tenant.ID, SessionID: fmt.Sprintf("c%d", i), Limit: 1000}
				ok, st, err := f.Store.OpenTurn(ctx, p, fmt.Sprintf("%s %d", round, i), fmt.Sprintf("%s-h%d", round, i), "", 2*time.Minute, 3)
				out[i] = openResult{ok, st, err}
			})
		}
		wg.Wait()
		return out
	}
	for i, o := range run("first") {
		if op := o.st.Opened; o.err != nil || !o.ok || op == nil || !op.Created || op.Conversation.SessionID != fmt.Sprintf("c%d", i) ||
			op.Message.Content != fmt.Sprintf("first %d", i) {
			t.Fatalf("first message %d: %+v", i, o)
		}
		if _, err := f.Store.SaveTurn(ctx, parley.TurnRecord{TenantID: f.Tenant.ID, ConversationID: o.st.Opened.Conversation.ID,
			SessionID: fmt.Sprintf("c%d", i), LeaseHolder: fmt.Sprintf("first-h%d", i), Reply: "Hi!"}); err != nil {
			t.Fatal(err)
		}
	}
	for i, o := range run("next") {
		if op := o.st.Opened; o.err != nil || !o.ok || op == nil || op.Created || op.Conversation.MessageCount != 3 ||
			op.Message.Content != fmt.Sprintf("next %d", i) || o.st.Conversation == nil || o.st.Conversation.ID != op.Conversation.ID {
			t.Fatalf("next message %d: %+v", i, o)
		}
	}
	if u := usedCount(t, f); u != n {
		t.Errorf("used %d, want %d", u, n)
	}
	var msgs int
	if err := f.Store.Pool().QueryRow(ctx, `SELECT count(*) FROM messages m JOIN conversations c ON c.id = m.conversation_id
		WHERE c.tenant_id = $1 AND m.role = 'user'`, f.Tenant.ID).Scan(&msgs); err != nil || msgs != 2*n {
		t.Errorf("%d visitors' messages (%v), want %d", msgs, err, 2*n)
	}
}
