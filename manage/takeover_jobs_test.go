package manage_test

import (
	"context"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/manage"
)

// A move to ESCALATED schedules the end of its wait, a take (by a move or
// by a reply) the check of the person's silence, once per take (issue 36).
func TestTakeoverSchedulesItsCheck(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := dbtest.SetupConversations(t)
	s := &manage.Service{DB: f.Store}
	jobs := func(t *testing.T, conversationID string) map[string]int {
		t.Helper()
		rows, err := f.Store.Pool().Query(ctx, `SELECT kind, count(*) FROM river_job WHERE args->>'conversationId' = $1 GROUP BY kind`, conversationID)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]int{}
		for rows.Next() {
			var (
				kind string
				n    int
			)
			if err := rows.Scan(&kind, &n); err != nil {
				t.Fatal(err)
			}
			out[kind] = n
		}
		return out
	}

	c := f.Start(t, parley.ConversationStart{SessionID: "queue"})
	if _, err := s.MoveConversation(ctx, f.Tenant.ID, c.ID, manage.ConversationStateInput{Status: parley.StatusEscalated}, nil); err != nil {
		t.Fatal(err)
	}
	if got := jobs(t, c.ID); got["takeover_wait"] != 1 || got["takeover_idle"] != 0 {
		t.Fatalf("after the escalation: %v", got)
	}
	for _, text := range []string{"Hello, I am Ana", "How can I help?"} {
		if _, _, err := s.ReplyAsPerson(ctx, f.Tenant.ID, c.ID, manage.PersonReplyInput{Content: text, AuthorName: "Ana"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := jobs(t, c.ID); got["takeover_idle"] != 1 {
		t.Fatalf("after the replies: %v", got)
	}

	// Handing back schedules nothing; taking it again is a new take.
	c2 := f.Start(t, parley.ConversationStart{SessionID: "taken"})
	for _, st := range []string{parley.StatusHuman, parley.StatusBot, parley.StatusHuman} {
		if _, err := s.MoveConversation(ctx, f.Tenant.ID, c2.ID, manage.ConversationStateInput{Status: st, Assignee: "Bo"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := jobs(t, c2.ID); got["takeover_idle"] != 2 || got["takeover_wait"] != 0 {
		t.Fatalf("after two takes: %v", got)
	}
}
