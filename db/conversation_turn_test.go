package db_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db/dbtest"
)

func TestStartTurn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("StartsThenAppends", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupConversations(t)
		p := parley.ConversationStart{TenantID: f.Tenant.ID, SessionID: "s1", Limit: 5, Channel: parley.ChannelAgent}
		c, m, created, err := f.Store.StartTurn(ctx, p, "Hello there", nil)
		if err != nil || !created || c.MessageCount != 1 || c.FirstUserMessage == nil || *c.FirstUserMessage != "Hello there" ||
			c.Channel != parley.ChannelAgent || m.ConversationID != c.ID || m.Role != "user" || m.Content != "Hello there" || m.CreatedAt.IsZero() {
			t.Fatalf("first turn: %+v %+v %v %v", c, m, created, err)
		}
		c2, m2, created, err := f.Store.StartTurn(ctx, p, "Again", nil)
		if err != nil || created || c2.ID != c.ID || c2.MessageCount != 2 || m2.ID == m.ID {
			t.Fatalf("second turn: %+v %+v %v %v", c2, m2, created, err)
		}
		turns, err := f.Store.RecentTurns(ctx, f.Tenant.ID, c.ID, 10)
		if err != nil || len(turns) != 2 || turns[0].Content != "Hello there" || turns[1].Content != "Again" {
			t.Fatalf("stored turns %+v %v", turns, err)
		}
		if used, _ := f.Store.ConversationsUsed(ctx, f.Tenant.ID, m.CreatedAt); used != 1 {
			t.Errorf("usage %d, want 1", used)
		}
	})

	t.Run("LimitAtNAndNPlusOneUnderConcurrency", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupConversations(t)
		const limit = 4
		var wg sync.WaitGroup
		errs := make([]error, 12)
		for i := range errs {
			wg.Go(func() {
				_, _, _, errs[i] = f.Store.StartTurn(ctx, parley.ConversationStart{TenantID: f.Tenant.ID,
					SessionID: fmt.Sprintf("c%d", i), Limit: limit}, "hi", nil)
			})
		}
		wg.Wait()
		started := 0
		for _, err := range errs {
			var e *parley.Error
			switch {
			case err == nil:
				started++
			case errors.As(err, &e) && e.Code == "LIMIT_REACHED":
				if d, _ := e.Details.(parley.LimitDetails); d.Current != limit || d.Limit != limit {
					t.Errorf("details %+v", d)
				}
			default:
				t.Fatalf("unexpected %v", err)
			}
		}
		if started != limit {
			t.Errorf("%d started, want %d", started, limit)
		}
		var n int
		f.Store.Pool().QueryRow(ctx, `SELECT count(*) FROM messages WHERE tenant_id = $1`, f.Tenant.ID).Scan(&n)
		if n != limit {
			t.Errorf("%d messages stored, want %d: a refused start stores nothing", n, limit)
		}
	})

	t.Run("SameSessionRaceMakesOneConversation", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupConversations(t)
		var wg sync.WaitGroup
		ids := make([]string, 8)
		for i := range ids {
			wg.Go(func() {
				c, _, _, err := f.Store.StartTurn(ctx, parley.ConversationStart{TenantID: f.Tenant.ID, SessionID: "same", Limit: 100}, "m", nil)
				if err != nil {
					t.Error(err)
					return
				}
				ids[i] = c.ID
			})
		}
		wg.Wait()
		for _, id := range ids[1:] {
			if id != ids[0] {
				t.Fatalf("conversations %v", ids)
			}
		}
		var msgs, count, used int
		f.Store.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM messages WHERE conversation_id = $1),
			(SELECT message_count FROM conversations WHERE id = $1),
			(SELECT count FROM conversation_usage WHERE tenant_id = $2)`, ids[0], f.Tenant.ID).Scan(&msgs, &count, &used)
		if msgs != 8 || count != 8 || used != 1 {
			t.Errorf("messages %d, message_count %d, usage %d; want 8, 8, 1", msgs, count, used)
		}
	})

	t.Run("OtherTenantsSegmentOrVisitor", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupConversations(t)
		theirVisitor := f.Visitor(t, f.Other.ID)
		_, _, _, err := f.Store.StartTurn(ctx, parley.ConversationStart{TenantID: f.Tenant.ID, SessionID: "v", Limit: 10, VisitorID: &theirVisitor}, "hi", nil)
		dbtest.WantKind(t, err, parley.KindNotFound)
		if used, _ := f.Store.ConversationsUsed(ctx, f.Tenant.ID, time.Now()); used != 0 {
			t.Errorf("a refused start counted: %d", used)
		}
	})

	t.Run("TestAtTheLimit", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupConversations(t)
		if _, _, _, err := f.Store.StartTurn(ctx, parley.ConversationStart{TenantID: f.Tenant.ID, SessionID: "visitor", Limit: 1}, "hi", nil); err != nil {
			t.Fatal(err)
		}
		_, _, _, err := f.Store.StartTurn(ctx, parley.ConversationStart{TenantID: f.Tenant.ID, SessionID: "visitor-2", Limit: 1}, "hi", nil)
		dbtest.WantKind(t, err, parley.KindRateLimited) // the month is full for visitors
		c, _, created, err := f.Store.StartTurn(ctx, parley.ConversationStart{TenantID: f.Tenant.ID, SessionID: "test-1", Limit: 1, Test: true}, "hi", nil)
		if err != nil || !created || !c.Test {
			t.Fatalf("test start at the limit: %+v %v %v", c, created, err)
		}
		// Even a tenant whose plan allows no conversation can test its bot.
		if _, _, _, err := f.Store.StartTurn(ctx, parley.ConversationStart{TenantID: f.Tenant.ID, SessionID: "test-2", Limit: 0, Test: true}, "hi", nil); err != nil {
			t.Fatalf("test start with limit 0: %v", err)
		}
		if used, _ := f.Store.ConversationsUsed(ctx, f.Tenant.ID, time.Now()); used != 1 {
			t.Errorf("usage %d after two test starts, want the visitor's 1", used)
		}
		got, err := f.Store.Conversation(ctx, f.Tenant.ID, c.ID)
		if err != nil || !got.Test {
			t.Errorf("stored test conversation: %+v %v", got, err)
		}
		visitor, err := f.Store.Conversation(ctx, f.Tenant.ID, sessionConversation(t, f, "visitor"))
		if err != nil || visitor.Test {
			t.Errorf("visitor's conversation marked a test: %+v %v", visitor, err)
		}
		// A test of another tenant's segment is refused like any start.
		theirs := segment(t, f, f.Other.ID)
		_, _, _, err = f.Store.StartTurn(ctx, parley.ConversationStart{TenantID: f.Tenant.ID, SessionID: "test-3", Limit: 1, Test: true, SegmentID: &theirs}, "hi", nil)
		dbtest.WantKind(t, err, parley.KindNotFound)
	})

	t.Run("TestAndVisitorSessionsStayApart", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupConversations(t)
		visitor := parley.ConversationStart{TenantID: f.Tenant.ID, SessionID: "test-shared", Limit: 10}
		if _, _, _, err := f.Store.StartTurn(ctx, visitor, "hi", nil); err != nil {
			t.Fatal(err)
		}
		test := visitor
		test.Test = true
		_, _, _, err := f.Store.StartTurn(ctx, test, "hi", nil)
		dbtest.WantKind(t, err, parley.KindConflict)
		// Through the session lease's read too (known).
		known, err := f.Store.Conversation(ctx, f.Tenant.ID, sessionConversation(t, f, "test-shared"))
		if err != nil {
			t.Fatal(err)
		}
		_, _, _, err = f.Store.StartTurn(ctx, test, "hi", &known)
		dbtest.WantKind(t, err, parley.KindConflict)

		test.SessionID = "test-own"
		if _, _, _, err := f.Store.StartTurn(ctx, test, "hi", nil); err != nil {
			t.Fatal(err)
		}
		visitor.SessionID = "test-own"
		_, _, _, err = f.Store.StartTurn(ctx, visitor, "hi", nil)
		dbtest.WantKind(t, err, parley.KindConflict)
		var n int
		f.Store.Pool().QueryRow(ctx, `SELECT count(*) FROM messages WHERE tenant_id = $1`, f.Tenant.ID).Scan(&n)
		if n != 2 {
			t.Errorf("%d messages stored, want 2: a refused message is not stored", n)
		}
	})
}

func TestTakeSessionLeaseReadsTheSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := dbtest.SetupConversations(t)
	ok, st, err := f.Store.TakeSessionLease(ctx, f.Tenant.ID, "fresh", "h1", "", 2*time.Minute, 5, nil)
	if err != nil || !ok || st.Conversation != nil || len(st.Turns) != 0 {
		t.Fatalf("fresh session: %v %+v %v", ok, st, err)
	}
	p := parley.ConversationStart{TenantID: f.Tenant.ID, SessionID: "fresh", Limit: 10}
	c, _, _, err := f.Store.StartTurn(ctx, p, "one", st.Conversation)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Store.SaveTurn(ctx, parley.TurnRecord{TenantID: f.Tenant.ID, ConversationID: c.ID,
		SessionID: "fresh", LeaseHolder: "h1", Reply: "reply one"}); err != nil {
		t.Fatal(err)
	}
	for i := 2; i <= 4; i++ {
		if _, _, _, err := f.Store.StartTurn(ctx, p, fmt.Sprintf("msg %d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	// The reply gave the lease back: another holder takes it and reads the
	// last turns, oldest first.
	ok, st, err = f.Store.TakeSessionLease(ctx, f.Tenant.ID, "fresh", "h2", "", 2*time.Minute, 3, nil)
	if err != nil || !ok || st.Conversation == nil || st.Conversation.ID != c.ID || st.Conversation.MessageCount != 5 {
		t.Fatalf("second lease: %v %+v %v", ok, st.Conversation, err)
	}
	if len(st.Turns) != 3 || st.Turns[0].Content != "msg 2" || st.Turns[2].Content != "msg 4" {
		t.Errorf("turns %+v", st.Turns)
	}
	// Held: a third holder does not get it, nor the state.
	if ok, st, err := f.Store.TakeSessionLease(ctx, f.Tenant.ID, "fresh", "h3", "", 2*time.Minute, 3, nil); err != nil || ok || st.Conversation != nil {
		t.Errorf("held lease taken: %v %+v %v", ok, st, err)
	}
	// Another tenant's session of the same name is its own.
	if ok, st, err := f.Store.TakeSessionLease(ctx, f.Other.ID, "fresh", "h4", "", 2*time.Minute, 3, nil); err != nil || !ok || st.Conversation != nil {
		t.Errorf("other tenant: %v %+v %v", ok, st, err)
	}
}

// sessionConversation is the id of the tenant's conversation of the session.
func sessionConversation(t *testing.T, f *dbtest.ConvFixture, sessionID string) string {
	t.Helper()
	var id string
	if err := f.Store.Pool().QueryRow(context.Background(), `SELECT id FROM conversations WHERE tenant_id = $1 AND session_id = $2`,
		f.Tenant.ID, sessionID).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// usedCount is the tenant's count of conversations this month.
func usedCount(t *testing.T, f *dbtest.ConvFixture) int {
	t.Helper()
	n, err := f.Store.ConversationsUsed(context.Background(), f.Tenant.ID, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// segment adds a segment to the tenant and returns its id.
func segment(t *testing.T, f *dbtest.ConvFixture, tenantID string) string {
	t.Helper()
	var id string
	if err := f.Store.Pool().QueryRow(context.Background(), `INSERT INTO segments (tenant_id, slug, name, system_prompt)
		VALUES ($1, $2, 'Segment', '') RETURNING id`, tenantID, fmt.Sprintf("s%d", time.Now().UnixNano())).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// The lease of a session without a conversation counts the conversation
// about to start (one round trip less for a first message): StartTurn
// starts it on that count, and a turn that starts none takes it back, so
// that the month's usage is the conversations started, no more, no less.
func TestTakeSessionLeaseCountsTheStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := dbtest.SetupConversations(t)
	used := func() int { return usedCount(t, f) }
	take := func(session, holder string, p *parley.ConversationStart) parley.SessionState {
		t.Helper()
		ok, st, err := f.Store.TakeSessionLease(ctx, f.Tenant.ID, session, holder, "", 2*time.Minute, 3, p)
		if err != nil || !ok {
			t.Fatalf("lease of %s: %v %v", session, ok, err)
		}
		return st
	}
	p := parley.ConversationStart{TenantID: f.Tenant.ID, SessionID: "a", Limit: 2}
	st := take("a", "h1", &p)
	if st.Counted == nil || used() != 1 {
		t.Fatalf("first message's lease: counted %v, used %d, want a month and 1", st.Counted, used())
	}
	p.Counted = st.Counted
	c, _, started, err := f.Store.StartTurn(ctx, p, "one", st.Conversation)
	if err != nil || !started || used() != 1 {
		t.Fatalf("start on the lease's count: %v %v, used %d, want 1", started, err, used())
	}
	if _, err := f.Store.SaveTurn(ctx, parley.TurnRecord{TenantID: f.Tenant.ID, ConversationID: c.ID,
		SessionID: "a", LeaseHolder: "h1", Reply: "reply"}); err != nil {
		t.Fatal(err)
	}
	// The session has its conversation now: its next lease counts nothing.
	p.Counted = nil
	if st := take("a", "h2", &p); st.Counted != nil || st.Conversation == nil || used() != 1 {
		t.Fatalf("continuing session: counted %v, used %d", st.Counted, used())
	}
	// A start that fails (here its channel) takes its count back.
	q := parley.ConversationStart{TenantID: f.Tenant.ID, SessionID: "b", Limit: 2, Channel: "pigeon"}
	st = take("b", "h3", &q)
	if st.Counted == nil || used() != 2 {
		t.Fatalf("second session's lease: counted %v, used %d", st.Counted, used())
	}
	q.Counted = st.Counted
	if _, _, _, err := f.Store.StartTurn(ctx, q, "one", nil); parley.ErrorKind(err) != parley.KindInvalid {
		t.Fatalf("bad channel: %v", err)
	}
	if used() != 1 {
		t.Fatalf("used %d after a failed start, want 1: its count taken back", used())
	}
	// At the limit the lease counts nothing, and the start is refused.
	if err := f.Store.ReleaseSessionLease(ctx, f.Tenant.ID, "b", "h3"); err != nil {
		t.Fatal(err)
	}
	q.Channel, q.Counted, q.Limit = "", nil, 1
	if st := take("b", "h4", &q); st.Counted != nil || used() != 1 {
		t.Fatalf("at the limit: counted %v, used %d", st.Counted, used())
	}
	if _, _, _, err := f.Store.StartTurn(ctx, q, "one", nil); parley.ErrorKind(err) != parley.KindRateLimited {
		t.Fatalf("over the limit: %v", err)
	}
	// A test is never counted.
	tp := parley.ConversationStart{TenantID: f.Tenant.ID, SessionID: "c", Limit: 5, Test: true}
	if st := take("c", "h5", &tp); st.Counted != nil || used() != 1 {
		t.Fatalf("test: counted %v, used %d", st.Counted, used())
	}
}
