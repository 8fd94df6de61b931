// Package auth holds credentials: API tokens and their scopes, admin password
// hashing, and the secret box that seals secrets at rest.
package auth

import (
	"slices"
)

// The REST scopes.
const (
	ScopeCorpusRead         = "corpus:read"
	ScopeCorpusWrite        = "corpus:write"
	ScopeSegmentsRead       = "segments:read"
	ScopeSegmentsWrite      = "segments:write"
	ScopeSettingsRead       = "settings:read"
	ScopeSettingsWrite      = "settings:write"
	ScopeStatsRead          = "stats:read"
	ScopeVisitorsRead       = "visitors:read"
	ScopeVisitorsWrite      = "visitors:write"
	ScopeToolsRead          = "tools:read"
	ScopeToolsWrite         = "tools:write"
	ScopeConversationsRead  = "conversations:read"
	ScopeConversationsWrite = "conversations:write"
	// ScopeAuditRead reads the audit log (issue 37): only an owner may
	// grant it (RoleGrants).
	ScopeAuditRead = "audit:read"
)

// RESTScopes lists every REST scope, in the order forms show them.
var RESTScopes = []string{
	ScopeCorpusRead, ScopeCorpusWrite,
	ScopeSegmentsRead, ScopeSegmentsWrite,
	ScopeSettingsRead, ScopeSettingsWrite,
	ScopeStatsRead,
	ScopeVisitorsRead, ScopeVisitorsWrite,
	ScopeToolsRead, ScopeToolsWrite,
	ScopeConversationsRead, ScopeConversationsWrite,
	ScopeAuditRead,
}

// LegacyKeyScopes are the scopes of a legacy plain key when none are chosen.
var LegacyKeyScopes = []string{ScopeStatsRead}

// The MCP server's scopes, one per family of management tools.
const (
	ScopeMCPCorpusRead        = "mcp:corpus:read"
	ScopeMCPCorpusWrite       = "mcp:corpus:write"
	ScopeMCPSegmentsRead      = "mcp:segments:read"
	ScopeMCPSegmentsWrite     = "mcp:segments:write"
	ScopeMCPToolsRead         = "mcp:tools:read"
	ScopeMCPToolsWrite        = "mcp:tools:write"
	ScopeMCPConversationsRead = "mcp:conversations:read"
	// ScopeMCPConversationsWrite answers visitors as a person and moves
	// conversations (take over, hand back, close): not in the spec's list,
	// Parley's own.
	ScopeMCPConversationsWrite = "mcp:conversations:write"
	ScopeMCPVisitorsRead       = "mcp:visitors:read"
	ScopeMCPSettingsRead       = "mcp:settings:read"
	ScopeMCPSettingsWrite      = "mcp:settings:write"
	ScopeMCPBillingRead        = "mcp:billing:read"
)

// MCPScopes lists every MCP scope, in the spec's order.
var MCPScopes = []string{
	ScopeMCPCorpusRead, ScopeMCPCorpusWrite,
	ScopeMCPSegmentsRead, ScopeMCPSegmentsWrite,
	ScopeMCPToolsRead, ScopeMCPToolsWrite,
	ScopeMCPConversationsRead, ScopeMCPVisitorsRead,
	ScopeMCPSettingsRead, ScopeMCPSettingsWrite,
	ScopeMCPBillingRead,
	ScopeMCPConversationsWrite,
}

// mcpFromREST is what each REST scope of an ak_ token grants at the MCP
// server: its namesake, and for the two scopes that read the plan and its
// usage over REST (GET /tenants/{slug} and /stats need settings:read, the
// legacy key's stats:read reads the conversation figures) mcp:billing:read.
var mcpFromREST = map[string][]string{
	ScopeCorpusRead:         {ScopeMCPCorpusRead},
	ScopeCorpusWrite:        {ScopeMCPCorpusWrite},
	ScopeSegmentsRead:       {ScopeMCPSegmentsRead},
	ScopeSegmentsWrite:      {ScopeMCPSegmentsWrite},
	ScopeToolsRead:          {ScopeMCPToolsRead},
	ScopeToolsWrite:         {ScopeMCPToolsWrite},
	ScopeConversationsRead:  {ScopeMCPConversationsRead},
	ScopeConversationsWrite: {ScopeMCPConversationsWrite},
	ScopeVisitorsRead:       {ScopeMCPVisitorsRead},
	ScopeSettingsRead:       {ScopeMCPSettingsRead, ScopeMCPBillingRead},
	ScopeSettingsWrite:      {ScopeMCPSettingsWrite},
	ScopeStatsRead:          {ScopeMCPBillingRead},
}

// MCPScopesOf is what p may do at the MCP server, in MCPScopes' order: its
// mcp:* scopes (an OAuth access token's), and those its REST scopes map to
// (an ak_ token's).
func MCPScopesOf(p Principal) []string {
	var out []string
	for _, s := range MCPScopes {
		granted := slices.Contains(p.Scopes, s)
		for _, rest := range p.Scopes {
			granted = granted || slices.Contains(mcpFromREST[rest], s)
		}
		if granted {
			out = append(out, s)
		}
	}
	return out
}
