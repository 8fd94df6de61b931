package db_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
)

// A pipeline's transactions commit or roll back each on its own, in order,
// and a later one sees what an earlier one committed; a failed statement
// skips the rest of the pipeline, and the transaction it failed in is
// undone, that one's earlier statements included.
func TestPipelineTransactions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.New(t)
	key := dbtest.UniqueKey(t)
	insert := func(k string) string {
		return fmt.Sprintf(`INSERT INTO rate_counters (key, window_start, expires_at, count) VALUES ('%s', now(), now(), 1)`, k)
	}
	got := map[string]string{}
	err := store.Pipeline(ctx, [][]string{
		{insert(key + ":a"), `SELECT set_config('parley.test_mark', 'one', false)`},
		{insert(key + ":b"), `SELECT 1/0`, `SELECT 'skipped'`},
		{`SELECT string_agg(key, ',' ORDER BY key) FROM rate_counters WHERE key LIKE '` + key + `:%'`,
			`SELECT current_setting('parley.test_mark')`},
	}, func(tx, i int, rows pgx.Rows) {
		var v string
		if rows.Next() {
			_ = rows.Scan(&v)
		}
		rows.Close()
		if err := rows.Err(); errors.Is(err, db.ErrSkipped) {
			v = "skipped"
		} else if err != nil {
			v = "error"
		}
		got[fmt.Sprintf("%d.%d", tx, i)] = v
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"0.0": "", "0.1": "one", "1.0": "", "1.1": "error", "1.2": "skipped",
		"2.0": "skipped", "2.1": "skipped"}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("statement %s read %q, want %q (all: %v)", k, got[k], w, got)
		}
	}
	// The connection is back in the pool, in a usable state.
	var n int
	if err := store.Pool().QueryRow(ctx, `SELECT count(*) FROM rate_counters WHERE key LIKE $1`, key+":%").Scan(&n); err != nil || n != 1 {
		t.Errorf("counters after the pipeline: %d %v, want 1 (the failed transaction's undone)", n, err)
	}
	// A failure in the last transaction: the ones before it stay committed.
	var failed error
	err = store.Pipeline(ctx, [][]string{{insert(key + ":c")}, {insert(key + ":d"), `SELECT 1/0`}},
		func(tx, i int, rows pgx.Rows) {
			rows.Close()
			if tx == 1 && i == 1 {
				failed = rows.Err()
			}
		})
	if err != nil || failed == nil {
		t.Fatalf("pipeline: %v, the failing statement's error %v", err, failed)
	}
	var keys string
	if err := store.Pool().QueryRow(ctx, `SELECT string_agg(key, ',' ORDER BY key) FROM rate_counters WHERE key LIKE $1`,
		key+":%").Scan(&keys); err != nil || keys != key+":a,"+key+":c" {
		t.Errorf("counters after the second pipeline: %q %v, want a and c", keys, err)
	}
}

