package api_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/web/webtest"
)

// A run of the tenant's own tool is in the conversation's tool history
// (the REST API's detail and list) under the function name the model was
// offered, lowercase, as the spec names it, with the owner's name of the
// tool in toolDisplayName as it was at the run: renaming the tool later
// leaves the history alone. The dashboard's transcript shows the display
// name.
func TestToolHistoryNames(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	ten := b.OwnedTenant(t, "starter")
	base := "/tenants/" + ten.Slug
	tool := b.MustDo(t, 201, "POST", base+"/tools", ten.Token, map[string]any{"name": "Check Order Status", "description": "Look up an order",
		"type": "SUBMIT_FORM", "config": map[string]any{"fields": []any{
			map[string]any{"name": "order_number", "label": "Order number", "type": "text", "required": true}}}})

	llm.Push(llmtest.Turn{ToolCalls: []llmtest.ToolCall{webtest.Call("c1", "check_order_status", `{"order_number":"A-1042"}`)}},
		llmtest.Turn{Text: []string{"Your order is on its way."}})
	n := len(llm.Requests())
	r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "Where is order A-1042?", "sessionId": "history-1"}, webtest.AgentHeaders)
	if r.Status != 200 {
		t.Fatalf("got %d %v", r.Status, r.Body)
	}
	reqs := llm.Requests()[n:]
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	offered := webtest.OfferedTools(reqs[0])
	if !slices.Equal(offered, []string{"check_order_status"}) {
		t.Fatalf("offered %v", offered)
	}
	if res := webtest.ToolResult(t, reqs[1]); res["success"] != true {
		t.Fatalf("the tool failed: %v", res)
	}
	convID := r.Body["conversationId"].(string)

	checkHistory := func(t *testing.T, where string, history any) {
		t.Helper()
		h, _ := history.([]any)
		if len(h) != 1 {
			t.Fatalf("%s: tool history %v", where, history)
		}
		run := h[0].(map[string]any)
		if run["toolName"] != offered[0] || run["toolDisplayName"] != "Check Order Status" || run["toolType"] != "SUBMIT_FORM" {
			t.Errorf("%s: run %v, want toolName %q and toolDisplayName %q", where, run, offered[0], "Check Order Status")
		}
	}
	checkAPI := func(t *testing.T) {
		t.Helper()
		checkHistory(t, "detail", b.MustDo(t, 200, "GET", base+"/conversations/"+convID, ten.Token, nil)["toolHistory"])
		list, _ := b.MustDo(t, 200, "GET", base+"/conversations", ten.Token, nil)["conversations"].([]any)
		if len(list) != 1 || list[0].(map[string]any)["id"] != convID {
			t.Fatalf("list %v", list)
		}
		checkHistory(t, "list", list[0].(map[string]any)["toolHistory"])
	}
	checkAPI(t)

	// Renamed after the run: the history keeps the name it ran under.
	b.MustDo(t, 200, "PATCH", base+"/tools/"+tool["id"].(string), ten.Token, map[string]any{"name": "Order Lookup"})
	checkAPI(t)

	c := b.NewAdminClient(t)
	c.SignIn(ten)
	p := c.As(t).Get("/admin/conversations/" + convID)
	if got := strings.TrimSpace(p.Doc.Find("#messages .tool-call strong").Text()); got != "Check Order Status" {
		t.Errorf("the dashboard names the tool %q", got)
	}
}
