package auth

import (
	"net"
	"net/url"
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

// CheckRedirectURI reports why uri cannot be a client's redirect URI, or ""
// when it can: an absolute https URI, or http on the loopback (127.0.0.1,
// [::1], localhost) for native apps; no fragment, no user info.
func CheckRedirectURI(uri string) string {
	u, err := url.Parse(uri)
	switch {
	case err != nil || !u.IsAbs() || u.Host == "":
		return "must be an absolute URI"
	case u.Fragment != "" || strings.Contains(uri, "#"):
		return "must not have a fragment"
	case u.User != nil:
		return "must not carry user information"
	case u.Scheme == "https":
		return ""
	case u.Scheme == "http":
		h := u.Hostname()
		if h == "localhost" || net.ParseIP(h) != nil && net.ParseIP(h).IsLoopback() {
			return ""
		}
		return "must use https (plain http only on the loopback: 127.0.0.1, [::1] or localhost)"
	}
	return "must use https (plain http only on the loopback)"
}
