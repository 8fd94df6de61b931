package db_test

import (
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/rank"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/db/gaps"
	"github.com/parley/parley/db/knowledge"
)

// The knowledge gaps: each sign of a turn (no match and "not known" stored
// with the answer, a person asked for in the next turn, a down vote) puts
// its question in a group of its wording; answers without a sign, test
// conversations and another tenant's conversations stay out; the filters
// and the states keep what they say.
func TestKnowledgeGaps(t *testing.T) {
	t.Parallel()
	f := dbtest.SetupConversations(t)
	ctx := t.Context()
	store := f.Store
	n := 0
	// ask starts a conversation of tenant with question, answered with signals.
	ask := func(tenantID, question string, signals int, p parley.ConversationStart) (parley.Conversation, parley.Message) {
		t.Helper()
		n++
		p.TenantID, p.SessionID, p.Limit = tenantID, "gap-session-"+string(rune('a'+n)), 1000
		c, _, _, err := store.StartTurn(ctx, p, question, nil)
		if err != nil {
			t.Fatal(err)
		}
		m, err := store.SaveTurn(ctx, parley.TurnRecord{TenantID: tenantID, ConversationID: c.ID, Reply: "An answer.",
			GapSignals: signals, QuestionKey: rank.QuestionKey(question)})
		if err != nil {
			t.Fatal(err)
		}
		return c, m
	}
	ask(f.Tenant.ID, "What are your opening hours?", parley.GapNoMatch, parley.ConversationStart{})
	ask(f.Tenant.ID, "opening hours??", parley.GapNotKnown, parley.ConversationStart{Channel: parley.ChannelVoice})
	ask(f.Tenant.ID, "Hours, opening?", 0, parley.ConversationStart{}) // answered well: no sign
	_, voted := ask(f.Tenant.ID, "Do you ship to Canada?", 0, parley.ConversationStart{})
	if err := store.RecordFeedback(ctx, f.Tenant.ID, voted.ID, -1); err != nil {
		t.Fatal(err)
	}
	// A person asked for right after an answer: that answer is marked.
	c, _ := ask(f.Tenant.ID, "Can I pay by cheque?", 0, parley.ConversationStart{})
	if _, err := db.AppendMessage(ctx, store.Pool(), f.Tenant.ID, c.ID, "user", "I want a person", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := store.SaveTurn(ctx, parley.TurnRecord{TenantID: f.Tenant.ID, ConversationID: c.ID, Reply: "Someone will take over.",
		Escalated: true, QuestionKey: rank.QuestionKey("I want a person")}); err != nil {
		t.Fatal(err)
	}
	// Tests and another tenant's conversations never show.
	ask(f.Tenant.ID, "What are your opening hours?", parley.GapNoMatch, parley.ConversationStart{Test: true})
	ask(f.Other.ID, "What are your opening hours?", parley.GapNoMatch, parley.ConversationStart{})
	ask(f.Other.ID, "secret other question", parley.GapNoMatch, parley.ConversationStart{})

	now := time.Now()
	all := gaps.Query{From: now.Add(-time.Hour), To: now.Add(time.Hour), State: gaps.StateAll, Page: 1, Limit: 20}
	page, err := store.ListGaps(ctx, f.Tenant.ID, all)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]gaps.Group{}
	for _, g := range page.Groups {
		got[g.Key] = g
	}
	if page.Total != 3 || len(page.Groups) != 3 {
		t.Fatalf("groups %+v (total %d), want 3: hours, ship canada, pay cheque", page.Groups, page.Total)
	}
	hours := page.Groups[0]
	if hours.Key != "hour opening" || hours.Count != 2 || hours.Signals != parley.GapNoMatch|parley.GapNotKnown ||
		hours.Question != "opening hours??" || len(hours.Examples) != 2 || hours.State != gaps.StateOpen {
		t.Errorf("the most asked group %+v, want hour opening, twice, no match and not known, the latest question first", hours)
	}
	if g := got["canada ship"]; g.Signals != gaps.SignVotedDown || g.Question != "Do you ship to Canada?" {
		t.Errorf("the voted down group %+v", g)
	}
	if g := got["cheque pay"]; g.Signals != parley.GapPersonAsked || g.Examples[0].ConversationID != c.ID {
		t.Errorf("the group before an escalation %+v", g)
	}
	if _, ok := got["person want"]; ok {
		t.Error("the escalation's own question is listed")
	}
	// Filters: the channel, the window.
	voice := all
	voice.Channel = parley.ChannelVoice
	if p, _ := store.ListGaps(ctx, f.Tenant.ID, voice); len(p.Groups) != 1 || p.Groups[0].Count != 1 {
		t.Errorf("voice only: %+v", p.Groups)
	}
	past := all
	past.From, past.To = now.Add(-48*time.Hour), now.Add(-24*time.Hour)
	if p, _ := store.ListGaps(ctx, f.Tenant.ID, past); len(p.Groups) != 0 {
		t.Errorf("yesterday: %+v", p.Groups)
	}
	// Pages.
	one := all
	one.Limit, one.Page = 1, 2
	if p, _ := store.ListGaps(ctx, f.Tenant.ID, one); len(p.Groups) != 1 || p.Total != 3 || p.Groups[0].Key == hours.Key {
		t.Errorf("page 2 of 1: %+v, total %d", p.Groups, p.Total)
	}

	// States: answered by an entry, dismissed; open lists neither.
	entry, _, err := store.UpsertCorpus(ctx, f.Tenant.ID, 100, knowledge.CorpusWrite{Title: parley.Some("Opening hours"), Content: parley.Some("9 to 5.")})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.SetGapState(ctx, f.Tenant.ID, "hour opening", gaps.StateAnswered, entry.ID); err != nil {
		t.Fatal(err)
	}
	if err := store.SetGapState(ctx, f.Tenant.ID, "canada ship", gaps.StateDismissed, ""); err != nil {
		t.Fatal(err)
	}
	open := all
	open.State = gaps.StateOpen
	if p, _ := store.ListGaps(ctx, f.Tenant.ID, open); len(p.Groups) != 1 || p.Groups[0].Key != "cheque pay" {
		t.Errorf("open: %+v", p.Groups)
	}
	answered := all
	answered.State = gaps.StateAnswered
	if p, _ := store.ListGaps(ctx, f.Tenant.ID, answered); len(p.Groups) != 1 || p.Groups[0].EntryID != entry.ID {
		t.Errorf("answered: %+v", p.Groups)
	}
	// Another tenant's group, an unknown one, a test's: not found.
	for _, key := range []string{"other question secret", "nothing like it"} {
		if err := store.SetGapState(ctx, f.Tenant.ID, key, gaps.StateDismissed, ""); parley.ErrorKind(err) != parley.KindNotFound {
			t.Errorf("%q: %v, want not found", key, err)
		}
	}
	if err := store.SetGapState(ctx, f.Other.ID, "hour opening", gaps.StateAnswered, entry.ID); parley.ErrorKind(err) != parley.KindNotFound {
		t.Errorf("the other tenant answered its group with this tenant's entry: %v", err)
	}
	if p, _ := store.ListGaps(ctx, f.Other.ID, all); len(p.Groups) != 2 || p.Groups[0].State != gaps.StateOpen {
		t.Errorf("the other tenant's groups %+v: its states are its own", p.Groups)
	}
	// Open again.
	if err := store.SetGapState(ctx, f.Tenant.ID, "hour opening", gaps.StateOpen, ""); err != nil {
		t.Fatal(err)
	}
	if p, _ := store.ListGaps(ctx, f.Tenant.ID, open); len(p.Groups) != 2 {
		t.Errorf("reopened: %+v", p.Groups)
	}
}
