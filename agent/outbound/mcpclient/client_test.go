package mcpclient

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound"
)

// A tool's input schema is offered as an object schema; other schemas
// leave the tool out.
func TestMCPObjectSchema(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   any
		want string // "" when refused
	}{
		{nil, `{"type":"object","properties":{}}`},
		{map[string]any{"properties": map[string]any{"q": map[string]any{"type": "string"}}}, `{"properties":{"q":{"type":"string"}},"type":"object"}`},
		{map[string]any{"type": "object"}, `{"type":"object"}`},
		{map[string]any{"type": "string"}, ""},
		{[]any{1}, ""},
		{map[string]any{"type": "object", "description": strings.Repeat("d", maxMCPSchema)}, ""},
	} {
		got, err := objectSchema(tc.in)
		if tc.want == "" {
			if err == nil {
				t.Errorf("%v: accepted as %s", tc.in, got)
			}
			continue
		}
		if err != nil || !json.Valid(got) || string(got) != tc.want {
			t.Errorf("%v: %s %v, want %s", tc.in, got, err, tc.want)
		}
	}
}

// The tenant's MCP server is reached through the SSRF guard: a private
// address is refused before anything is sent, and the refusal is kept for
// FailureTTL, not asked again at every turn.
func TestMCPProxyGuarded(t *testing.T) {
	t.Parallel()
	url := "http://127.0.0.1:1/mcp"
	tenant := parley.Tenant{ID: "t1", Plan: "builder", MCPToolsURL: &url, MCPToolsMaxTools: 10}
	p := &Client{Outbound: outbound.New(nil, nil), Timeout: time.Second}
	_, err := p.Tools(t.Context(), tenant)
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("a loopback MCP server: %v, want refused", err)
	}
	p.mu.Lock()
	d := p.cache["t1"]
	p.mu.Unlock()
	_, again := p.Tools(t.Context(), tenant)
	p.mu.Lock()
	same, expires := p.cache["t1"] == d, d.expires
	p.mu.Unlock()
	if again == nil || !same {
		t.Errorf("the refusal was not kept: %v", again)
	}
	if time.Until(expires) > FailureTTL {
		t.Errorf("a failure kept until %s", d.expires)
	}
}
