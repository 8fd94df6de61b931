// Package auth holds credentials: API tokens and their scopes, admin password
// hashing, and the secret box that seals secrets at rest.
package auth

import (
	"fmt"
	"slices"
	"strings"
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
}

// LegacyKeyScopes are the scopes of a legacy plain key when none are chosen.
var LegacyKeyScopes = []string{ScopeStatsRead}

// ParseScopes splits a comma- or space-separated list, drops duplicates and
// refuses unknown scopes.
func ParseScopes(s string) ([]string, error) {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
	return CheckScopes(fields)
}

// CheckScopes refuses unknown scopes and an empty list, and returns the
// scopes in canonical order without duplicates.
func CheckScopes(scopes []string) ([]string, error) {
	for _, s := range scopes {
		if !slices.Contains(RESTScopes, s) {
			return nil, fmt.Errorf("unknown scope %q (known: %s)", s, strings.Join(RESTScopes, ", "))
		}
	}
	var out []string
	for _, s := range RESTScopes {
		if slices.Contains(scopes, s) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("at least one scope is required")
	}
	return out, nil
}
