package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/db/listing"
)

func TestSeedConversations(t *testing.T) {
	store := cliEnv(t)
	ctx := context.Background()
	slug := uniqueSlug("seed")
	p := createTenant(t, "--slug", slug, "--name", "Seed Co", "--plan", "scale")

	out, errOut, err := runCLI(t, "seed-conversations", "--tenant", slug, "--conversations", "2500", "--messages-per", "6", "--days", "60")
	if err != nil {
		t.Fatalf("seed-conversations: %v\n%s", err, errOut)
	}
	if !strings.Contains(errOut, "2500/2500 conversations") {
		t.Errorf("progress %q", errOut)
	}
	var printed struct{ Conversations, Messages int }
	if err := json.Unmarshal([]byte(out), &printed); err != nil || printed.Conversations != 2500 {
		t.Fatalf("printed %q: %v", out, err)
	}

	conn, err := pgx.Connect(ctx, dbtest.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// Each check counts the conversations that break an invariant.
	checks := map[string]string{
		"message_count": `SELECT count(*) FROM conversations c WHERE tenant_id = $1 AND message_count <>
			(SELECT count(*) FROM messages m WHERE m.conversation_id = c.id)`,
		"tool_calls_count": `SELECT count(*) FROM conversations c WHERE tenant_id = $1 AND tool_calls_count <>
			(SELECT count(*) FROM tool_history th WHERE th.conversation_id = c.id)`,
		"feedback": `SELECT count(*) FROM conversations c WHERE tenant_id = $1 AND (feedback_positive, feedback_negative) <>
			(SELECT count(*) FILTER (WHERE feedback = 1), count(*) FILTER (WHERE feedback = -1) FROM messages m WHERE m.conversation_id = c.id)`,
		"first message": `SELECT count(*) FROM conversations c WHERE tenant_id = $1 AND first_user_message IS DISTINCT FROM
			(SELECT content FROM messages m WHERE m.conversation_id = c.id ORDER BY seq LIMIT 1)`,
		"last_message_at": `SELECT count(*) FROM conversations c WHERE tenant_id = $1 AND last_message_at <>
			(SELECT max(created_at) FROM messages m WHERE m.conversation_id = c.id)`,
		// the resolution's marks (migration 00058), which the seeding sets
		// after its COPY now that no trigger does
		"answered": `SELECT count(*) FROM conversations c WHERE tenant_id = $1 AND answered <>
			EXISTS (SELECT 1 FROM messages m WHERE m.conversation_id = c.id AND m.role = 'assistant')`,
		"votes on visitors' messages": `SELECT count(*) FROM messages WHERE tenant_id = $1 AND role = 'user' AND feedback IS NOT NULL`,
		"usage": `SELECT count(*) FROM (SELECT date_trunc('month', created_at AT TIME ZONE 'UTC')::date AS month, count(*) AS n
			FROM conversations WHERE tenant_id = $1 GROUP BY 1) c FULL JOIN (SELECT month, count FROM conversation_usage WHERE tenant_id = $1) u
			USING (month) WHERE c.n IS DISTINCT FROM u.count`,
		"submissions without a tool run": `SELECT count(*) FROM submissions s WHERE tenant_id = $1 AND NOT EXISTS
			(SELECT 1 FROM tool_history th WHERE th.conversation_id = s.conversation_id AND th.tool_type = s.tool_type)`,
	}
	for name, q := range checks {
		var n int
		if err := conn.QueryRow(ctx, q, p.ID).Scan(&n); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if n != 0 {
			t.Errorf("%s: %d conversations break it", name, n)
		}
	}

	// Varied: every channel and status, tools, votes, submissions, and
	// messages spread over the window.
	var channels, statuses, withTools, votes, subs, messages int
	var oldest time.Time
	if err := conn.QueryRow(ctx, `SELECT count(DISTINCT channel), count(DISTINCT status), count(*) FILTER (WHERE tool_calls_count > 0),
			sum(feedback_positive + feedback_negative), (SELECT count(*) FROM submissions WHERE tenant_id = $1),
			sum(message_count), min(created_at)
		FROM conversations WHERE tenant_id = $1`, p.ID).Scan(&channels, &statuses, &withTools, &votes, &subs, &messages, &oldest); err != nil {
		t.Fatal(err)
	}
	if channels != 4 || statuses != 2 || withTools < 500 || votes < 200 || subs < 100 {
		t.Errorf("channels %d, statuses %d, with tools %d, votes %d, submissions %d", channels, statuses, withTools, votes, subs)
	}
	if messages != printed.Messages || messages < 2500*5 || messages > 2500*7 {
		t.Errorf("%d messages (printed %d), want about 15,000", messages, printed.Messages)
	}
	if age := time.Since(oldest); age < 50*24*time.Hour || age > 60*24*time.Hour {
		t.Errorf("oldest conversation %v ago, want close to 60 days", age)
	}

	// The question variations group into the templates' intents.
	now := time.Now()
	st, err := store.ConversationStats(ctx, p.ID, listing.StatsQuery{Filter: listing.ConversationFilter{From: now.AddDate(0, 0, -61), To: now.Add(time.Hour)},
		Granularity: "month", Location: "UTC"})
	if err != nil {
		t.Fatal(err)
	}
	if st.Totals.Conversations != 2500 || len(st.TopIntents) != 10 || st.TopIntents[0].Count < 2500/25/2 {
		t.Errorf("totals %+v, top intents %+v", st.Totals, st.TopIntents)
	}
}
