package agent

import (
	"slices"
	"strings"
	"testing"

	"github.com/parley/parley/agent/outbound/mcpclient"
)

// MCP tools get names in the providers' charset, lower case, at most 64
// characters, unique; at most the tenant's maximum are offered, in the
// server's order.
func TestMCPOffers(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 80)
	tools := []mcpclient.Tool{{Name: "get_weather"}, {Name: "Get Weather!"}, {Name: "été/météo"}, {Name: "???"},
		{Name: long}, {Name: long + "y"}, {Name: "a-b"}, {Name: "beyond"}}
	offers, skipped := MCPOffers(tools, 7)
	var names []string
	for _, o := range offers {
		names = append(names, o.Function)
		if len(o.Function) > 64 {
			t.Errorf("%q is longer than 64", o.Function)
		}
	}
	want := []string{"mcp_get_weather", "mcp_get_weather_2", "mcp_t_m_t_o", "mcp_tool", "mcp_" + strings.Repeat("x", 60),
		"mcp_" + strings.Repeat("x", 58) + "_2", "mcp_a-b"}
	if !slices.Equal(names, want) {
		t.Errorf("names %v\nwant %v", names, want)
	}
	if offers[1].Tool.Name != "Get Weather!" {
		t.Errorf("the call goes to %q", offers[1].Tool.Name)
	}
	if len(skipped) != 1 || !strings.HasPrefix(skipped[0], "beyond:") {
		t.Errorf("skipped %v", skipped)
	}
}

// The limits hold at their edge: a tenant's maximum of tools is offered
// whole and one more is skipped, the tools beyond named in one line; a
// name of 60 characters fits the 64 of a function name whole, one of 61
// is clipped.
func TestMCPOffersLimits(t *testing.T) {
	t.Parallel()
	tools := []mcpclient.Tool{{Name: "a"}, {Name: "b"}, {Name: "c"}, {Name: "d"}}
	if offers, skipped := MCPOffers(tools[:3], 3); len(offers) != 3 || skipped != nil {
		t.Errorf("at the maximum: %d offered, skipped %v", len(offers), skipped)
	}
	offers, skipped := MCPOffers(tools, 2)
	if len(offers) != 2 || offers[1].Tool.Name != "b" {
		t.Errorf("beyond the maximum: %v", offers)
	}
	if want := []string{"c, d: beyond the 2 MCP tools allowed"}; !slices.Equal(skipped, want) {
		t.Errorf("skipped %v, want %v", skipped, want)
	}
	if offers, skipped := MCPOffers(tools, 0); offers != nil || len(skipped) != 1 {
		t.Errorf("a maximum of 0: %v, skipped %v", offers, skipped)
	}
	for _, tc := range []struct{ name, want string }{
		{strings.Repeat("n", 60), "mcp_" + strings.Repeat("n", 60)},
		{strings.Repeat("n", 61), "mcp_" + strings.Repeat("n", 60)},
		{strings.Repeat("n", 59) + "!", "mcp_" + strings.Repeat("n", 59)},
	} {
		if got := MCPFunctionName(tc.name); got != tc.want {
			t.Errorf("MCPFunctionName(%d characters) = %q, want %q", len(tc.name), got, tc.want)
		}
	}
}
