package web

import (
	"strings"
	"testing"

	"github.com/parley/parley/agent/llmtest"
)

// The chat keeps its tenant's configuration between messages (db's chat
// configuration cache) and never answers from one that has changed: a
// change made through the API or straight in the database reaches the very
// next message, whether it is the tenant row (the bot's name, the widget
// key), a segment or the knowledge base.
func TestChatFollowsConfigChanges(t *testing.T) {
	t.Parallel()
	b, llm := setupChat(t, nil)
	ten := b.newTenant(t, "starter")
	path := "/chat/" + ten.Slug
	seq := 0
	send := func(t *testing.T, body map[string]any) chatResponse {
		t.Helper()
		seq++
		body["message"], body["sessionId"] = "Hello", "cfg-"+string(rune('a'+seq))
		return b.chat(t, path, body, agentHeaders)
	}
	answered := func(t *testing.T, body map[string]any) string {
		t.Helper()
		llm.Push(llmtest.Turn{Text: []string{"OK."}})
		if r := send(t, body); r.status != 200 {
			t.Fatalf("got %d %v", r.status, r.body)
		}
		reqs := llm.Requests()
		return string(reqs[len(reqs)-1].Chat.Messages[0].Content)
	}

	if s := answered(t, map[string]any{}); strings.Contains(s, "Zephyrine") {
		t.Fatalf("the first prompt already names Zephyrine: %q", s)
	}
	b.mustDo(t, 200, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"botName": "Zephyrine"})
	if s := answered(t, map[string]any{}); !strings.Contains(s, "Zephyrine") {
		t.Errorf("after the API renamed the bot, the prompt does not name it: %q", s)
	}

	b.exec(t, `UPDATE segments SET system_prompt = 'Speak like a lighthouse keeper.' WHERE tenant_id = $1 AND is_default`, ten.ID)
	if s := answered(t, map[string]any{}); !strings.Contains(s, "Speak like a lighthouse keeper.") {
		t.Errorf("after the segment's prompt changed in the database, the prompt lacks it: %q", s)
	}

	b.exec(t, `INSERT INTO corpus_entries (tenant_id, title, content) VALUES ($1, 'Opening hours', 'We open at 7 on Sundays.')`, ten.ID)
	for i := range 2 { // the first renews the tenant, the second the prompt data
		if s := answered(t, map[string]any{}); !strings.Contains(s, "We open at 7 on Sundays.") {
			t.Errorf("message %d after a corpus entry was added: not in the prompt: %q", i+1, s)
		}
	}

	// The widget key: the cache's key neither lets the old one in nor
	// keeps the new one out.
	b.exec(t, `UPDATE tenants SET widget_key = 'wk-1' WHERE id = $1`, ten.ID)
	answered(t, map[string]any{"widgetKey": "wk-1"})
	b.exec(t, `UPDATE tenants SET widget_key = 'wk-2' WHERE id = $1`, ten.ID)
	if r := send(t, map[string]any{"widgetKey": "wk-1"}); r.status != 403 {
		t.Errorf("the rotated-out key: got %d %v, want 403", r.status, r.body)
	}
	answered(t, map[string]any{"widgetKey": "wk-2"})

	// Deactivated: the plan no longer has the widget.
	b.exec(t, `UPDATE tenants SET plan = 'free' WHERE id = $1`, ten.ID)
	if r := send(t, map[string]any{"widgetKey": "wk-2"}); r.status != 402 {
		t.Errorf("after the plan lost the widget: got %d %v, want 402", r.status, r.body)
	}
}
