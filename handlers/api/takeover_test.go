package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/web/webtest"
)

// TestTakeover drives a takeover through the REST API while a visitor
// chats: a person takes the conversation, the visitor's messages are
// stored without calling the model, the person replies, hands back, and
// the assistant answers with the conversation so far; a closed
// conversation reopens on the visitor's next message.
func TestTakeover(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil,
		llmtest.Turn{Text: []string{"Hello, how can I help?"}},
		llmtest.Turn{Text: []string{"SUMMARY: The visitor asks where their order is.\n", "Your order ships today."}},
		llmtest.Turn{Text: []string{"Glad Jeanne could help."}},
		llmtest.Turn{Text: []string{"Welcome back."}})
	ten := b.NewTenant(t, "scale")
	other := b.NewTenant(t, "scale")
	chat := func(message string) map[string]any {
		t.Helper()
		r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": message, "sessionId": "takeover-1"},
			map[string]string{"X-Agent-Model": "desk-test"})
		if r.Status != http.StatusOK {
			t.Fatalf("chat %q: %d %v", message, r.Status, r.Body)
		}
		return r.Body
	}
	first := chat("Where is my order?")
	conv := first["conversationId"].(string)
	base := "/tenants/" + ten.Slug + "/conversations/" + conv
	state := func(token string, body any) (int, map[string]any) {
		t.Helper()
		return b.Do(t, "POST", base+"/state", token, body)
	}

	// Bad input, scopes and other tenants' ids.
	for _, c := range []struct {
		body  any
		field string
	}{
		{map[string]any{"status": "HUMAN"}, "assignee"},
		{map[string]any{"status": "HUMAN", "assignee": "   "}, "assignee"},
		{map[string]any{"status": "HUMAN", "assignee": strings.Repeat("a", 101)}, "assignee"},
		{map[string]any{"status": "HUMAN", "assignee": "Jeanne\nDupont"}, "assignee"},
		{map[string]any{"status": "human", "assignee": "Jeanne"}, "status"},
		{map[string]any{"status": "OPEN"}, "status"},
		{map[string]any{"status": 3}, "status"},
		{map[string]any{}, "status"},
	} {
		status, body := state(ten.Token, c.body)
		if status != http.StatusBadRequest || webtest.ErrorDetails(body)[c.field] == nil {
			t.Errorf("state %v: %d %v, want 400 naming %s", c.body, status, body, c.field)
		}
	}
	if status, body := state(other.Token, map[string]any{"status": "HUMAN", "assignee": "Mallory"}); status != http.StatusNotFound {
		t.Errorf("another tenant's token: %d %v", status, body)
	}
	if status, _ := b.Do(t, "POST", "/tenants/"+ten.Slug+"/conversations/not-a-uuid/state", ten.Token, map[string]any{"status": "BOT"}); status != http.StatusNotFound {
		t.Errorf("not a uuid: %d", status)
	}
	readOnly := b.Token(t, ten.ID, auth.ScopeConversationsRead)
	if status, _ := state(readOnly, map[string]any{"status": "HUMAN", "assignee": "Jeanne"}); status != http.StatusForbidden {
		t.Errorf("conversations:read only: %d, want 403", status)
	}
	if status, _ := b.Do(t, "POST", base+"/messages", readOnly, map[string]any{"content": "hi", "authorName": "X"}); status != http.StatusForbidden {
		t.Errorf("reply with conversations:read only: %d, want 403", status)
	}
	// Nobody took it through the API: a reply needs a name.
	if status, body := b.Do(t, "POST", base+"/messages", ten.Token, map[string]any{"content": "hi"}); status != http.StatusBadRequest ||
		webtest.ErrorDetails(body)["authorName"] == nil {
		t.Errorf("reply without a name: %d %v", status, body)
	}

	// Jeanne takes it; Marc cannot.
	status, body := state(ten.Token, map[string]any{"status": "HUMAN", "assignee": " Jeanne "})
	if status != http.StatusOK || body["status"] != "HUMAN" || body["previousStatus"] != "BOT" || body["assignee"] != "Jeanne" || body["takenAt"] == nil {
		t.Fatalf("take: %d %v", status, body)
	}
	if status, body := state(ten.Token, map[string]any{"status": "HUMAN", "assignee": "Marc"}); status != http.StatusConflict ||
		!strings.Contains(body["error"].(string), "Jeanne") {
		t.Errorf("second take: %d %v, want 409 naming Jeanne", status, body)
	}
	if status, body := state(ten.Token, map[string]any{"status": "HUMAN", "assignee": "Jeanne"}); status != http.StatusOK || body["previousStatus"] != "HUMAN" {
		t.Errorf("taking again: %d %v", status, body)
	}

	// The visitor writes: stored, not answered.
	held := chat("Are you a real person?")
	if held["message"] != "" || held["status"] != "human" || len(llm.Requests()) != 1 {
		t.Fatalf("held turn %v, %d model calls", held, len(llm.Requests()))
	}

	// Jeanne replies (her name by default), within the limit.
	if status, body := b.Do(t, "POST", base+"/messages", ten.Token, map[string]any{"content": strings.Repeat("é", 15001)}); status != http.StatusBadRequest ||
		webtest.ErrorDetails(body)["content"] == nil {
		t.Errorf("15,001 characters: %d", status)
	}
	if status, body := b.Do(t, "POST", base+"/messages", ten.Token, map[string]any{"content": "  ", "authorName": "Jeanne"}); status != http.StatusBadRequest {
		t.Errorf("blank reply: %d %v", status, body)
	}
	if status, body := b.Do(t, "POST", base+"/messages", ten.Token, map[string]any{"content": "It is mine", "authorName": "Marc"}); status != http.StatusConflict {
		t.Errorf("Marc's reply: %d %v, want 409", status, body)
	}
	if status, _ := b.Do(t, "POST", "/tenants/"+other.Slug+"/conversations/"+conv+"/messages", other.Token, map[string]any{"content": "x", "authorName": "M"}); status != http.StatusNotFound {
		t.Errorf("another tenant's reply: %d", status)
	}
	status, reply := b.Do(t, "POST", base+"/messages", ten.Token, map[string]any{"content": "Yes, I am Jeanne. <b>Your order ships today.</b>"})
	if status != http.StatusCreated || reply["role"] != "human" || reply["authorName"] != "Jeanne" || reply["content"] != "Yes, I am Jeanne. <b>Your order ships today.</b>" {
		t.Fatalf("reply: %d %v", status, reply)
	}
	if status, _ := b.Do(t, "POST", base+"/messages", ten.Token, map[string]any{"content": strings.Repeat("é", 15000)}); status != http.StatusCreated {
		t.Errorf("15,000 characters: %d", status)
	}

	// The detail shows who holds it and who wrote what; the list filters by state.
	_, detail := b.Do(t, "GET", base, ten.Token, nil)
	var roles []string
	for _, m := range detail["messages"].([]any) {
		roles = append(roles, m.(map[string]any)["role"].(string))
	}
	if want := []string{"user", "assistant", "user", "human", "human"}; !slices.Equal(roles, want) || detail["assignee"] != "Jeanne" || detail["status"] != "HUMAN" {
		t.Fatalf("detail roles %v, assignee %v, status %v", roles, detail["assignee"], detail["status"])
	}
	for q, want := range map[string]int{"HUMAN": 1, "BOT": 0} {
		_, list := b.Do(t, "GET", "/tenants/"+ten.Slug+"/conversations?status="+q, ten.Token, nil)
		if n := len(list["conversations"].([]any)); n != want {
			t.Errorf("?status=%s: %d conversations, want %d", q, n, want)
		}
	}

	// The assistant drafts Jeanne's next reply, storing nothing.
	status, draft := b.Do(t, "POST", base+"/draft", ten.Token, nil)
	if status != http.StatusOK || draft["summary"] != "The visitor asks where their order is." || draft["reply"] != "Your order ships today." ||
		draft["model"] != "test-model" {
		t.Fatalf("draft: %d %v", status, draft)
	}
	drafted := llm.Requests()[1].Chat
	if sys := string(drafted.Messages[0].Content); !strings.Contains(sys, "A person of the team has taken over") {
		t.Errorf("the draft's prompt lacks its instructions: %q", sys)
	}
	if last := drafted.Messages[len(drafted.Messages)-1]; last.Role != "assistant" || !strings.HasPrefix(string(last.Content), "ééé") {
		t.Errorf("the draft's history does not end with Jeanne's replies: %s %.20q", last.Role, last.Content)
	}
	if status, _ := b.Do(t, "POST", "/tenants/"+other.Slug+"/conversations/"+conv+"/draft", other.Token, nil); status != http.StatusNotFound {
		t.Errorf("another tenant's draft: %d", status)
	}
	if status, _ := b.Do(t, "POST", base+"/draft", readOnly, nil); status != http.StatusForbidden {
		t.Errorf("draft with conversations:read only: %d", status)
	}
	if n := b.Count(t, `SELECT count(*) FROM messages WHERE conversation_id = $1`, conv); n != 5 {
		t.Errorf("%d messages after the draft, want 5", n)
	}

	// Handed back: the assistant answers, with Jeanne's reply in its history.
	if status, body := state(ten.Token, map[string]any{"status": "BOT"}); status != http.StatusOK || body["assignee"] != nil || body["previousStatus"] != "HUMAN" {
		t.Fatalf("hand back: %d %v", status, body)
	}
	if back := chat("Thanks!"); back["message"] != "Glad Jeanne could help." || back["status"] != "bot" {
		t.Fatalf("after the hand back: %v", back)
	}
	reqs := llm.Requests()
	var history []string
	for _, m := range reqs[len(reqs)-1].Chat.Messages {
		history = append(history, m.Role+": "+string(m.Content))
	}
	if !slices.Contains(history, "assistant: Yes, I am Jeanne. <b>Your order ships today.</b>") ||
		!slices.Contains(history, "user: Are you a real person?") {
		t.Errorf("the model's history %q lacks the person's part", history)
	}

	// Closed, then reopened by the visitor.
	if status, body := state(ten.Token, map[string]any{"status": "CLOSED"}); status != http.StatusOK || body["status"] != "CLOSED" {
		t.Fatalf("close: %d %v", status, body)
	}
	if again := chat("One more question"); again["message"] != "Welcome back." || again["status"] != "bot" {
		t.Fatalf("after closing: %v", again)
	}
}
