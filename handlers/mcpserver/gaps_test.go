package mcpserver_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/web/webtest"
)

// An agent closes the loop of the knowledge gaps through MCP: it lists
// the questions the assistant (the local provider, with an empty knowledge
// base) could not answer, gives the right answer to one answer (a new
// entry titled with the question), and marks the group answered by it,
// which leaves the open list. Bad arguments, another tenant's ids and the
// scopes are refused as on the REST API; the correction is in the audit
// log.
func TestMCPKnowledgeGaps(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.NewTenant(t, "builder")
	other := b.NewTenant(t, "builder")
	var conv, answer string
	for i, q := range []string{"What are your opening hours?", "Opening hours?"} {
		r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": q, "sessionId": "mcp-gap-" + string(rune('a'+i)), "stream": false}, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("chat: %d %v", r.Status, r.Body)
		}
		conv, answer = r.Body["conversationId"].(string), r.Body["messageId"].(string)
	}
	cs := b.MCPClient(t, b.Token(t, ten.ID, auth.ScopeConversationsRead, auth.ScopeCorpusWrite))

	list := webtest.MustCall(t, cs, "list_knowledge_gaps", nil)
	gaps := list["knowledgeGaps"].([]any)
	if len(gaps) != 1 {
		t.Fatalf("list_knowledge_gaps: %v", list)
	}
	g := webtest.Obj(gaps[0])
	if g["count"] != float64(2) || g["state"] != "open" || len(g["examples"].([]any)) != 2 ||
		webtest.Obj(list["pagination"])["total"] != float64(1) {
		t.Errorf("the group: %v", list)
	}
	key := g["key"].(string)

	// Bad arguments are the caller's to fix, named.
	for _, bad := range []map[string]any{{"state": "closed"}, {"limit": 101}, {"page": "two"}, {"channel": "fax"}, {"from": "yesterday"}} {
		got := mustFail(t, cs, "list_knowledge_gaps", bad)
		for k := range bad {
			if webtest.Obj(got["details"])[k] == nil {
				t.Errorf("list_knowledge_gaps(%v): %v, want details naming %s", bad, got, k)
			}
		}
	}
	if got := webtest.MustCall(t, cs, "list_knowledge_gaps", map[string]any{"limit": 100}); webtest.Obj(got["pagination"])["limit"] != float64(100) {
		t.Errorf("limit 100: %v", got["pagination"])
	}

	// The right answer to the last answer: an entry titled with its question.
	fixed := webtest.MustCall(t, cs, "correct_answer", map[string]any{"conversationId": conv, "messageId": answer,
		"answer": "We are open Tuesday to Saturday, 9:00 to 18:30."})
	entry := webtest.Obj(fixed["corpus"])
	if fixed["created"] != true || entry["title"] != "Opening hours?" || entry["source"] != "correction" {
		t.Fatalf("correct_answer: %v", fixed)
	}
	for _, bad := range []struct {
		args  map[string]any
		field string
	}{
		{map[string]any{"conversationId": conv, "messageId": answer}, "answer"},
		{map[string]any{"conversationId": conv, "messageId": answer, "answer": strings.Repeat("x", 50001)}, "answer"},
		{map[string]any{"conversationId": "", "messageId": answer, "answer": "x"}, "conversationId"},
	} {
		if got := mustFail(t, cs, "correct_answer", bad.args); webtest.Obj(got["details"])[bad.field] == nil {
			t.Errorf("correct_answer(%v): %v, want details naming %s", bad.args, got, bad.field)
		}
	}

	// Marked answered by that entry, the group leaves the open list.
	marked := webtest.MustCall(t, cs, "mark_knowledge_gap", map[string]any{"key": key, "state": "answered", "entryId": entry["id"]})
	if marked["state"] != "answered" || marked["entryId"] != entry["id"] {
		t.Errorf("mark_knowledge_gap: %v", marked)
	}
	if got := webtest.MustCall(t, cs, "list_knowledge_gaps", nil)["knowledgeGaps"].([]any); len(got) != 0 {
		t.Errorf("open groups after the mark: %v", got)
	}
	answered := webtest.MustCall(t, cs, "list_knowledge_gaps", map[string]any{"state": "answered"})["knowledgeGaps"].([]any)
	if len(answered) != 1 || webtest.Obj(answered[0])["entryId"] != entry["id"] {
		t.Errorf("answered groups: %v", answered)
	}
	if got := mustFail(t, cs, "mark_knowledge_gap", map[string]any{"key": key, "state": "done"}); webtest.Obj(got["details"])["state"] == nil {
		t.Errorf("an unknown state: %v", got)
	}

	// Another tenant's: nothing to see, nothing to change.
	ocs := b.MCPClient(t, b.Token(t, other.ID, auth.ScopeConversationsRead, auth.ScopeCorpusWrite))
	if got := webtest.MustCall(t, ocs, "list_knowledge_gaps", map[string]any{"state": "all"})["knowledgeGaps"].([]any); len(got) != 0 {
		t.Errorf("the other tenant sees %v", got)
	}
	if got := mustFail(t, ocs, "correct_answer", map[string]any{"conversationId": conv, "messageId": answer, "answer": "x"}); !strings.Contains(got["error"].(string), "not found") {
		t.Errorf("another tenant's answer: %v", got)
	}
	if got := mustFail(t, ocs, "mark_knowledge_gap", map[string]any{"key": key, "state": "dismissed", "entryId": nil}); !strings.Contains(strings.ToLower(got["error"].(string)), "not found") {
		t.Errorf("another tenant's group: %v", got)
	}

	// Scopes: the list needs conversations read, the changes corpus write.
	ro := b.MCPClient(t, b.Token(t, ten.ID, auth.ScopeCorpusRead))
	if got := mustFail(t, ro, "list_knowledge_gaps", nil); got["error"] != "Missing scope: mcp:conversations:read" {
		t.Errorf("list without mcp:conversations:read: %v", got)
	}
	if got := mustFail(t, ro, "correct_answer", map[string]any{"conversationId": conv, "messageId": answer, "answer": "x"}); got["error"] != "Missing scope: mcp:corpus:write" {
		t.Errorf("correct_answer without mcp:corpus:write: %v", got)
	}

	// The correction is in the audit log, naming its entry.
	if n := b.Count(t, `SELECT count(*) FROM audit_log WHERE tenant_id = $1 AND action = 'knowledge.answer_corrected'
		AND target_id = $2 AND details->>'tool' = 'correct_answer'`, ten.ID, entry["id"]); n != 1 {
		t.Errorf("%d audit entries of the correction, want 1", n)
	}
}
