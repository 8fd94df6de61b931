package db_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
)

func TestStartTurnRules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("IdempotentPerSession", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupConversations(t)
		p := parley.ConversationStart{TenantID: f.Tenant.ID, SessionID: "s1", Limit: 10, PageURL: dbtest.Ptr("https://example.com/a"),
			Metadata: parley.ConversationMetadata{UserAgent: "UA", Referrer: "https://ref", Page: "/a"}}
		c1, _, created, err := f.Store.StartTurn(ctx, p, "hi", nil)
		if err != nil || !created {
			t.Fatalf("first start: created=%v err=%v", created, err)
		}
		if c1.Channel != "web" || c1.Status != "BOT" || c1.VisitorType != "human" || c1.Metadata.UserAgent != "UA" {
			t.Errorf("defaults/metadata: %+v", c1)
		}
		c2, _, created, err := f.Store.StartTurn(ctx, p, "hi", nil)
		if err != nil || created || c2.ID != c1.ID {
			t.Fatalf("second start: created=%v err=%v id %s vs %s", created, err, c2.ID, c1.ID)
		}
		// the same session id in another tenant is another conversation
		p.TenantID = f.Other.ID
		c3, _, created, err := f.Store.StartTurn(ctx, p, "hi", nil)
		if err != nil || !created || c3.ID == c1.ID {
			t.Fatalf("other tenant: created=%v err=%v", created, err)
		}
	})

	t.Run("Invalid", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupConversations(t)
		for name, p := range map[string]parley.ConversationStart{
			"EmptySession":   {SessionID: ""},
			"LongSession":    {SessionID: strings.Repeat("é", 101)},
			"BadChannel":     {SessionID: "x", Channel: "fax"},
			"BadVisitorType": {SessionID: "x", VisitorType: "robot"},
		} {
			p.TenantID, p.Limit = f.Tenant.ID, 10
			_, _, _, err := f.Store.StartTurn(ctx, p, "hi", nil)
			if parley.ErrorKind(err) != parley.KindInvalid {
				t.Errorf("%s: %v", name, err)
			}
		}
	})

	t.Run("OtherTenantsLinks", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupConversations(t)
		v := f.Visitor(t, f.Other.ID)
		_, _, _, err := f.Store.StartTurn(ctx, parley.ConversationStart{TenantID: f.Tenant.ID, SessionID: "x", Limit: 10, VisitorID: &v}, "hi", nil)
		dbtest.WantKind(t, err, parley.KindNotFound)
		var seg string
		if err := f.Store.Pool().QueryRow(ctx, `SELECT id FROM segments WHERE tenant_id = $1`, f.Other.ID).Scan(&seg); err != nil {
			t.Fatal(err)
		}
		_, _, _, err = f.Store.StartTurn(ctx, parley.ConversationStart{TenantID: f.Tenant.ID, SessionID: "x", Limit: 10, SegmentID: &seg}, "hi", nil)
		dbtest.WantKind(t, err, parley.KindNotFound)
	})

	t.Run("MonthlyLimitUnderConcurrency", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupConversations(t)
		const limit = 3
		var wg sync.WaitGroup
		errs := make([]error, 10)
		for i := range errs {
			wg.Go(func() {
				_, _, _, errs[i] = f.Store.StartTurn(ctx, parley.ConversationStart{
					TenantID: f.Tenant.ID, SessionID: fmt.Sprintf("c%d", i), Limit: limit}, "hi", nil)
			})
		}
		wg.Wait()
		ok := 0
		now := time.Now().UTC()
		nextReset := time.Date(now.Year(), now.Month()+1, 1, 0, 0, 0, 0, time.UTC)
		for _, err := range errs {
			if err == nil {
				ok++
				continue
			}
			var e *parley.Error
			if !errors.As(err, &e) || e.Kind != parley.KindRateLimited || e.Code != "LIMIT_REACHED" {
				t.Fatalf("unexpected error %v", err)
			}
			d, _ := e.Details.(parley.LimitDetails)
			if d.Current != limit || d.Limit != limit || !d.NextResetAt.Equal(nextReset) {
				t.Errorf("details = %+v, want current=limit=%d nextResetAt=%s", d, limit, nextReset)
			}
		}
		if ok != limit {
			t.Errorf("%d conversations started, want %d", ok, limit)
		}
		used, err := f.Store.ConversationsUsed(ctx, f.Tenant.ID, time.Now())
		if err != nil || used != limit {
			t.Errorf("ConversationsUsed = %d, %v", used, err)
		}
		// an existing session continues at the limit
		for i := range errs {
			if errs[i] == nil {
				_, _, created, err := f.Store.StartTurn(ctx, parley.ConversationStart{
					TenantID: f.Tenant.ID, SessionID: fmt.Sprintf("c%d", i), Limit: limit}, "again", nil)
				if err != nil || created {
					t.Errorf("continuing c%d at the limit: created=%v err=%v", i, created, err)
				}
			}
		}
		// the limit is the tenant's: another tenant still starts
		if _, _, _, err := f.Store.StartTurn(ctx, parley.ConversationStart{TenantID: f.Other.ID, SessionID: "c0", Limit: limit}, "hi", nil); err != nil {
			t.Errorf("other tenant: %v", err)
		}
	})

	t.Run("LimitAtNAndNPlusOne", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupConversations(t)
		for i := range 2 {
			f.Start(t, parley.ConversationStart{SessionID: fmt.Sprintf("s%d", i), Limit: 2})
		}
		_, _, _, err := f.Store.StartTurn(ctx, parley.ConversationStart{TenantID: f.Tenant.ID, SessionID: "s2", Limit: 2}, "hi", nil)
		dbtest.WantKind(t, err, parley.KindRateLimited)
		if _, _, _, err := f.Store.StartTurn(ctx, parley.ConversationStart{TenantID: f.Tenant.ID, SessionID: "s2", Limit: 3}, "hi", nil); err != nil {
			t.Errorf("limit raised: %v", err)
		}
	})

	t.Run("ConversationsUsedIsThisMonth", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupConversations(t)
		c := f.Start(t, parley.ConversationStart{SessionID: "gone"})
		f.Start(t, parley.ConversationStart{SessionID: "new"})
		// Last month's usage does not count this month.
		if _, err := f.Store.Pool().Exec(ctx, `INSERT INTO conversation_usage (tenant_id, month, count)
			VALUES ($1, $2, 500)`, f.Tenant.ID, db.MonthStart(time.Now()).AddDate(0, -1, 0)); err != nil {
			t.Fatal(err)
		}
		// A deleted conversation still counts: the limit is on conversations started.
		if _, err := f.Store.Pool().Exec(ctx, `DELETE FROM conversations WHERE id = $1`, c.ID); err != nil {
			t.Fatal(err)
		}
		used, err := f.Store.ConversationsUsed(ctx, f.Tenant.ID, time.Now())
		if err != nil || used != 2 {
			t.Errorf("ConversationsUsed = %d, %v; want 2", used, err)
		}
		if _, _, _, err := f.Store.StartTurn(ctx, parley.ConversationStart{TenantID: f.Tenant.ID, SessionID: "again", Limit: 2}, "hi", nil); parley.ErrorKind(err) != parley.KindRateLimited {
			t.Errorf("third start under a limit of 2 after a deletion: %v", err)
		}
		if used, _ := f.Store.ConversationsUsed(ctx, f.Other.ID, time.Now()); used != 0 {
			t.Errorf("other tenant used %d", used)
		}
	})
}

func TestConversationWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("MessagesAndCounters", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupConversations(t)
		c := f.Start(t, parley.ConversationStart{SessionID: "m"})
		steps := []struct{ role, content string }{
			{"assistant", "Hello!"}, {"user", "first question"}, {"assistant", "answer"}, {"user", "second"},
		}
		for _, s := range steps {
			if _, err := db.AppendMessage(ctx, f.Store.Pool(), f.Tenant.ID, c.ID, s.role, s.content, nil); err != nil {
				t.Fatal(err)
			}
		}
		for _, name := range []string{"SUBMIT_FORM", "Search_Products"} {
			if err := db.AppendToolHistory(ctx, f.Store.Pool(), f.Tenant.ID, c.ID, parley.ToolCall{ToolName: name, ToolType: "SUBMIT_FORM",
				Input: json.RawMessage(`{"email":"a@b.c"}`), Result: json.RawMessage(`{"success":true}`)}); err != nil {
				t.Fatal(err)
			}
		}
		got, err := f.Store.Conversation(ctx, f.Tenant.ID, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.MessageCount != 5 || got.ToolCallsCount != 2 || got.FirstUserMessage == nil || *got.FirstUserMessage != "hello" {
			t.Errorf("counters: %+v", got)
		}
		if !got.LastMessageAt.After(c.LastMessageAt) {
			t.Errorf("last_message_at did not move")
		}
		if calls := f.ToolNames(t, f.Tenant.ID, c.ID); len(calls) != 2 || calls[0] != "submit_form" || calls[1] != "search_products" {
			t.Errorf("tool history %q", calls)
		}
		turns, err := f.Store.RecentTurns(ctx, f.Tenant.ID, c.ID, 3)
		if err != nil || len(turns) != 3 || turns[0].Content != "first question" || turns[2].Content != "second" {
			t.Errorf("recent turns %+v, %v", turns, err)
		}
		if err := f.Store.EscalateConversation(ctx, f.Tenant.ID, c.ID); err != nil {
			t.Fatal(err)
		}
		if got, _ := f.Store.Conversation(ctx, f.Tenant.ID, c.ID); got.Status != "ESCALATED" || got.EscalatedAt == nil {
			t.Errorf("status %s, escalated at %v", got.Status, got.EscalatedAt)
		}
		_, err = db.AppendMessage(ctx, f.Store.Pool(), f.Tenant.ID, c.ID, "system", "x", nil)
		dbtest.WantKind(t, err, parley.KindInvalid)
	})

	t.Run("Feedback", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupConversations(t)
		c := f.Start(t, parley.ConversationStart{SessionID: "fb"})
		user, _ := db.AppendMessage(ctx, f.Store.Pool(), f.Tenant.ID, c.ID, "user", "q", nil)
		a1, _ := db.AppendMessage(ctx, f.Store.Pool(), f.Tenant.ID, c.ID, "assistant", "a1", nil)
		a2, _ := db.AppendMessage(ctx, f.Store.Pool(), f.Tenant.ID, c.ID, "assistant", "a2", nil)
		counts := func() (int, int) {
			got, err := f.Store.Conversation(ctx, f.Tenant.ID, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			return got.FeedbackPositive, got.FeedbackNegative
		}
		steps := []struct {
			id       string
			value    int
			pos, neg int
		}{
			{a1.ID, 1, 1, 0},
			{a1.ID, 1, 1, 0}, // repeating changes nothing
			{a2.ID, -1, 1, 1},
			{a1.ID, -1, 0, 2}, // changing a vote moves it
			{a2.ID, 1, 1, 1},
		}
		for i, s := range steps {
			if err := f.Store.RecordFeedback(ctx, f.Tenant.ID, s.id, s.value); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
			if p, n := counts(); p != s.pos || n != s.neg {
				t.Errorf("step %d: counts %d/%d, want %d/%d", i, p, n, s.pos, s.neg)
			}
		}
		dbtest.WantKind(t, f.Store.RecordFeedback(ctx, f.Tenant.ID, user.ID, 1), parley.KindInvalid)
		dbtest.WantKind(t, f.Store.RecordFeedback(ctx, f.Tenant.ID, a1.ID, 0), parley.KindInvalid)
		dbtest.WantKind(t, f.Store.RecordFeedback(ctx, f.Other.ID, a1.ID, 1), parley.KindNotFound)
		dbtest.WantKind(t, f.Store.RecordFeedback(ctx, f.Tenant.ID, "nope", 1), parley.KindNotFound)
	})

	t.Run("TenantIsolation", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupConversations(t)
		c := f.Start(t, parley.ConversationStart{SessionID: "iso"})
		_, err := db.AppendMessage(ctx, f.Store.Pool(), f.Other.ID, c.ID, "user", "x", nil)
		dbtest.WantKind(t, err, parley.KindNotFound)
		dbtest.WantKind(t, db.AppendToolHistory(ctx, f.Store.Pool(), f.Other.ID, c.ID, parley.ToolCall{ToolName: "x", ToolType: "X"}), parley.KindNotFound)
		dbtest.WantKind(t, f.Store.EscalateConversation(ctx, f.Other.ID, c.ID), parley.KindNotFound)
		if got, _ := f.Store.Conversation(ctx, f.Tenant.ID, c.ID); got.Status != "BOT" {
			t.Errorf("another tenant escalated the conversation: %s", got.Status)
		}
		_, err = f.Store.Conversation(ctx, f.Other.ID, c.ID)
		dbtest.WantKind(t, err, parley.KindNotFound)
		if _, err := db.AppendMessage(ctx, f.Store.Pool(), f.Tenant.ID, c.ID, "user", "mine", nil); err != nil {
			t.Fatal(err)
		}
		if turns, err := f.Store.RecentTurns(ctx, f.Other.ID, c.ID, 10); err != nil || len(turns) != 0 {
			t.Errorf("other tenant sees %d turns, %v", len(turns), err)
		}
		if calls := f.ToolNames(t, f.Other.ID, c.ID); len(calls) != 0 {
			t.Errorf("other tenant sees tool calls %q", calls)
		}
		got, _ := f.Store.Conversation(ctx, f.Tenant.ID, c.ID)
		if got.MessageCount != 2 || got.ToolCallsCount != 0 || got.Status != "BOT" {
			t.Errorf("other tenant's writes leaked: %+v", got)
		}
	})

	t.Run("DeletingVisitorCascades", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupConversations(t)
		v := f.Visitor(t, f.Tenant.ID)
		c := f.Start(t, parley.ConversationStart{SessionID: "v", VisitorID: &v})
		if _, err := db.AppendMessage(ctx, f.Store.Pool(), f.Tenant.ID, c.ID, "user", "hi", nil); err != nil {
			t.Fatal(err)
		}
		if err := f.Store.DeleteVisitor(ctx, f.Tenant.ID, v); err != nil {
			t.Fatal(err)
		}
		_, err := f.Store.Conversation(ctx, f.Tenant.ID, c.ID)
		dbtest.WantKind(t, err, parley.KindNotFound)
		var n int
		if err := f.Store.Pool().QueryRow(ctx, `SELECT count(*) FROM messages WHERE conversation_id = $1`, c.ID).Scan(&n); err != nil || n != 0 {
			t.Errorf("%d messages left, %v", n, err)
		}
	})
}

