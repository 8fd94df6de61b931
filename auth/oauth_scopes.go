package auth

import (
	"slices"
	"strings"
)

// The MCP scopes (ScopeMCPCorpusRead..., MCPScopes) are in scopes.go.

// OAuthScopes are the scopes a client may ask for: the REST scopes, then the
// MCP ones. The two families do not map onto each other: a REST endpoint
// checks a REST scope, the MCP server an mcp: scope.
var OAuthScopes = slices.Concat(RESTScopes, MCPScopes)

// FilterOAuthScopes keeps the known scopes of a space-separated list, in
// canonical order without duplicates; unknown ones are dropped silently
// (spec: "Unknown scopes are silently filtered").
func FilterOAuthScopes(s string) []string {
	asked := strings.Fields(s)
	var out []string
	for _, k := range OAuthScopes {
		if slices.Contains(asked, k) {
			out = append(out, k)
		}
	}
	return out
}
