package db_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
)

// The end of an escalation's wait and a person taking the conversation at
// the same moment: whichever locks the row first wins, and the other sees
// what it left. The person ends up holding the conversation either way.
func TestWaitEndsAsAPersonTakes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := dbtest.SetupConversations(t)
	for range 5 {
		c := f.Start(t, parley.ConversationStart{SessionID: "race-" + time.Now().Format(time.RFC3339Nano)})
		mv, err := f.Store.MoveConversation(ctx, f.Tenant.ID, c.ID, parley.StatusEscalated, parley.Holder{})
		if err != nil {
			t.Fatal(err)
		}
		args := db.TakeoverWaitArgs{TenantID: f.Tenant.ID, ConversationID: c.ID, EscalatedAt: *mv.Conversation.EscalatedAt}
		var (
			wg     sync.WaitGroup
			chk    db.TakeoverCheck
			take   parley.ConversationMove
			e1, e2 error
		)
		wg.Go(func() {
			chk, e1 = f.Store.ReturnUnansweredEscalation(ctx, args, args.EscalatedAt.Add(time.Hour), "Nobody could join.", false)
		})
		wg.Go(func() {
			take, e2 = f.Store.MoveConversation(ctx, f.Tenant.ID, c.ID, parley.StatusHuman, parley.Holder{Name: "Ana"})
		})
		wg.Wait()
		if e1 != nil || e2 != nil {
			t.Fatal(e1, e2)
		}
		got, err := f.Store.Conversation(ctx, f.Tenant.ID, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != parley.StatusHuman || got.Assignee == nil || *got.Assignee != "Ana" {
			t.Fatalf("conversation %s held by %v", got.Status, got.Assignee)
		}
		// Either the job came first (the visitor was told, then Ana took it
		// from the assistant) or Ana did (the job found her there).
		if chk.Returned != (take.From == parley.StatusBot) || (chk.Returned && got.MessageCount != 2) || (!chk.Returned && got.MessageCount != 1) {
			t.Fatalf("job returned %v, take from %s, %d messages", chk.Returned, take.From, got.MessageCount)
		}
	}
}
