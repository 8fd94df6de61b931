package knowledge_test

import (
	"context"
	"sync"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/db/knowledge"
)

// Corrections in the database: the question an answer replied to, what is
// not an answer, tenant isolation, one entry per question (also under
// concurrent corrections), the plan's limit for new entries only, and the
// links' fate when the conversation or the entry is deleted.
func TestCorrections(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.New(t)
	ten, other := dbtest.NewTenant(t, store), dbtest.NewTenant(t, store)
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := store.Pool().Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	conversation := func(tenantID, session string) string {
		t.Helper()
		var id string
		if err := store.Pool().QueryRow(ctx, `INSERT INTO conversations (tenant_id, session_id) VALUES ($1, $2) RETURNING id`,
			tenantID, session).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	message := func(tenantID, convID, role, content string) string {
		t.Helper()
		var id string
		if err := store.Pool().QueryRow(ctx, `INSERT INTO messages (tenant_id, conversation_id, role, content) VALUES ($1, $2, $3, $4) RETURNING id`,
			tenantID, convID, role, content).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	conv := conversation(ten.ID, "fix-db-1")
	greeting := message(ten.ID, conv, "assistant", "Hello! How can I help?")
	q1 := message(ten.ID, conv, "user", "Do you deliver to Lyon?")
	a1 := message(ten.ID, conv, "assistant", "I am not sure.")
	person := message(ten.ID, conv, "human", "Let me check.")
	message(ten.ID, conv, "user", "  do you   deliver to lyon ")
	a2 := message(ten.ID, conv, "assistant", "Still not sure.")
	message(ten.ID, conv, "user", "And on Sundays?")
	a3 := message(ten.ID, conv, "assistant", "No.")
	otherConv := conversation(ten.ID, "fix-db-2")

	q, err := store.AnsweredQuestion(ctx, ten.ID, conv, a1)
	if err != nil || q.MessageID != q1 || q.Text != "Do you deliver to Lyon?" || q.Answer != "I am not sure." || q.EntryID != "" {
		t.Fatalf("the question of the first answer: %+v, %v", q, err)
	}
	fix := func(tenantID, convID, msgID, content string) (knowledge.Corrected, error) {
		return store.CorrectAnswer(ctx, tenantID, 1000, knowledge.Correction{ConversationID: convID, MessageID: msgID, Content: content})
	}
	for name, c := range map[string]struct {
		tenant, conv, msg string
		kind              parley.Kind
	}{
		"a visitor's message":     {ten.ID, conv, q1, parley.KindInvalid},
		"a person's reply":        {ten.ID, conv, person, parley.KindInvalid},
		"an answer to nothing":    {ten.ID, conv, greeting, parley.KindInvalid},
		"another tenant":          {other.ID, conv, a1, parley.KindNotFound},
		"another conversation":    {ten.ID, otherConv, a1, parley.KindNotFound},
		"a conversation not uuid": {ten.ID, "nope", a1, parley.KindNotFound},
		"a message not uuid":      {ten.ID, conv, "nope", parley.KindNotFound},
	} {
		_, err := fix(c.tenant, c.conv, c.msg, "ok")
		if parley.ErrorKind(err) != c.kind {
			t.Errorf("%s: %v, want kind %v", name, err, c.kind)
		}
	}

	got, err := fix(ten.ID, conv, a1, "We deliver to Lyon on Thursdays.")
	if err != nil || !got.Created || got.Entry.Title != "Do you deliver to Lyon?" || got.Entry.Priority != knowledge.DefaultCorpusPriority ||
		got.Entry.Source == nil || *got.Entry.Source != knowledge.CorrectionSource || got.Question != "Do you deliver to Lyon?" {
		t.Fatalf("the first correction: %+v, %v", got, err)
	}
	// The same words asked again (case, spaces): the same entry, updated.
	again, err := fix(ten.ID, conv, a2, "We deliver to Lyon on Thursdays and Fridays.")
	if err != nil || again.Created || again.Entry.ID != got.Entry.ID || again.Entry.Content != "We deliver to Lyon on Thursdays and Fridays." {
		t.Fatalf("the same question again: %+v, %v", again, err)
	}
	// An entry the owner turned off is turned on by a correction.
	exec(`UPDATE corpus_entries SET is_active = false WHERE id = $1`, got.Entry.ID)
	if e, err := fix(ten.ID, conv, a1, "Thursdays."); err != nil || !e.Entry.IsActive {
		t.Errorf("correcting a turned-off entry: %+v, %v", e.Entry, err)
	}

	// The plan's limit holds new entries back, not updates.
	var n int
	if err := store.Pool().QueryRow(ctx, `SELECT count(*) FROM corpus_entries WHERE tenant_id = $1`, ten.ID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if _, err := store.CorrectAnswer(ctx, ten.ID, n, knowledge.Correction{ConversationID: conv, MessageID: a3, Content: "Closed."}); parley.ErrorKind(err) != parley.KindRateLimited {
		t.Errorf("a new entry at the limit: %v", err)
	}
	if _, err := store.CorrectAnswer(ctx, ten.ID, n, knowledge.Correction{ConversationID: conv, MessageID: a1, Content: "Thursdays."}); err != nil {
		t.Errorf("an update at the limit: %v", err)
	}

	// Two corrections of one new question at once: one entry.
	var wg sync.WaitGroup
	results := make([]knowledge.Corrected, 4)
	for i := range results {
		wg.Go(func() {
			r, err := fix(ten.ID, conv, a3, "We are closed on Sundays.")
			if err != nil {
				t.Errorf("concurrent correction: %v", err)
			}
			results[i] = r
		})
	}
	wg.Wait()
	created := 0
	for _, r := range results {
		if r.Created {
			created++
		}
		if r.Entry.ID != results[0].Entry.ID {
			t.Errorf("concurrent corrections made entries %s and %s", r.Entry.ID, results[0].Entry.ID)
		}
	}
	if created != 1 {
		t.Errorf("%d of the concurrent corrections created an entry, want 1", created)
	}

	// The conversation deleted: the entry and its question stay, unlinked.
	exec(`DELETE FROM conversations WHERE id = $1`, conv)
	var question string
	var linked bool
	if err := store.Pool().QueryRow(ctx, `SELECT question, question_message_id IS NOT NULL OR answer_message_id IS NOT NULL OR conversation_id IS NOT NULL
		FROM corrections WHERE entry_id = $1`, got.Entry.ID).Scan(&question, &linked); err != nil || linked || question != "Do you deliver to Lyon?" {
		t.Errorf("after deleting the conversation: %q linked %v, %v", question, linked, err)
	}
	if _, err := store.CorpusEntry(ctx, ten.ID, got.Entry.ID); err != nil {
		t.Errorf("the entry after deleting the conversation: %v", err)
	}
	// The entry deleted: its link goes with it.
	if err := store.DeleteCorpus(ctx, ten.ID, got.Entry.ID); err != nil {
		t.Fatal(err)
	}
	if err := store.Pool().QueryRow(ctx, `SELECT count(*) FROM corrections WHERE entry_id = $1`, got.Entry.ID).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d links left after deleting the entry, %v", n, err)
	}
}

func TestQuestionKey(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Do you deliver to Lyon?":      "do you deliver to lyon",
		"  do you   deliver to lyon  ": "do you deliver to lyon",
		"DO YOU DELIVER TO LYON ?!":    "do you deliver to lyon",
		"Do you deliver\nto Lyon.":     "do you deliver to lyon",
		"Do you deliver to Lyon-Est?":  "do you deliver to lyon-est",
		"?!":                           "",
	} {
		if got := knowledge.QuestionKey(in); got != want {
			t.Errorf("QuestionKey(%q) = %q, want %q", in, got, want)
		}
	}
	if got := knowledge.QuestionTitle("Where\n  is   my order?"); got != "Where is my order?" {
		t.Errorf("QuestionTitle: %q", got)
	}
}
