// Package views holds the admin dashboard's templ components and the small
// view models they render.
package views

import "strings"

// Page is what the layout needs on every admin page.
type Page struct {
	Title      string
	Active     string // key of the nav item to highlight
	UserEmail  string
	TenantSlug string
	TenantName string
	Tenants    []TenantOption
	CSRF       string
	Flash      string
	FlashError string
	// Nav is the areas the signed-in person's role may use (dash.Page
	// picks them from Nav); Role is that role.
	Nav  []NavItem
	Role string
	// Held are the roles the person's role holds (auth.RoleHolds, which
	// dash.Page asks).
	Held map[string]bool
}

// Holds reports whether the signed-in person's role holds least: a page
// shows the actions of a higher role to nobody who would be refused them.
func (p Page) Holds(least string) bool { return p.Held[least] }

// TenantOption is one tenant the signed-in user may switch to.
type TenantOption struct {
	Slug, Name string
	Current    bool
}

// NavItem is one area of the dashboard, and the least role that uses it
// (the route table of web gives its routes that role).
type NavItem struct {
	Key, Label, Href string
	Role             string
}

// The roles, as the navigation names them (auth's).
const (
	roleOwner = "owner"
	roleAdmin = "admin"
	roleAgent = "agent"
)

// Nav lists the areas that exist, in order.
var Nav = []NavItem{
	{Key: "overview", Label: "Overview", Href: "/admin", Role: roleAdmin},
	{Key: "conversations", Label: "Conversations", Href: "/admin/conversations", Role: roleAgent},
	{Key: "analytics", Label: "Analytics", Href: "/admin/analytics", Role: roleAdmin},
	{Key: "submissions", Label: "Submissions", Href: "/admin/submissions", Role: roleAgent},
	{Key: "segments", Label: "Segments", Href: "/admin/segments", Role: roleAdmin},
	{Key: "corpus", Label: "Knowledge base", Href: "/admin/corpus", Role: roleAdmin},
	{Key: "test-chat", Label: "Test chat", Href: "/admin/test-chat", Role: roleAdmin},
	{Key: "tools", Label: "Tools", Href: "/admin/tools", Role: roleAdmin},
	{Key: "products", Label: "Products", Href: "/admin/products", Role: roleAdmin},
	{Key: "visitors", Label: "Visitors", Href: "/admin/visitors", Role: roleAgent},
	{Key: "integrations", Label: "Integrations", Href: "/admin/integrations", Role: roleAdmin},
	{Key: "voice", Label: "Voice", Href: "/admin/voice", Role: roleAdmin},
	{Key: "webhooks", Label: "Webhooks", Href: "/admin/webhooks", Role: roleOwner},
	{Key: "settings", Label: "Settings", Href: "/admin/settings", Role: roleAdmin},
	{Key: "members", Label: "Team", Href: "/admin/members", Role: roleOwner},
	{Key: "tokens", Label: "API tokens", Href: "/admin/tokens", Role: roleOwner},
	{Key: "connected-apps", Label: "Connected apps", Href: "/admin/connected-apps", Role: roleOwner},
	{Key: "plan", Label: "Plan and usage", Href: "/admin/plan", Role: roleOwner},
	{Key: "security", Label: "Sign-in security", Href: "/admin/security", Role: roleOwner},
	{Key: "account", Label: "Your account", Href: "/admin/account", Role: roleAgent},
	{Key: "audit", Label: "Activity log", Href: "/admin/audit", Role: roleOwner},
}

// Option is a choice of a select.
type Option struct {
	Value, Label string
}

// Errors maps a form field name to its message.
type Errors map[string]string

// safeColor returns c when it is a #RRGGBB colour, else transparent, so that a
// rejected value never reaches a style attribute.
func safeColor(c string) string {
	if len(c) != 7 || c[0] != '#' {
		return "transparent"
	}
	for _, r := range c[1:] {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F') {
			return "transparent"
		}
	}
	return c
}

// Count writes n with its noun in the right number and comma separators:
// "1 entry", "2 entries", "1,000 entries".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return thousands(n) + " " + many
}

// pickerValue is a colour picker's value for c: c in lower case when it is
// a #RRGGBB colour (the only form a picker takes), else fallback.
func pickerValue(c, fallback string) string {
	if safeColor(c) == "transparent" {
		return fallback
	}
	return strings.ToLower(c)
}
