package auth

import (
	"strings"
	"testing"
)

func TestRoles(t *testing.T) {
	holds := []struct {
		role, least string
		want        bool
	}{
		{RoleOwner, RoleOwner, true}, {RoleOwner, RoleAgent, true},
		{RoleAdmin, RoleOwner, false}, {RoleAdmin, RoleAdmin, true}, {RoleAdmin, RoleAgent, true},
		{RoleAgent, RoleAdmin, false}, {RoleAgent, RoleAgent, true},
		{"", RoleAgent, false}, {"Owner", RoleAgent, false}, {"superuser", RoleAgent, false},
	}
	for _, c := range holds {
		if got := RoleHolds(c.role, c.least); got != c.want {
			t.Errorf("RoleHolds(%q, %q) = %v, want %v", c.role, c.least, got, c.want)
		}
	}
	grants := []struct {
		role, scope string
		want        bool
	}{
		{RoleOwner, ScopeMCPBillingRead, true}, {RoleOwner, ScopeAuditRead, true},
		{RoleAdmin, ScopeAuditRead, false}, {RoleAgent, ScopeAuditRead, false},
		{RoleAdmin, ScopeMCPBillingRead, false}, {RoleAdmin, ScopeSettingsWrite, true},
		{RoleAgent, ScopeConversationsWrite, true}, {RoleAgent, ScopeMCPVisitorsRead, true},
		{RoleAgent, ScopeSettingsRead, false}, {RoleAgent, ScopeCorpusWrite, false},
		{"nobody", ScopeConversationsRead, false},
	}
	for _, c := range grants {
		if got := RoleGrants(c.role, c.scope); got != c.want {
			t.Errorf("RoleGrants(%q, %q) = %v, want %v", c.role, c.scope, got, c.want)
		}
	}
}

func TestNewAccountEmail(t *testing.T) {
	at254 := strings.Repeat("a", 254-len("@example.com")) + "@example.com"
	for email, want := range map[string]bool{
		"ann@example.com": true, at254: true, "x" + at254: false,
		"": false, "ann": false, "ann@localhost": false, "Ann <ann@example.com>": false,
		" ann@example.com": false, "ann@example.com, bob@example.com": false,
	} {
		if got := NewAccountEmail(email); got != want {
			t.Errorf("NewAccountEmail(%q) = %v, want %v", email, got, want)
		}
	}
}