// A message's tenant is its conversation's: the database refuses one filed
// under another tenant (migration 00031), and a tenant's deletion still
// takes its messages with its conversations.
func TestMessageTenantIsItsConversations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := dbtest.SetupConversations(t)
	c := f.Start(t, parley.ConversationStart{SessionID: "mine"})
	_, err := f.Store.Pool().Exec(ctx, `INSERT INTO messages (tenant_id, conversation_id, role, content) VALUES ($1, $2, 'user', 'x')`,
		f.Other.ID, c.ID)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "23503" || pgErr.ConstraintName != "messages_conversation_fkey" {
		t.Fatalf("a message of the conversation under another tenant: %v, want the foreign key's refusal", err)
	}
	if _, err := f.Store.Pool().Exec(ctx, `INSERT INTO messages (tenant_id, conversation_id, role, content) VALUES ($1, $2, 'user', 'x')`,
		f.Tenant.ID, c.ID); err != nil {
		t.Fatalf("a message under the conversation's own tenant: %v", err)
	}
	if _, err := f.Store.Pool().Exec(ctx, `DELETE FROM tenants WHERE id = $1`, f.Tenant.ID); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := f.Store.Pool().QueryRow(ctx, `SELECT count(*) FROM messages WHERE conversation_id = $1`, c.ID).Scan(&left); err != nil || left != 0 {
		t.Fatalf("messages left after the tenant's deletion: %d %v", left, err)
	}
}
