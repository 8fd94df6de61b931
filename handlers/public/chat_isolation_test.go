package public_test

import (
	"strings"
	"testing"

	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/web/webtest"
)

// A tenant's chat never reaches another tenant's data: its knowledge base,
// tools, catalog, visitors and their memory, or a conversation with the same
// session id.
func TestChatTenantIsolation(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	a, other := b.NewTenant(t, "starter"), b.NewTenant(t, "starter")
	ob := "/tenants/" + other.Slug
	b.MustDo(t, 201, "POST", ob+"/corpus", other.Token, map[string]any{"title": "Secret pricing", "content": "Other tenant's secret price list."})
	b.MustDo(t, 201, "POST", ob+"/corpus", other.Token, map[string]any{"title": "Secret manual", "summary": "Other summary.", "content": "Other tenant's manual."})
	b.MustDo(t, 201, "POST", ob+"/tools", other.Token, map[string]any{"name": "Other form", "description": "d", "type": "SUBMIT_FORM",
		"config": map[string]any{"fields": []any{map[string]any{"name": "email", "label": "Email", "type": "email", "required": true}}}})
	b.MustDo(t, 201, "POST", ob+"/products", other.Token, map[string]any{"name": "Other lamp"})
	_, v := b.Do(t, "POST", ob+"/visitors", other.Token, map[string]any{"externalId": "shared-ext"})
	otherVisitor, _ := v["id"].(string)
	b.MustDo(t, 200, "POST", ob+"/visitors/"+otherVisitor+"/memory", other.Token, map[string]any{"key": "secret", "value": "other tenant's fact"})
	// The other tenant's conversation on session "same-session".
	llm.Push(llmtest.Turn{Text: []string{"Other answer."}})
	if r := b.Chat(t, "/chat/"+other.Slug, map[string]any{"message": "Other question", "sessionId": "same-session"}, webtest.AgentHeaders); r.Status != 200 {
		t.Fatalf("other tenant's chat: %d %v", r.Status, r.Body)
	}

	// Tenant a has a tool of its own, so the tool list is not empty anyway.
	b.MustDo(t, 201, "POST", "/tenants/"+a.Slug+"/tools", a.Token, map[string]any{"name": "Human", "description": "d", "type": "ESCALATE_TO_HUMAN"})
	for _, ref := range []string{otherVisitor, "shared-ext"} {
		llm.Push(llmtest.Turn{Text: []string{"Answer."}})
		r := b.Chat(t, "/chat/"+a.Slug, map[string]any{"message": "Question", "sessionId": "same-session", "visitorId": ref}, webtest.AgentHeaders)
		if r.Status != 200 {
			t.Fatalf("chat as %q: %d %v", ref, r.Status, r.Body)
		}
		reqs := llm.Requests()
		req := reqs[len(reqs)-1]
		system := string(req.Chat.Messages[0].Content)
		for _, leak := range []string{"secret price", "Other summary", "other tenant's fact", "explore_corpus"} {
			if strings.Contains(system, leak) {
				t.Errorf("visitor %q: tenant a's prompt holds %q", ref, leak)
			}
		}
		if got := webtest.OfferedTools(req); strings.Join(got, ",") != "human" {
			t.Errorf("visitor %q: tenant a offered %v", ref, got)
		}
		// Its history is its own conversation's, not the other tenant's.
		for _, m := range req.Chat.Messages {
			if strings.Contains(string(m.Content), "Other question") || strings.Contains(string(m.Content), "Other answer") {
				t.Errorf("visitor %q: the other tenant's conversation leaked into the history", ref)
			}
		}
	}
	// Both references made visitors of tenant a; the other tenant's is untouched.
	if n := b.Count(t, `SELECT count(*) FROM visitors WHERE tenant_id = $1 AND external_id IN ($2, 'shared-ext')`, a.ID, otherVisitor); n != 2 {
		t.Errorf("tenant a has %d visitors for the two references, want 2", n)
	}
	if n := b.Count(t, `SELECT count(*) FROM memory_facts WHERE visitor_id = $1`, otherVisitor); n != 1 {
		t.Errorf("the other tenant's visitor has %d facts, want its 1", n)
	}
	if n := b.Count(t, `SELECT count(*) FROM messages m JOIN conversations c ON c.id = m.conversation_id
		WHERE c.tenant_id = $1 AND c.session_id = 'same-session'`, other.ID); n != 2 {
		t.Errorf("the other tenant's conversation has %d messages, want its 2", n)
	}
}
