package db_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
)

func TestStartTurn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("StartsThenAppends", func(t *testing.T) {
		t.Parallel()
		f := setupConversations(t)
		p := parley.ConversationStart{TenantID: f.tenant.ID, SessionID: "s1", Limit: 5, Channel: parley.ChannelAgent}
		c, m, created, err := f.store.StartTurn(ctx, p, "Hello there", nil)
		if err != nil || !created || c.MessageCount != 1 || c.FirstUserMessage == nil || *c.FirstUserMessage != "Hello there" ||
			c.Channel != parley.ChannelAgent || m.ConversationID != c.ID || m.Role != "user" || m.Content != "Hello there" || m.CreatedAt.IsZero() {
			t.Fatalf("first turn: %+v %+v %v %v", c, m, created, err)
		}
		c2, m2, created, err := f.store.StartTurn(ctx, p, "Again", nil)
		if err != nil || created || c2.ID != c.ID || c2.MessageCount != 2 || m2.ID == m.ID {
			t.Fatalf("second turn: %+v %+v %v %v", c2, m2, created, err)
		}
		turns, err := f.store.RecentTurns(ctx, f.tenant.ID, c.ID, 10)
		if err != nil || len(turns) != 2 || turns[0].Content != "Hello there" || turns[1].Content != "Again" {
			t.Fatalf("stored turns %+v %v", turns, err)
		}
		if used, _ := f.store.ConversationsUsed(ctx, f.tenant.ID, m.CreatedAt); used != 1 {
			t.Errorf("usage %d, want 1", used)
		}
	})

	t.Run("LimitAtNAndNPlusOneUnderConcurrency", func(t *testing.T) {
		t.Parallel()
		f := setupConversations(t)
		const limit = 4
		var wg sync.WaitGroup
		errs := make([]error, 12)
		for i := range errs {
			wg.Go(func() {
				_, _, _, errs[i] = f.store.StartTurn(ctx, parley.ConversationStart{TenantID: f.tenant.ID,
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
				if d, _ := e.Details.(db.LimitDetails); d.Current != limit || d.Limit != limit {
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
		f.store.Pool().QueryRow(ctx, `SELECT count(*) FROM messages WHERE tenant_id = $1`, f.tenant.ID).Scan(&n)
		if n != limit {
			t.Errorf("%d messages stored, want %d: a refused start stores nothing", n, limit)
		}
	})

	t.Run("SameSessionRaceMakesOneConversation", func(t *testing.T) {
		t.Parallel()
		f := setupConversations(t)
		var wg sync.WaitGroup
		ids := make([]string, 8)
		for i := range ids {
			wg.Go(func() {
				c, _, _, err := f.store.StartTurn(ctx, parley.ConversationStart{TenantID: f.tenant.ID, SessionID: "same", Limit: 100}, "m", nil)
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
		f.store.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM messages WHERE conversation_id = $1),
			(SELECT message_count FROM conversations WHERE id = $1),
			(SELECT count FROM conversation_usage WHERE tenant_id = $2)`, ids[0], f.tenant.ID).Scan(&msgs, &count, &used)
		if msgs != 8 || count != 8 || used != 1 {
			t.Errorf("messages %d, message_count %d, usage %d; want 8, 8, 1", msgs, count, used)
		}
	})

	t.Run("OtherTenantsSegmentOrVisitor", func(t *testing.T) {
		t.Parallel()
		f := setupConversations(t)
		theirVisitor := f.visitor(t, f.other.ID)
		_, _, _, err := f.store.StartTurn(ctx, parley.ConversationStart{TenantID: f.tenant.ID, SessionID: "v", Limit: 10, VisitorID: &theirVisitor}, "hi", nil)
		wantKind(t, err, parley.KindNotFound)
		if used, _ := f.store.ConversationsUsed(ctx, f.tenant.ID, time.Now()); used != 0 {
			t.Errorf("a refused start counted: %d", used)
		}
	})
}

func TestTakeSessionLeaseReadsTheSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := setupConversations(t)
	ok, st, err := f.store.TakeSessionLease(ctx, f.tenant.ID, "fresh", "h1", 2*time.Minute, 5)
	if err != nil || !ok || st.Conversation != nil || len(st.Turns) != 0 {
		t.Fatalf("fresh session: %v %+v %v", ok, st, err)
	}
	p := parley.ConversationStart{TenantID: f.tenant.ID, SessionID: "fresh", Limit: 10}
	c, _, _, err := f.store.StartTurn(ctx, p, "one", st.Conversation)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.SaveTurn(ctx, parley.TurnRecord{TenantID: f.tenant.ID, ConversationID: c.ID,
		SessionID: "fresh", LeaseHolder: "h1", Reply: "reply one"}); err != nil {
		t.Fatal(err)
	}
	for i := 2; i <= 4; i++ {
		if _, _, _, err := f.store.StartTurn(ctx, p, fmt.Sprintf("msg %d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	// The reply gave the lease back: another holder takes it and reads the
	// last turns, oldest first.
	ok, st, err = f.store.TakeSessionLease(ctx, f.tenant.ID, "fresh", "h2", 2*time.Minute, 3)
	if err != nil || !ok || st.Conversation == nil || st.Conversation.ID != c.ID || st.Conversation.MessageCount != 5 {
		t.Fatalf("second lease: %v %+v %v", ok, st.Conversation, err)
	}
	if len(st.Turns) != 3 || st.Turns[0].Content != "msg 2" || st.Turns[2].Content != "msg 4" {
		t.Errorf("turns %+v", st.Turns)
	}
	// Held: a third holder does not get it, nor the state.
	if ok, st, err := f.store.TakeSessionLease(ctx, f.tenant.ID, "fresh", "h3", 2*time.Minute, 3); err != nil || ok || st.Conversation != nil {
		t.Errorf("held lease taken: %v %+v %v", ok, st, err)
	}
	// Another tenant's session of the same name is its own.
	if ok, st, err := f.store.TakeSessionLease(ctx, f.other.ID, "fresh", "h4", 2*time.Minute, 3); err != nil || !ok || st.Conversation != nil {
		t.Errorf("other tenant: %v %+v %v", ok, st, err)
	}
}
