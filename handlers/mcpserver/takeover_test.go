package mcpserver_test

import (
	"strings"
	"testing"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/web/webtest"
)

// TestMCPTakeover takes a conversation over and replies through the MCP
// tools, under mcp:conversations:write, which conversations:write grants.
func TestMCPTakeover(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ct := b.NewConvTenant(t)
	conv := b.AddConversation(t, ct, webtest.SeedConversation{Turns: []string{"Is my parcel lost?", "Let me check."}})
	cs := b.MCPClient(t, b.Token(t, ct.ID, auth.ScopeConversationsRead, auth.ScopeConversationsWrite))

	mustFail(t, cs, "move_conversation", map[string]any{"id": conv.ID, "status": "HUMAN"}) // no assignee
	if out := mustFail(t, cs, "reply_to_conversation", map[string]any{"id": conv.ID, "content": strings.Repeat("x", 15001), "authorName": "Desk"}); !strings.Contains(out["error"].(string), "15000") {
		t.Errorf("a long reply: %v", out)
	}
	taken := webtest.MustCall(t, cs, "move_conversation", map[string]any{"id": conv.ID, "status": "HUMAN", "assignee": "Desk"})
	if c := taken["conversation"].(map[string]any); c["status"] != "HUMAN" || c["assignee"] != "Desk" || c["previousStatus"] != "BOT" {
		t.Fatalf("move: %v", taken)
	}
	if out := mustFail(t, cs, "move_conversation", map[string]any{"id": conv.ID, "status": "HUMAN", "assignee": "Someone else"}); !strings.Contains(out["error"].(string), "Desk") {
		t.Errorf("a second take: %v", out)
	}
	reply := webtest.MustCall(t, cs, "reply_to_conversation", map[string]any{"id": conv.ID, "content": "Found it: it arrives tomorrow."})
	if m := reply["message"].(map[string]any); m["role"] != "human" || m["authorName"] != "Desk" {
		t.Fatalf("reply: %v", reply)
	}
	read := webtest.MustCall(t, cs, "read_conversation", map[string]any{"id": conv.ID})
	if c := read["conversation"].(map[string]any); c["assignee"] != "Desk" || len(c["messages"].([]any)) != 3 {
		t.Errorf("read back: %v", c)
	}

	// Without the write scope the tools are neither listed nor run.
	ro := b.MCPClient(t, b.Token(t, ct.ID, auth.ScopeConversationsRead))
	for _, name := range webtest.ToolNames(t, ro) {
		if name == "move_conversation" || name == "reply_to_conversation" {
			t.Errorf("%s listed without mcp:conversations:write", name)
		}
	}
	mustFail(t, ro, "move_conversation", map[string]any{"id": conv.ID, "status": "BOT"})
	other := b.NewConvTenant(t)
	mustFail(t, b.MCPClient(t, b.Token(t, other.ID, auth.ScopeConversationsWrite)), "move_conversation", map[string]any{"id": conv.ID, "status": "BOT"})
	if got, _ := b.DB.Conversation(t.Context(), ct.ID, conv.ID); got.Status != "HUMAN" {
		t.Errorf("refused moves changed the state to %s", got.Status)
	}
}
