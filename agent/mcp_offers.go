package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/mcpclient"
	"github.com/parley/parley/agent/tools"
)

// The tenant's own MCP server's tools offered to the model: named
// mcp_<name> in the providers' charset and run through the engine's
// client of the server (agent/outbound/mcpclient).

// MCPProxyType is the tool type of the tenant's MCP tools in the tool history.
const MCPProxyType = "MCP_PROXY"

const (
	// mcpNamePrefix starts the function name of every MCP tool.
	mcpNamePrefix = "mcp_"
	// maxFunctionName is the longest function name the providers accept.
	maxFunctionName = 64
	// maxMCPDisplayName bounds the server's name of a tool kept in the tool
	// history (a tenant's own tool's name has 100 characters at most).
	maxMCPDisplayName = 200
)

// MCPFunctionName is the function name the model sees for a server's tool:
// mcp_ and the name in lower case (the tool history keeps names in lower
// case) with every run of characters outside the providers' charset
// (letters, digits, _ and -) made one _, at most 64 characters.
func MCPFunctionName(name string) string {
	var b strings.Builder
	b.WriteString(mcpNamePrefix)
	under := true // the prefix ends with _
	for _, r := range strings.ToLower(name) {
		ok := r < 128 && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-')
		switch {
		case ok:
			b.WriteRune(r)
			under = r == '_'
		case !under:
			b.WriteByte('_')
			under = true
		}
	}
	s := strings.TrimRight(b.String(), "_")
	if s+"_" == mcpNamePrefix {
		s = mcpNamePrefix + "tool"
	}
	if len(s) > maxFunctionName {
		s = s[:maxFunctionName]
	}
	return s
}

// MCPOffer is one server tool offered to the model this turn.
type MCPOffer struct {
	Function string // the name the model calls
	Tool     mcpclient.Tool
}

// MCPOffers names the server's tools for the model, in the server's order,
// at most limit of them, the names made unique (_2, _3...). The tools
// beyond limit are named in one line of skipped, whatever their number: it is
// written at every turn.
func MCPOffers(tools []mcpclient.Tool, limit int) (offers []MCPOffer, skipped []string) {
	n := min(len(tools), max(limit, 0))
	if beyond := tools[n:]; len(beyond) > 0 {
		names := make([]string, len(beyond))
		for i, t := range beyond {
			names[i] = t.Name
		}
		skipped = []string{fmt.Sprintf("%s: beyond the %d MCP tools allowed", strings.Join(names, ", "), n)}
	}
	if n == 0 {
		return nil, skipped
	}
	offers = make([]MCPOffer, 0, n)
	used := make(map[string]bool, n)
	for _, t := range tools[:n] {
		base := MCPFunctionName(t.Name)
		name := base
		for k := 2; used[name]; k++ {
			suffix := "_" + strconv.Itoa(k)
			name = base[:min(len(base), maxFunctionName-len(suffix))] + suffix
		}
		used[name] = true
		offers = append(offers, MCPOffer{Function: name, Tool: t})
	}
	return offers, skipped
}

// mcpExtras are the offered server tools as the registry's extra tools,
// each calling the tenant's server.
func (e *Engine) mcpExtras(tenant parley.Tenant, offers []MCPOffer) []tools.Extra {
	out := make([]tools.Extra, 0, len(offers))
	for _, o := range offers {
		desc := o.Tool.Description
		if desc == "" {
			desc = "A tool of the business's own systems (" + o.Tool.Name + ")."
		}
		name := o.Tool.Name
		// The server's own name of the tool is the owner's: the tool
		// history shows it beside the function name derived from it.
		out = append(out, tools.Extra{Name: o.Function, Type: MCPProxyType, Description: desc, Parameters: o.Tool.InputSchema,
			DisplayName: parley.Clip(name, maxMCPDisplayName),
			Run: func(ctx context.Context, args json.RawMessage) (any, error) {
				out, err := e.MCP.Call(ctx, tenant, name, args)
				var f *mcpclient.Failure
				if errors.As(err, &f) {
					return out, &tools.Failure{Summary: f.Summary, Result: f.Result, Cause: f.Cause}
				}
				return out, err
			}})
	}
	return out
}
