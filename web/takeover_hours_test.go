package web_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/web/webtest"
)

// Nobody there (issue 36), through the chat: asking for a person outside
// the tenant's hours escalates nothing (the visitor is told and offered
// the lead form, nobody is left waiting); in the hours the conversation
// waits and the end of its wait is scheduled.
func TestChatEscalationOutsideHours(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	var (
		mu  sync.Mutex
		now = time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC) // a Sunday
	)
	b.Srv.Base.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	ten := b.NewTenant(t, "starter")
	for _, body := range []map[string]any{
		{"timezone": "Europe/Paris", "humanHours": map[string]any{"mode": "weekly", "days": map[string]any{
			"monday": map[string]any{"start": "09:00", "end": "18:00"}}}},
	} {
		if st, resp := b.Do(t, "PUT", "/tenants/"+ten.Slug, ten.Token, body); st != 200 {
			t.Fatalf("settings: %d %v", st, resp)
		}
	}
	for _, tool := range []map[string]any{
		{"name": "Human", "description": "Hand over to the team", "type": "ESCALATE_TO_HUMAN"},
		{"name": "Contact", "description": "Take the visitor's details", "type": "SUBMIT_FORM", "config": map[string]any{
			"fields": []map[string]any{{"name": "name", "label": "Name", "type": "text"}, {"name": "email", "label": "Email", "type": "email", "required": true}}}},
	} {
		if st, resp := b.Do(t, "POST", "/tenants/"+ten.Slug+"/tools", ten.Token, tool); st != 201 {
			t.Fatalf("tool: %d %v", st, resp)
		}
	}
	state := func(t *testing.T, id any) (status string, waits int) {
		t.Helper()
		err := b.DB.Pool().QueryRow(context.Background(), `SELECT c.status,
				(SELECT count(*) FROM river_job j WHERE j.kind = 'takeover_wait' AND j.args->>'conversationId' = c.id::text)
			FROM conversations c WHERE c.id = $1`, id).Scan(&status, &waits)
		if err != nil {
			t.Fatal(err)
		}
		return status, waits
	}
	escalate := llmtest.Turn{ToolCalls: []llmtest.ToolCall{webtest.Call("h1", "human", `{"reason":"wants a person"}`)}}

	calls := len(llm.Requests())
	llm.Push(escalate)
	r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "Can I talk to someone?", "sessionId": "sunday", "stream": false}, nil)
	want := "Nobody from the team is available right now. Leave your details here (Name, Email) and someone will write back to you by email."
	if r.Status != 200 || r.Body["message"] != want || r.Body["status"] == "escalated" {
		t.Fatalf("Sunday: %d %v", r.Status, r.Body)
	}
	if n := len(llm.Requests()) - calls; n != 1 {
		t.Errorf("%d model calls, want 1: the answer is not the model's", n)
	}
	if status, waits := state(t, r.Body["conversationId"]); status != "BOT" || waits != 0 {
		t.Errorf("Sunday: conversation %s with %d waits scheduled", status, waits)
	}

	mu.Lock()
	now = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC) // Monday 10:00 in Paris
	mu.Unlock()
	llm.Push(escalate, llmtest.Turn{Text: []string{"Someone from the team will join you."}})
	r = b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "Can I talk to someone?", "sessionId": "monday", "stream": false}, nil)
	if r.Status != 200 || r.Body["status"] != "escalated" || !strings.Contains(r.Body["message"].(string), "will join you") {
		t.Fatalf("Monday: %d %v", r.Status, r.Body)
	}
	if status, waits := state(t, r.Body["conversationId"]); status != "ESCALATED" || waits != 1 {
		t.Errorf("Monday: conversation %s with %d waits scheduled", status, waits)
	}
}
