package knowledge_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/db/knowledge"
)

// BenchmarkCorrectAnswer times "Improve this answer" on a tenant of 50,000
// entries (seedCorpus): reading the form (the question and the entry made
// from it), a correction that creates the entry, and one that updates it.
// BENCHMARKS.md has the figures.
func BenchmarkCorrectAnswer(b *testing.B) {
	store := dbtest.New(b)
	seedCorpus(b, store)
	ctx := context.Background()
	var conv string
	if err := store.Pool().QueryRow(ctx, `INSERT INTO conversations (tenant_id, session_id) VALUES ($1, $2) RETURNING id`,
		benchTenant, fmt.Sprintf("bench-fix-%d", b.N)).Scan(&conv); err != nil {
		b.Fatal(err)
	}
	// answers inserts n questions, each with its answer, and returns the answers' ids.
	answers := func(n int) []string {
		ids := make([]string, 0, n)
		rows, err := store.Pool().Query(ctx, `INSERT INTO messages (tenant_id, conversation_id, role, content)
			SELECT $1, $2, r.role, CASE r.role WHEN 'user' THEN 'Question number ' || g || ' ' || md5(random()::text) || '?' ELSE 'An answer' END
			FROM generate_series(1, $3) g, (VALUES (1, 'user'), (2, 'assistant')) r(n, role) ORDER BY g, r.n
			RETURNING id, role`, benchTenant, conv, n)
		if err != nil {
			b.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var id, role string
			if err := rows.Scan(&id, &role); err != nil {
				b.Fatal(err)
			}
			if role == "assistant" {
				ids = append(ids, id)
			}
		}
		return ids
	}
	fix := func(id, content string) knowledge.Corrected {
		r, err := store.CorrectAnswer(ctx, benchTenant, 1_000_000, knowledge.Correction{ConversationID: conv, MessageID: id, Content: content})
		if err != nil {
			b.Fatal(err)
		}
		return r
	}
	last := answers(1)[0]
	fix(last, "The first answer.")
	b.Run("ReadForm", func(b *testing.B) {
		for b.Loop() {
			if _, err := store.AnsweredQuestion(ctx, benchTenant, conv, last); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Update", func(b *testing.B) {
		n := 0
		for b.Loop() {
			n++
			if r := fix(last, fmt.Sprintf("The answer, version %d.", n)); r.Created {
				b.Fatal("an update created an entry")
			}
		}
	})
	b.Run("Create", func(b *testing.B) {
		ids := answers(b.N)
		b.ResetTimer()
		for i := range b.N {
			if r := fix(ids[i], "A new answer."); !r.Created {
				b.Fatal("a new question updated an entry")
			}
		}
	})
}
