package public_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/web/webtest"
)

// runInstance registers the test server as an instance, as Run does, and
// removes it when the test ends.
func runInstance(t *testing.T, b *webtest.Bundle) {
	t.Helper()
	stop, err := b.Srv.StartInstance(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
}

// deadTurn leaves the session as a turn of another instance leaves it when
// its process is killed mid-answer: the lease held, busy_until minutes
// ahead, and the visitor's message stored without an answer. It returns the
// instance's id.
func deadTurn(t *testing.T, b *webtest.Bundle, tenantID, sessionID, message string) string {
	t.Helper()
	ctx := context.Background()
	x, err := b.DB.RegisterInstance(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	p := parley.ConversationStart{TenantID: tenantID, SessionID: sessionID, Limit: 1000}
	ok, st, err := b.DB.OpenTurn(ctx, p, message, "turn-of-x", x, 2*time.Minute, 19)
	if err != nil || !ok {
		t.Fatalf("the other instance's turn could not take the lease: %v %v", ok, err)
	}
	if st.Opened == nil {
		t.Fatal("the other instance's turn did not store its message with the lease")
	}
	return x
}

// sessionMessages is the session's stored messages, "role:content" in order.
func sessionMessages(t *testing.T, b *webtest.Bundle, tenantID, sessionID string) string {
	t.Helper()
	rows, err := b.DB.Pool().Query(t.Context(), `SELECT m.role || ':' || m.content FROM messages m
		JOIN conversations c ON c.id = m.conversation_id WHERE c.tenant_id = $1 AND c.session_id = $2 ORDER BY m.seq`, tenantID, sessionID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	return strings.Join(got, "|")
}

// The next message of a session whose turn died with its instance (kill -9
// mid-answer) is answered at once, not refused until the lease expires; the
// model is given the unanswered message before the new one, and the
// conversation goes on.
func TestChatSessionOfDeadInstance(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	runInstance(t, b)
	// Far less than the dead lease's two minutes: a lease still held
	// answers 409.
	b.Srv.Base.Engine.SessionWait = time.Second
	ten := b.NewTenant(t, "starter")
	path := "/chat/" + ten.Slug
	llm.Push(llmtest.Turn{Text: []string{"Hello."}})
	if r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "dead-1"}, webtest.AgentHeaders); r.Status != 200 {
		t.Fatalf("first message: %d %v", r.Status, r.Body)
	}
	x := deadTurn(t, b, ten.ID, "dead-1", "Are you there?")
	b.Exec(t, `UPDATE instances SET heartbeat_at = now() - interval '2 minutes' WHERE id = $1`, x)

	llm.Push(llmtest.Turn{Text: []string{"Yes, here."}}, llmtest.Turn{Text: []string{"You're welcome."}})
	r := b.Chat(t, path, map[string]any{"message": "Hello again", "sessionId": "dead-1"}, webtest.AgentHeaders)
	if r.Status != 200 || r.Body["message"] != "Yes, here." || r.Body["messageCount"] != float64(5) {
		t.Fatalf("message after the dead turn: %d %v", r.Status, r.Body)
	}
	reqs := llm.Requests()
	var sent []string
	for _, m := range reqs[len(reqs)-1].Chat.Messages {
		if m.Role != "system" {
			sent = append(sent, m.Role+":"+string(m.Content))
		}
	}
	if got, want := strings.Join(sent, "|"), "user:Hi|assistant:Hello.|user:Are you there?|user:Hello again"; got != want {
		t.Errorf("model given %q, want %q", got, want)
	}
	if r := b.Chat(t, path, map[string]any{"message": "Thanks", "sessionId": "dead-1"}, webtest.AgentHeaders); r.Status != 200 {
		t.Errorf("message after that: %d %v", r.Status, r.Body)
	}
	want := "user:Hi|assistant:Hello.|user:Are you there?|user:Hello again|assistant:Yes, here.|user:Thanks|assistant:You're welcome."
	if got := sessionMessages(t, b, ten.ID, "dead-1"); got != want {
		t.Errorf("stored %q, want %q", got, want)
	}
	if n := b.Count(t, `SELECT count(*) FROM session_leases WHERE tenant_id = $1`, ten.ID); n != 0 {
		t.Errorf("%d leases left behind", n)
	}
}

// A turn of a live instance (its heartbeat fresh) still holds its session:
// the next message waits, then gets 409 with nothing stored. Once that
// instance shuts down cleanly, the session is free.
func TestChatSessionOfLiveInstance(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	runInstance(t, b)
	b.Srv.Base.Engine.SessionWait = 300 * time.Millisecond
	ten := b.NewTenant(t, "starter")
	path := "/chat/" + ten.Slug
	x := deadTurn(t, b, ten.ID, "live-1", "Are you there?")

	r := b.Chat(t, path, map[string]any{"message": "Hello?", "sessionId": "live-1"}, webtest.AgentHeaders)
	if r.Status != 409 || r.Body["error"] != "Another message of this session is still being answered; retry shortly" {
		t.Fatalf("live holder: got %d %v", r.Status, r.Body)
	}
	if got := sessionMessages(t, b, ten.ID, "live-1"); got != "user:Are you there?" {
		t.Errorf("stored %q: a refused message was stored", got)
	}
	if n := b.Count(t, `SELECT count(*) FROM session_leases WHERE tenant_id = $1 AND holder = 'turn-of-x' AND instance_id = $2`, ten.ID, x); n != 1 {
		t.Error("the live holder's lease was touched")
	}

	if err := b.DB.RemoveInstance(t.Context(), x); err != nil {
		t.Fatal(err)
	}
	llm.Push(llmtest.Turn{Text: []string{"Yes."}})
	if r := b.Chat(t, path, map[string]any{"message": "Hello?", "sessionId": "live-1"}, webtest.AgentHeaders); r.Status != 200 || r.Body["message"] != "Yes." {
		t.Errorf("after the holder's instance shut down: %d %v", r.Status, r.Body)
	}
}