// OpenTurn takes the lease, counts a new conversation and stores the
// message in one round trip; whatever is out of the ordinary it leaves to
// StartTurn, with the lease's state and count, as TakeSessionLease does.
func TestOpenTurn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := dbtest.SetupConversations(t)
	used := func() int { return usedCount(t, f) }
	open := func(p parley.ConversationStart, message, holder string) (bool, parley.SessionState) {
		t.Helper()
		ok, st, err := f.Store.OpenTurn(ctx, p, message, holder, "", 2*time.Minute, 3)
		if err != nil {
			t.Fatalf("OpenTurn %s: %v", p.SessionID, err)
		}
		return ok, st
	}
	messages := func(session string) int {
		t.Helper()
		var n int
		if err := f.Store.Pool().QueryRow(ctx, `SELECT count(*) FROM messages m JOIN conversations c ON c.id = m.conversation_id
			WHERE c.tenant_id = $1 AND c.session_id = $2`, f.Tenant.ID, session).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	p := parley.ConversationStart{TenantID: f.Tenant.ID, SessionID: "a", Limit: 2, Channel: parley.ChannelAgent}

	// A first message starts its conversation, counted once.
	ok, st := open(p, "Hello there", "h1")
	o := st.Opened
	if !ok || o == nil || !o.Created || st.Conversation != nil || st.Counted != nil {
		t.Fatalf("first message: %v %+v", ok, st)
	}
	if c := o.Conversation; c.MessageCount != 1 || c.FirstUserMessage == nil || *c.FirstUserMessage != "Hello there" ||
		c.Channel != parley.ChannelAgent || c.SessionID != "a" || o.Message.ConversationID != c.ID ||
		o.Message.Content != "Hello there" || o.Message.Role != "user" || o.Message.ID == "" || o.Message.CreatedAt.IsZero() {
		t.Fatalf("first message stored as %+v", o)
	}
	if used() != 1 || messages("a") != 1 {
		t.Fatalf("used %d, %d messages; want 1 and 1", used(), messages("a"))
	}
	// Held: another turn of the session gets neither the lease nor its
	// message stored.
	if ok, st := open(p, "Too soon", "h2"); ok || st.Opened != nil || messages("a") != 1 {
		t.Fatalf("held session: %v %+v, %d messages", ok, st, messages("a"))
	}
	if _, err := f.Store.SaveTurn(ctx, parley.TurnRecord{TenantID: f.Tenant.ID, ConversationID: o.Conversation.ID,
		SessionID: "a", LeaseHolder: "h1", Reply: "Hi!"}); err != nil {
		t.Fatal(err)
	}
	// The next message continues the conversation: nothing counted, the
	// state read before the message.
	ok, st = open(p, "Again", "h3")
	if !ok || st.Opened == nil || st.Opened.Created || st.Opened.Conversation.ID != o.Conversation.ID ||
		st.Opened.Conversation.MessageCount != 3 || st.Opened.Message.Content != "Again" {
		t.Fatalf("second message: %v %+v", ok, st.Opened)
	}
	if st.Conversation == nil || st.Conversation.MessageCount != 2 || len(st.Turns) != 2 || st.Turns[1].Content != "Hi!" {
		t.Fatalf("state read with the lease: %+v %+v", st.Conversation, st.Turns)
	}
	if used() != 1 || messages("a") != 3 {
		t.Fatalf("used %d, %d messages; want 1 and 3", used(), messages("a"))
	}
	if err := f.Store.ReleaseSessionLease(ctx, f.Tenant.ID, "a", "h3"); err != nil {
		t.Fatal(err)
	}

	// A test chat's message in a visitor's session: not stored; StartTurn
	// refuses it.
	tp := p
	tp.Test = true
	ok, st = open(tp, "Owner here", "h4")
	if !ok || st.Opened != nil || st.Counted != nil {
		t.Fatalf("test in a visitor's session: %v %+v", ok, st)
	}
	if _, _, _, err := f.Store.StartTurn(ctx, tp, "Owner here", st.Conversation); parley.ErrorKind(err) != parley.KindConflict {
		t.Fatalf("StartTurn: %v, want a conflict", err)
	}
	if err := f.Store.ReleaseSessionLease(ctx, f.Tenant.ID, "a", "h4"); err != nil {
		t.Fatal(err)
	}

	// A segment of another tenant: nothing counted, nothing stored.
	theirs := segment(t, f, f.Other.ID)
	q := parley.ConversationStart{TenantID: f.Tenant.ID, SessionID: "b", Limit: 2, SegmentID: &theirs}
	if ok, st = open(q, "Hi", "h5"); !ok || st.Opened != nil || st.Counted != nil || used() != 1 {
		t.Fatalf("another tenant's segment: %v %+v, used %d", ok, st, used())
	}
	if _, _, _, err := f.Store.StartTurn(ctx, q, "Hi", nil); parley.ErrorKind(err) != parley.KindNotFound {
		t.Fatalf("StartTurn: %v, want not found", err)
	}
	if err := f.Store.ReleaseSessionLease(ctx, f.Tenant.ID, "b", "h5"); err != nil {
		t.Fatal(err)
	}

	// A start that breaks the rules (its channel) is counted by the lease,
	// not stored; StartTurn refuses it and takes the count back.
	q = parley.ConversationStart{TenantID: f.Tenant.ID, SessionID: "b", Limit: 2, Channel: "pigeon"}
	ok, st = open(q, "Hi", "h6")
	if !ok || st.Opened != nil || st.Counted == nil || used() != 2 {
		t.Fatalf("bad channel: %v %+v, used %d", ok, st, used())
	}
	q.Counted = st.Counted
	if _, _, _, err := f.Store.StartTurn(ctx, q, "Hi", nil); parley.ErrorKind(err) != parley.KindInvalid || used() != 1 {
		t.Fatalf("StartTurn: %v, used %d; want invalid and 1", err, used())
	}
	if err := f.Store.ReleaseSessionLease(ctx, f.Tenant.ID, "b", "h6"); err != nil {
		t.Fatal(err)
	}

	// At the limit (N = 1 of 1) nothing is counted or stored, even on a
	// connection whose last count was another turn's; StartTurn says why.
	q = parley.ConversationStart{TenantID: f.Tenant.ID, SessionID: "c", Limit: 1}
	if ok, st = open(q, "Hi", "h7"); !ok || st.Opened != nil || st.Counted != nil || used() != 1 || messages("c") != 0 {
		t.Fatalf("at the limit: %v %+v, used %d", ok, st, used())
	}
	if _, _, _, err := f.Store.StartTurn(ctx, q, "Hi", nil); parley.ErrorKind(err) != parley.KindRateLimited {
		t.Fatalf("StartTurn at the limit: %v", err)
	}
	// Under it (N + 1 = 2), the same session starts.
	q.Limit = 2
	if err := f.Store.ReleaseSessionLease(ctx, f.Tenant.ID, "c", "h7"); err != nil {
		t.Fatal(err)
	}
	if ok, st = open(q, "Hi", "h8"); !ok || st.Opened == nil || !st.Opened.Created || used() != 2 {
		t.Fatalf("under the limit: %v %+v, used %d", ok, st, used())
	}

	// A test chat is never counted, whatever the limit.
	tq := parley.ConversationStart{TenantID: f.Tenant.ID, SessionID: "d", Limit: 0, Test: true}
	if ok, st = open(tq, "Try", "h9"); !ok || st.Opened == nil || !st.Opened.Created || !st.Opened.Conversation.Test || used() != 2 {
		t.Fatalf("test chat: %v %+v, used %d", ok, st, used())
	}

	// Another tenant's session of the same name is its own.
	op := parley.ConversationStart{TenantID: f.Other.ID, SessionID: "a", Limit: 5}
	if ok, st = open(op, "Hello", "h10"); !ok || st.Opened == nil || !st.Opened.Created || st.Opened.Conversation.TenantID != f.Other.ID {
		t.Fatalf("other tenant: %v %+v", ok, st)
	}
}

