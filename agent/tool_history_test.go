package agent

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/llm"
	"github.com/parley/parley/agent/tools"
	"github.com/parley/parley/agent/tools/toolstest"
)

// A run is stored in the tool history under the function name the model
// called, exactly as the tools list offered it (a clash's _2 suffix
// included), with the owner's name of the tool beside it: the tenant's
// tool's name, an MCP server's name of its tool; none for the built-in
// tools and a call of a tool that does not exist.
func TestToolRunNames(t *testing.T) {
	t.Parallel()
	form := parley.SubmitFormConfig{Fields: []parley.FormField{{Name: "order", Label: "Order", Type: "text", Required: true}}}
	reg := tools.NewRegistry([]parley.Tool{
		toolstest.Tool(t, "Check Order Status", parley.ToolSubmitForm, form),
		toolstest.Tool(t, "Check-Order-Status", parley.ToolSubmitForm, form),
	}, tools.Deps{Corpus: toolstest.Corpus{}})
	reg.AddExtra([]tools.Extra{{Name: "mcp_lookup_order", Type: MCPProxyType, DisplayName: "Lookup Order",
		Run: func(context.Context, json.RawMessage) (any, error) { return map[string]any{"found": true}, nil }}})
	offered := map[string]bool{}
	for _, s := range reg.Specs() {
		offered[s.Name] = true
	}
	for _, tc := range []struct {
		call, args, display string
	}{
		{"check_order_status", `{"order":"A1"}`, "Check Order Status"},
		{"check_order_status_2", `{"order":"A1"}`, "Check-Order-Status"},
		{"mcp_lookup_order", `{}`, "Lookup Order"},
		{tools.ExploreCorpusTool, `{"query":"refund"}`, ""},
		{"no_such_tool", `{}`, ""},
	} {
		ex := execute(t, reg, tc.call, tc.args)
		run, err := toolRun(ex)
		if err != nil {
			t.Fatal(err)
		}
		display := ""
		if run.Call.ToolDisplayName != nil {
			display = *run.Call.ToolDisplayName
		}
		if run.Call.ToolName != tc.call || display != tc.display || (tc.call != "no_such_tool") != offered[tc.call] {
			t.Errorf("%s: stored as %q, display %v; want %q, display %q", tc.call, run.Call.ToolName, run.Call.ToolDisplayName, tc.call, tc.display)
		}
	}
}

func execute(t *testing.T, reg *tools.Registry, name, args string) tools.Execution {
	t.Helper()
	return reg.Execute(context.Background(), llm.ToolCall{ID: "c1", Name: name, Arguments: json.RawMessage(args)})
}
