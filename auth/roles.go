package auth

import "slices"

// The roles of a tenant's members (issue 37), from the most to the least
// trusted. Each role holds everything the roles below it hold.
const (
	// RoleOwner holds everything: members, API tokens, webhooks, the plan,
	// deletion of the tenant's data.
	RoleOwner = "owner"
	// RoleAdmin holds the assistant's configuration, knowledge, tools,
	// integrations (but webhooks and tokens) and conversations.
	RoleAdmin = "admin"
	// RoleAgent holds conversations (taking over and replying),
	// submissions and visitors.
	RoleAgent = "agent"
)

// Roles lists the roles, most trusted first.
var Roles = []string{RoleOwner, RoleAdmin, RoleAgent}

// rank orders the roles: a higher rank holds what a lower one holds.
func rank(role string) int {
	switch role {
	case RoleOwner:
		return 3
	case RoleAdmin:
		return 2
	case RoleAgent:
		return 1
	}
	return 0
}

// ValidRole reports whether role is one of Roles.
func ValidRole(role string) bool { return rank(role) > 0 }

// RoleHolds reports whether a member of role may do what needs at least
// role least. An unknown role holds nothing.
func RoleHolds(role, least string) bool {
	return rank(role) > 0 && rank(role) >= rank(least)
}

// agentScopes are the scopes an agent may grant an OAuth client: the
// conversations and visitors, as in the dashboard.
var agentScopes = []string{
	ScopeConversationsRead, ScopeConversationsWrite,
	ScopeVisitorsRead, ScopeVisitorsWrite,
	ScopeMCPConversationsRead, ScopeMCPConversationsWrite, ScopeMCPVisitorsRead,
}

// RoleGrants reports whether a member of role may grant scope to an OAuth
// client: an owner every scope, an admin every scope but the plan's
// (mcp:billing:read) and the audit log's (audit:read), an agent the
// conversations' and visitors'.
func RoleGrants(role, scope string) bool {
	switch role {
	case RoleOwner:
		return true
	case RoleAdmin:
		return scope != ScopeMCPBillingRead && scope != ScopeAuditRead
	case RoleAgent:
		return slices.Contains(agentScopes, scope)
	}
	return false
}