// A turn whose caller has gone before its statements are sent stores
// nothing and leaves the pool usable.
func TestOpenTurnCancelled(t *testing.T) {
	t.Parallel()
	f := dbtest.SetupConversations(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := parley.ConversationStart{TenantID: f.Tenant.ID, SessionID: "gone", Limit: 5}
	if ok, st, err := f.Store.OpenTurn(ctx, p, "Hello", "h1", "", 2*time.Minute, 3); err == nil || ok || st.Opened != nil {
		t.Fatalf("cancelled: %v %+v %v, want an error", ok, st, err)
	}
	ok, st, err := f.Store.OpenTurn(context.Background(), p, "Hello", "h2", "", 2*time.Minute, 3)
	if err != nil || !ok || st.Opened == nil || !st.Opened.Created {
		t.Fatalf("after a cancelled turn: %v %+v %v", ok, st, err)
	}
	if n, _ := f.Store.ConversationsUsed(context.Background(), f.Tenant.ID, time.Now()); n != 1 {
		t.Errorf("used %d, want 1", n)
	}
}

// OpenTurn keeps the resolution's marks itself (migration 00060): the
// answer marks its conversation answered, and a visitor's message that
// repeats one of theirs marks it repeated_question; another question does
// not.
func TestOpenTurnKeepsResolution(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := dbtest.SetupConversations(t)
	marks := func(id string) (answered, repeated bool) {
		t.Helper()
		if err := f.Store.Pool().QueryRow(ctx, `SELECT answered, repeated_question FROM conversations WHERE id = $1`, id).
			Scan(&answered, &repeated); err != nil {
			t.Fatal(err)
		}
		return answered, repeated
	}
	turn := func(session, holder, message string) string {
		t.Helper()
		p := parley.ConversationStart{TenantID: f.Tenant.ID, SessionID: session, Limit: 10, Channel: parley.ChannelWeb}
		ok, st, err := f.Store.OpenTurn(ctx, p, message, holder, "", 2*time.Minute, 3)
		if err != nil || !ok || st.Opened == nil {
			t.Fatalf("OpenTurn %q: %v %v %+v", message, err, ok, st)
		}
		id := st.Opened.Conversation.ID
		if _, err := f.Store.SaveTurn(ctx, parley.TurnRecord{TenantID: f.Tenant.ID, ConversationID: id,
			SessionID: session, LeaseHolder: holder, Reply: "Use the link."}); err != nil {
			t.Fatal(err)
		}
		return id
	}
	id := turn("r", "h1", "How do I reset my password?")
	if answered, repeated := marks(id); !answered || repeated {
		t.Fatalf("after one turn: answered %v, repeated %v; want true, false", answered, repeated)
	}
	turn("r", "h2", "And where is my invoice stored?")
	if _, repeated := marks(id); repeated {
		t.Fatal("another question marked the conversation repeated_question")
	}
	turn("r", "h3", "how do i reset my password??")
	if _, repeated := marks(id); !repeated {
		t.Fatal("the question asked again did not mark the conversation repeated_question")
	}
}

// Seeding marks the conversations it copies as the statements that store
// messages one at a time do: answered by an answer, repeated_question by a
// visitor's question asked again, and neither by a conversation of
// different questions without an answer.
func TestSeedKeepsResolution(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := dbtest.SetupConversations(t)
	at := time.Now().UTC().Add(-time.Hour)
	msg := func(role, content string, i int) db.SeedMessage {
		return db.SeedMessage{Role: role, Content: content, CreatedAt: at.Add(time.Duration(i) * time.Second)}
	}
	repeated := db.SeedConversation{ID: db.NewSeedID(), SessionID: "seed-repeated", Channel: parley.ChannelWeb, Status: parley.StatusBot,
		VisitorType: parley.VisitorHuman, FirstUserMessage: "How do I reset my password?", Locale: "en", CreatedAt: at,
		Messages: []db.SeedMessage{msg("user", "How do I reset my password?", 0), msg("assistant", "Use the link.", 1),
			msg("user", "how do i reset my password??", 2)}}
	plain := db.SeedConversation{ID: db.NewSeedID(), SessionID: "seed-plain", Channel: parley.ChannelWeb, Status: parley.StatusBot,
		VisitorType: parley.VisitorHuman, FirstUserMessage: "How do I reset my password?", Locale: "en", CreatedAt: at,
		Messages: []db.SeedMessage{msg("user", "How do I reset my password?", 0), msg("user", "And where is my invoice stored?", 1)}}
	if _, err := f.Store.CopySeedConversations(ctx, f.Tenant.ID, []db.SeedConversation{repeated, plain}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		session            string
		answered, repeated bool
	}{{"seed-repeated", true, true}, {"seed-plain", false, false}} {
		var answered, rep bool
		if err := f.Store.Pool().QueryRow(ctx, `SELECT answered, repeated_question FROM conversations WHERE tenant_id = $1 AND session_id = $2`,
			f.Tenant.ID, c.session).Scan(&answered, &rep); err != nil {
			t.Fatal(err)
		}
		if answered != c.answered || rep != c.repeated {
			t.Errorf("%s: answered %v, repeated_question %v; want %v, %v", c.session, answered, rep, c.answered, c.repeated)
		}
	}
}

// A turn's admission (ConversationStart.Admit) counts the address with the
// lease, in the turn's one round trip: a count under the limit on the
// configuration's current version takes the lease and stores the message;
// an address at its limit counts nothing and takes no lease; a version
// that is not the current one counts the request but takes no lease; and
// a lease another turn holds is not taken though the count admitted.
func TestOpenTurnAdmission(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := dbtest.SetupConversations(t)
	now := time.Date(2026, 11, 30, 12, 0, 30, 0, time.UTC)
	var version int64
	if err := f.Store.Pool().QueryRow(ctx, `SELECT config_version FROM tenants WHERE id = $1`, f.Tenant.ID).Scan(&version); err != nil {
		t.Fatal(err)
	}
	// The counters are the cluster's, not the tenant's: the addresses are
	// the tenant's own, so that the test runs again (-count) on fresh ones.
	windows := func(addr string) []parley.RateWindow {
		addr = f.Tenant.ID + "-" + addr
		return []parley.RateWindow{
			{Key: "chat:ip:min:" + addr, Length: time.Minute, Limit: 3},
			{Key: "chat:ip:hour:" + addr, Length: time.Hour, Limit: 30},
		}
	}
	open := func(session, holder string, a *parley.Admission) (bool, parley.SessionState) {
		t.Helper()
		p := parley.ConversationStart{TenantID: f.Tenant.ID, SessionID: session, Limit: 100, Channel: parley.ChannelWeb, Admit: a}
		ok, st, err := f.Store.OpenTurn(ctx, p, "Hello", holder, "", 2*time.Minute, 3)
		if err != nil {
			t.Fatalf("OpenTurn %s: %v", session, err)
		}
		return ok, st
	}
	stored := func(session string) (leases, conversations int) {
		t.Helper()
		if err := f.Store.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM session_leases WHERE tenant_id = $1 AND session_id = $2),
			(SELECT count(*) FROM conversations WHERE tenant_id = $1 AND session_id = $2)`, f.Tenant.ID, session).Scan(&leases, &conversations); err != nil {
			t.Fatal(err)
		}
		return leases, conversations
	}
	minute := func(addr string) int {
		t.Helper()
		n, err := f.Store.Count(ctx, windows(addr)[0].Key, time.Minute, now)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	// Admitted: counted, the lease taken, the message stored.
	a := &parley.Admission{Windows: windows("a"), Now: now, Slug: f.Tenant.Slug, Version: version}
	ok, st := open("adm-1", "h1", a)
	if !ok || st.Opened == nil || !a.Made || !a.Admitted || !a.Counted || fmt.Sprint(a.Counts) != "[1 1]" ||
		a.Current == nil || *a.Current != version {
		t.Fatalf("admitted: ok %v, opened %v, admission %+v", ok, st.Opened != nil, a)
	}
	if l, c := stored("adm-1"); l != 1 || c != 1 {
		t.Fatalf("admitted: %d leases, %d conversations; want 1, 1", l, c)
	}

	// A lease another turn holds: admitted and counted, not taken.
	a = &parley.Admission{Windows: windows("a"), Now: now, Slug: f.Tenant.Slug, Version: version}
	if ok, _ := open("adm-1", "h2", a); ok || !a.Made || !a.Admitted || fmt.Sprint(a.Counts) != "[2 2]" {
		t.Fatalf("a held lease: ok %v, admission %+v; want not taken, admitted, counted", ok, a)
	}

	// Another version than the current one: counted, no lease, nothing stored.
	a = &parley.Admission{Windows: windows("a"), Now: now, Slug: f.Tenant.Slug, Version: version - 1}
	if ok, _ := open("adm-2", "h3", a); ok || !a.Made || a.Admitted || !a.Counted || fmt.Sprint(a.Counts) != "[3 3]" {
		t.Fatalf("an old version: ok %v, admission %+v; want not taken, counted, not admitted", ok, a)
	}
	if l, c := stored("adm-2"); l != 0 || c != 0 {
		t.Fatalf("an old version: %d leases, %d conversations; want none", l, c)
	}

	// At the limit (3 a minute): nothing counted, no lease, nothing stored.
	a = &parley.Admission{Windows: windows("a"), Now: now, Slug: f.Tenant.Slug, Version: version}
	if ok, _ := open("adm-3", "h4", a); ok || !a.Made || a.Admitted || a.Counted || fmt.Sprint(a.Counts) != "[3 3]" {
		t.Fatalf("at the limit: ok %v, admission %+v; want not taken, not counted", ok, a)
	}
	if l, c := stored("adm-3"); l != 0 || c != 0 || minute("a") != 3 {
		t.Fatalf("at the limit: %d leases, %d conversations, minute %d; want 0, 0, 3", l, c, minute("a"))
	}

	// After the refusals, the pool's connections admit other addresses'
	// turns: what a refused admission left in the connection's setting
	// stops nobody after it.
	for i := range 12 {
		a = &parley.Admission{Windows: windows(fmt.Sprintf("b%d", i)), Now: now, Slug: f.Tenant.Slug, Version: version}
		session := fmt.Sprintf("adm-b%d", i)
		if ok, st := open(session, fmt.Sprintf("hb%d", i), a); !ok || st.Opened == nil || !a.Admitted {
			t.Fatalf("address b%d: ok %v, admission %+v", i, ok, a)
		}
	}

	// The limit's own count is admitted, the one past it is not: a minute
	// of one message.
	one := []parley.RateWindow{{Key: windows("e")[0].Key, Length: time.Minute, Limit: 1}}
	a = &parley.Admission{Windows: one, Now: now, Slug: f.Tenant.Slug, Version: version}
	if ok, _ := open("adm-e1", "he1", a); !ok || !a.Admitted || fmt.Sprint(a.Counts) != "[1]" {
		t.Fatalf("the limit's own count: ok %v, admission %+v; want admitted at 1", ok, a)
	}
	a = &parley.Admission{Windows: one, Now: now, Slug: f.Tenant.Slug, Version: version}
	if ok, _ := open("adm-e2", "he2", a); ok || a.Admitted || a.Counted {
		t.Fatalf("one past the limit: ok %v, admission %+v; want refused, not counted", ok, a)
	}

	// A tenant gone (its slug unknown): counted, not admitted, no version.
	a = &parley.Admission{Windows: windows("c"), Now: now, Slug: "no-such-tenant", Version: version}
	if ok, _ := open("adm-4", "h5", a); ok || !a.Made || a.Admitted || a.Current != nil {
		t.Fatalf("an unknown slug: ok %v, admission %+v", ok, a)
	}

	// Without an admission the lease is as before: taken, nothing counted.
	if ok, st := open("adm-5", "h6", nil); !ok || st.Opened == nil || minute("d") != 0 {
		t.Fatalf("no admission: ok %v", ok)
	}
}
