package db_test

import (
	"context"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/db/dbtest"
)

// TestInbox: the inbox's top section lists the tenant's conversations
// waiting for a person, then those held, with the visitor's messages
// nobody answered; its version moves with every change and stays put
// otherwise.
func TestInbox(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := dbtest.SetupConversations(t)
	say := func(c parley.Conversation, msg string) {
		t.Helper()
		if _, _, _, err := f.Store.StartTurn(ctx, parley.ConversationStart{TenantID: c.TenantID, SessionID: c.SessionID, Limit: 1000}, msg, &c); err != nil {
			t.Fatal(err)
		}
	}
	answer := func(c parley.Conversation, reply string) {
		t.Helper()
		if _, err := f.Store.SaveTurn(ctx, parley.TurnRecord{TenantID: c.TenantID, ConversationID: c.ID, SessionID: c.SessionID, Reply: reply}); err != nil {
			t.Fatal(err)
		}
	}
	move := func(c parley.Conversation, to string, h parley.Holder) {
		t.Helper()
		if _, err := f.Store.MoveConversation(ctx, c.TenantID, c.ID, to, h); err != nil {
			t.Fatal(err)
		}
	}
	empty, err := f.Store.InboxVersion(ctx, f.Tenant.ID)
	if err != nil || empty.Waiting+empty.Held != 0 || !empty.LatestEscalation.IsZero() {
		t.Fatalf("empty inbox: %+v %v", empty, err)
	}

	bot := f.Start(t, parley.ConversationStart{SessionID: "inbox-bot"}) // the assistant's: not listed
	answer(bot, "Hi!")
	waiting := f.Start(t, parley.ConversationStart{SessionID: "inbox-waiting"})
	answer(waiting, "Let me find someone.")
	move(waiting, parley.StatusEscalated, parley.Holder{})
	say(waiting, "Anyone?")
	say(waiting, "Hello??")
	held := f.Start(t, parley.ConversationStart{SessionID: "inbox-held"})
	move(held, parley.StatusHuman, parley.Holder{Name: "Ana"})
	theirs := f.Start(t, parley.ConversationStart{TenantID: f.Other.ID, SessionID: "inbox-theirs"})
	move(theirs, parley.StatusEscalated, parley.Holder{})

	items, err := f.Store.InboxAttention(ctx, f.Tenant.ID)
	if err != nil || len(items) != 2 {
		t.Fatalf("%d listed, %v", len(items), err)
	}
	if w := items[0]; w.ID != waiting.ID || w.Unanswered != 2 || deref(w.LastMessage) != "Hello??" {
		t.Errorf("first %s: %d unanswered, last %q", w.Status, w.Unanswered, deref(w.LastMessage))
	}
	// nobody wrote after the visitor's first message: it is unanswered
	if h := items[1]; h.ID != held.ID || h.Unanswered != 1 || deref(h.Assignee) != "Ana" {
		t.Errorf("second %s: %d unanswered, held by %q", h.Status, h.Unanswered, deref(h.Assignee))
	}
	v, err := f.Store.InboxVersion(ctx, f.Tenant.ID)
	if err != nil || v.Waiting != 1 || v.Held != 1 || v.LatestEscalation.IsZero() {
		t.Fatalf("version %+v %v", v, err)
	}
	if again, _ := f.Store.InboxVersion(ctx, f.Tenant.ID); again.Key() != v.Key() {
		t.Errorf("nothing changed, yet %s became %s", v.Key(), again.Key())
	}

	// a person's reply answers the visitor; the version moves
	if _, _, err := f.Store.AddHumanMessage(ctx, f.Tenant.ID, held.ID, parley.Holder{Name: "Ana"}, "Hello, Ana here"); err != nil {
		t.Fatal(err)
	}
	items, _ = f.Store.InboxAttention(ctx, f.Tenant.ID)
	if items[1].Unanswered != 0 {
		t.Errorf("after the reply: %d unanswered", items[1].Unanswered)
	}
	replied, _ := f.Store.InboxVersion(ctx, f.Tenant.ID)
	if replied.Key() == v.Key() {
		t.Error("a reply left the version as it was")
	}
	// one leaves the section: the counts move
	move(waiting, parley.StatusClosed, parley.Holder{})
	closed, _ := f.Store.InboxVersion(ctx, f.Tenant.ID)
	if closed.Waiting != 0 || closed.Held != 1 || closed.Key() == replied.Key() || !closed.LatestEscalation.IsZero() {
		t.Errorf("after closing: %+v", closed)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
