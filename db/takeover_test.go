package db_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
)

func TestTakeover(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	user := func(t *testing.T, f *dbtest.ConvFixture, email string) *string {
		t.Helper()
		var id string
		if err := f.Store.Pool().QueryRow(ctx, `INSERT INTO users (email, password_hash) VALUES ($1, 'x') RETURNING id`, f.Tenant.ID+"."+email).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return &id
	}

	t.Run("two people take a conversation at once: one wins, the other is told who has it", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupConversations(t)
		c := f.Start(t, parley.ConversationStart{SessionID: "race"})
		people := []parley.Holder{{UserID: user(t, f, "ana@race.test"), Name: "Ana"}, {UserID: user(t, f, "bo@race.test"), Name: "Bo"}}
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i, h := range people {
			wg.Go(func() { _, errs[i] = f.Store.MoveConversation(ctx, f.Tenant.ID, c.ID, parley.StatusHuman, h) })
		}
		wg.Wait()
		winner, loser := 0, 1
		if errs[0] != nil {
			winner, loser = 1, 0
		}
		if errs[winner] != nil || parley.ErrorKind(errs[loser]) != parley.KindConflict ||
			!strings.Contains(errs[loser].Error(), "taken by "+people[winner].Name) {
			t.Fatalf("errors %v", errs)
		}
		got, _ := f.Store.Conversation(ctx, f.Tenant.ID, c.ID)
		if got.Status != parley.StatusHuman || got.Assignee == nil || *got.Assignee != people[winner].Name || got.TakenAt == nil ||
			*got.AssignedUserID != *people[winner].UserID {
			t.Fatalf("conversation %+v", got)
		}
		// Taking it again changes nothing; the holder's reply is stored with their name.
		mv, err := f.Store.MoveConversation(ctx, f.Tenant.ID, c.ID, parley.StatusHuman, people[winner])
		if err != nil || mv.From != parley.StatusHuman || !mv.Conversation.TakenAt.Equal(*got.TakenAt) {
			t.Fatalf("taking again: %+v, %v", mv, err)
		}
		_, _, err = f.Store.AddHumanMessage(ctx, f.Tenant.ID, c.ID, people[loser], "me too")
		dbtest.WantKind(t, err, parley.KindConflict)
		m, mv, err := f.Store.AddHumanMessage(ctx, f.Tenant.ID, c.ID, people[winner], "Hello, I am here")
		if err != nil || m.Role != parley.RoleHuman || m.AuthorName == nil || *m.AuthorName != people[winner].Name ||
			mv.Conversation.MessageCount != 2 {
			t.Fatalf("reply %+v, %+v, %v", m, mv, err)
		}
		// The assistant resumes with the conversation so far: the person's
		// reply reads as the assistant's side.
		turns, _ := f.Store.RecentTurns(ctx, f.Tenant.ID, c.ID, 5)
		if len(turns) != 2 || turns[1].Role != "assistant" || turns[1].Content != "Hello, I am here" {
			t.Errorf("turns %+v", turns)
		}
	})

	t.Run("a reply takes a conversation nobody holds; the moves clear the holder", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupConversations(t)
		c := f.Start(t, parley.ConversationStart{SessionID: "moves"})
		if err := f.Store.EscalateConversation(ctx, f.Tenant.ID, c.ID); err != nil {
			t.Fatal(err)
		}
		desk := parley.Holder{Name: "Desk agent"}
		_, mv, err := f.Store.AddHumanMessage(ctx, f.Tenant.ID, c.ID, desk, "Taking this")
		if err != nil || mv.From != parley.StatusEscalated || mv.Conversation.Status != parley.StatusHuman || *mv.Conversation.Assignee != "Desk agent" {
			t.Fatalf("%+v, %v", mv, err)
		}
		// An escalation while a person holds it changes nothing.
		if err := f.Store.EscalateConversation(ctx, f.Tenant.ID, c.ID); err != nil {
			t.Fatal(err)
		}
		// Another named person is someone else.
		_, err = f.Store.MoveConversation(ctx, f.Tenant.ID, c.ID, parley.StatusHuman, parley.Holder{Name: "Other agent"})
		dbtest.WantKind(t, err, parley.KindConflict)
		for _, to := range []string{parley.StatusClosed, parley.StatusBot, parley.StatusEscalated} {
			mv, err := f.Store.MoveConversation(ctx, f.Tenant.ID, c.ID, to, parley.Holder{})
			if err != nil || mv.Conversation.Status != to || mv.Conversation.Assignee != nil || mv.Conversation.TakenAt != nil {
				t.Fatalf("to %s: %+v, %v", to, mv, err)
			}
		}
		_, err = f.Store.MoveConversation(ctx, f.Tenant.ID, c.ID, "OPEN", parley.Holder{})
		dbtest.WantKind(t, err, parley.KindInvalid)
	})

	t.Run("another tenant's conversation is not found and not changed", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupConversations(t)
		c := f.Start(t, parley.ConversationStart{SessionID: "iso"})
		_, err := f.Store.MoveConversation(ctx, f.Other.ID, c.ID, parley.StatusHuman, parley.Holder{Name: "X"})
		dbtest.WantKind(t, err, parley.KindNotFound)
		_, _, err = f.Store.AddHumanMessage(ctx, f.Other.ID, c.ID, parley.Holder{Name: "X"}, "hi")
		dbtest.WantKind(t, err, parley.KindNotFound)
		_, err = f.Store.MoveConversation(ctx, f.Tenant.ID, "not-a-uuid", parley.StatusBot, parley.Holder{})
		dbtest.WantKind(t, err, parley.KindNotFound)
		if got, _ := f.Store.Conversation(ctx, f.Tenant.ID, c.ID); got.Status != parley.StatusBot || got.MessageCount != 1 {
			t.Errorf("conversation %+v", got)
		}
	})

	t.Run("a person's message and a move are announced when they commit", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupConversations(t)
		c := f.Start(t, parley.ConversationStart{SessionID: "notify"})
		conn, err := f.Store.Pool().Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Release()
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{db.ConversationChannel}.Sanitize()); err != nil {
			t.Fatal(err)
		}
		if _, _, err := f.Store.AddHumanMessage(ctx, f.Tenant.ID, c.ID, parley.Holder{Name: "Desk"}, "hi"); err != nil {
			t.Fatal(err)
		}
		// Other tests' conversations are announced on the channel too.
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		for {
			n, err := conn.Conn().WaitForNotification(wctx)
			if err != nil {
				t.Fatalf("no notification of the conversation: %v", err)
			}
			if n.Payload == f.Tenant.ID+":"+c.ID {
				break
			}
		}
	})
}
