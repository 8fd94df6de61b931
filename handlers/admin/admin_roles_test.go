package admin_test

import (
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/web/webtest"
)

// leastRoles is the least role each signed-in route of the dashboard
// needs: the policy, written out here apart from the route table
// (web/routes.go) so that a route given another role, or added without
// one, fails TestRoleRoutes until this table says so.
var leastRoles = map[string]string{
	"GET /admin/audit":                                          "owner",
	"GET /admin/knowledge-gaps":                                 "admin",
	"POST /admin/knowledge-gaps/state":                          "admin",
	"GET /admin/account":                                        "agent",
	"POST /admin/account/password":                              "agent",
	"POST /admin/account/sessions/end-others":                   "agent",
	"POST /admin/account/sessions/:id/end":                      "agent",
	"GET /admin/account/two-factor":                             "agent",
	"POST /admin/account/two-factor":                            "agent",
	"POST /admin/account/two-factor/off":                        "agent",
	"GET /admin/account/recovery-codes":                         "agent",
	"POST /admin/account/recovery-codes":                        "agent",
	"GET /admin/security":                                       "owner",
	"POST /admin/security":                                      "owner",
	"GET /admin":                                                "admin",
	"GET /admin/analytics":                                      "admin",
	"GET /admin/analytics/export":                               "admin",
	"GET /admin/connected-apps":                                 "owner",
	"GET /admin/conversations":                                  "agent",
	"GET /admin/conversations/:id":                              "agent",
	"GET /admin/conversations/:id/live":                         "agent",
	"GET /admin/conversations/attention":                        "agent",
	"GET /admin/conversations/waiting":                          "agent",
	"GET /admin/corpus":                                         "admin",
	"GET /admin/corpus/:id":                                     "admin",
	"GET /admin/corpus/embeddings":                              "admin",
	"GET /admin/corpus/embeddings/status":                       "admin",
	"GET /admin/corpus/new":                                     "admin",
	"GET /admin/corpus/synonyms":                                "admin",
	"GET /admin/integrations":                                   "admin",
	"GET /admin/integrations/calendar":                          "admin",
	"GET /admin/integrations/payments":                          "admin",
	"GET /admin/mcp-tools":                                      "admin",
	"GET /admin/members":                                        "owner",
	"GET /admin/plan":                                           "owner",
	"GET /admin/oauth/consent":                                  "agent",
	"GET /admin/products":                                       "admin",
	"GET /admin/products/:id":                                   "admin",
	"GET /admin/products/new":                                   "admin",
	"GET /admin/segments":                                       "admin",
	"GET /admin/segments/:id":                                   "admin",
	"GET /admin/segments/new":                                   "admin",
	"GET /admin/settings":                                       "admin",
	"GET /admin/settings/developer":                             "admin",
	"GET /admin/settings/team":                                  "admin",
	"GET /admin/settings/widget":                                "admin",
	"GET /admin/submissions":                                    "agent",
	"GET /admin/submissions/:id":                                "agent",
	"GET /admin/submissions/export.csv":                         "admin",
	"GET /admin/test-chat":                                      "admin",
	"GET /admin/script-chat":                                    "admin",
	"GET /admin/tokens":                                         "owner",
	"GET /admin/tools":                                          "admin",
	"GET /admin/tools/:id":                                      "admin",
	"GET /admin/tools/config-fields":                            "admin",
	"GET /admin/tools/new":                                      "admin",
	"GET /admin/visitors":                                       "agent",
	"GET /admin/visitors/:id":                                   "agent",
	"GET /admin/voice":                                          "admin",
	"GET /admin/voice/calls/:callId/recording":                  "agent",
	"GET /admin/webhooks":                                       "owner",
	"GET /admin/webhooks/:id":                                   "owner",
	"GET /admin/webhooks/:id/test/:deliveryId":                  "owner",
	"POST /admin/connected-apps/:client/revoke":                 "owner",
	"POST /admin/conversations/:id/draft":                       "agent",
	"POST /admin/conversations/:id/reply":                       "agent",
	"POST /admin/conversations/:id/state":                       "agent",
	"POST /admin/conversations/:id/typing":                      "agent",
	"POST /admin/corpus":                                        "admin",
	"POST /admin/corpus/:id":                                    "admin",
	"POST /admin/corpus/:id/delete":                             "admin",
	"POST /admin/corpus/embeddings":                             "admin",
	"POST /admin/corpus/embeddings/delete":                      "admin",
	"POST /admin/corpus/import":                                 "admin",
	"POST /admin/corpus/sync":                                   "admin",
	"POST /admin/corpus/synonyms":                               "admin",
	"POST /admin/corpus/synonyms/:id":                           "admin",
	"POST /admin/corpus/synonyms/:id/delete":                    "admin",
	"POST /admin/integrations/calendar":                         "admin",
	"POST /admin/integrations/calendar/delete":                  "admin",
	"POST /admin/integrations/calendar/test":                    "admin",
	"POST /admin/integrations/context-webhook/test":             "admin",
	"POST /admin/integrations/payments":                         "admin",
	"POST /admin/integrations/payments/delete":                  "admin",
	"POST /admin/integrations/payments/test":                    "admin",
	"POST /admin/logout":                                        "agent",
	"POST /admin/mcp-tools":                                     "admin",
	"POST /admin/mcp-tools/delete":                              "admin",
	"POST /admin/mcp-tools/discover":                            "admin",
	"POST /admin/members":                                       "owner",
	"POST /admin/members/:id/remove":                            "owner",
	"POST /admin/members/:id/role":                              "owner",
	"POST /admin/members/invitations/:id/renew":                 "owner",
	"POST /admin/members/invitations/:id/revoke":                "owner",
	"POST /admin/oauth/consent":                                 "agent",
	"POST /admin/products":                                      "admin",
	"POST /admin/products/:id":                                  "admin",
	"POST /admin/products/:id/delete":                           "admin",
	"POST /admin/segments":                                      "admin",
	"POST /admin/segments/:id":                                  "admin",
	"POST /admin/segments/:id/delete":                           "admin",
	"POST /admin/settings":                                      "admin",
	"POST /admin/settings/avatar":                               "admin",
	"POST /admin/settings/developer":                            "admin",
	"POST /admin/settings/team":                                 "admin",
	"POST /admin/settings/visitor-signing-key":                  "owner",
	"POST /admin/settings/widget":                               "admin",
	"POST /admin/settings/widget-key":                           "admin",
	"POST /admin/refused-origins/:id/allow":                     "admin",
	"POST /admin/refused-origins/:id/dismiss":                   "admin",
	"POST /admin/submissions/:id/delete":                        "owner",
	"POST /admin/submissions/:id/status":                        "agent",
	"POST /admin/tenant":                                        "agent",
	"POST /admin/test-chat":                                     "admin",
	"GET /admin/tests":                                          "admin",
	"POST /admin/tests":                                         "admin",
	"POST /admin/tests/run":                                     "admin",
	"GET /admin/tests/runs/:id":                                 "admin",
	"GET /admin/tests/:id":                                      "admin",
	"POST /admin/tests/:id":                                     "admin",
	"POST /admin/tests/:id/delete":                              "admin",
	"POST /admin/tokens":                                        "owner",
	"POST /admin/tokens/:id/revoke":                             "owner",
	"POST /admin/tools":                                         "admin",
	"POST /admin/tools/:id":                                     "admin",
	"POST /admin/tools/:id/delete":                              "admin",
	"POST /admin/visitors/:id":                                  "agent",
	"POST /admin/visitors/:id/erase":                            "owner",
	"POST /admin/visitors/:id/memory":                           "agent",
	"POST /admin/visitors/:id/memory/:key/delete":               "agent",
	"POST /admin/voice":                                         "admin",
	"POST /admin/voice/link":                                    "admin",
	"POST /admin/voice/setup":                                   "admin",
	"POST /admin/webhooks":                                      "owner",
	"POST /admin/webhooks/:id":                                  "owner",
	"POST /admin/webhooks/:id/delete":                           "owner",
	"POST /admin/webhooks/:id/deliveries/:deliveryId/redeliver": "owner",
	"POST /admin/webhooks/:id/enabled":                          "owner",
	"POST /admin/webhooks/:id/secret":                           "owner",
	"POST /admin/webhooks/:id/test":                             "owner",

	// "Improve this answer" writes the knowledge base: an admin's.
	"GET /admin/conversations/:id/messages/:messageId/correction":  "admin",
	"POST /admin/conversations/:id/messages/:messageId/correction": "admin",
}

// publicAdminRoutes are the dashboard's routes before signing in.
var publicAdminRoutes = map[string]bool{
	"GET /admin/login": true, "POST /admin/login": true,
	"GET /admin/forgot-password": true, "POST /admin/forgot-password": true,
	"GET /admin/reset-password": true, "POST /admin/reset-password": true,
	"GET /admin/invitation": true, "POST /admin/invitation": true,
	"GET /admin/login/code": true, "POST /admin/login/code": true,
	"GET /admin/signup": true, "POST /admin/signup": true, "GET /admin/signup/sent": true,
	"GET /admin/signup/confirm": true, "POST /admin/signup/confirm": true,
}

var routeParam = regexp.MustCompile(`:[A-Za-z]+`)

// TestRoleRoutes walks every route of the dashboard with every role: a
// role that does not hold the route's least role is refused with 403 (an
// agent's home sends them to the conversations), one that does is not.
func TestRoleRoutes(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	ten := b.OwnedTenant(t, "scale")
	var routes []string
	for _, r := range b.Srv.Echo.Routes() {
		key := r.Method + " " + r.Path
		if !strings.HasPrefix(r.Path, "/admin") || publicAdminRoutes[key] || (r.Method != http.MethodGet && r.Method != http.MethodPost) {
			continue
		}
		if _, ok := leastRoles[key]; !ok {
			t.Errorf("%s has no least role in leastRoles: decide who may use it", key)
			continue
		}
		routes = append(routes, key)
	}
	sort.Strings(routes)
	for key := range leastRoles {
		found := false
		for _, r := range routes {
			found = found || r == key
		}
		if !found {
			t.Errorf("leastRoles names %s, which is not a route", key)
		}
	}
	clients := map[string]*webtest.AdminClient{}
	owner := b.NewAdminClient(t)
	owner.SignIn(ten)
	clients[auth.RoleOwner] = owner
	for _, role := range []string{auth.RoleAdmin, auth.RoleAgent} {
		m := b.AddMember(t, ten, role)
		c := b.NewAdminClient(t)
		c.SignInAs(m)
		clients[role] = c
	}
	const missing = "00000000-0000-4000-8000-000000000000"
	for _, role := range auth.Roles {
		t.Run(role, func(t *testing.T) {
			t.Parallel()
			c := clients[role].As(t)
			c.Get("/admin/conversations")
			// Signing out goes last: it ends the session the walk uses.
			walk := append(slices.DeleteFunc(slices.Clone(routes), func(r string) bool { return r == "POST /admin/logout" }), "POST /admin/logout")
			for _, key := range walk {
				method, path, _ := strings.Cut(key, " ")
				path = routeParam.ReplaceAllString(path, missing)
				var p webtest.AdminPage
				if method == http.MethodGet {
					p = c.Get(path)
				} else {
					p = c.Submit(path, url.Values{})
				}
				allowed := auth.RoleHolds(role, leastRoles[key])
				switch {
				case key == "GET /admin" && role == auth.RoleAgent:
					if p.Status != http.StatusSeeOther || p.Location() != "/admin/conversations" {
						t.Errorf("%s as %s: %d %q, want the conversations", key, role, p.Status, p.Location())
					}
				case allowed && p.Status == http.StatusForbidden:
					t.Errorf("%s as %s: refused, but the role holds %s", key, role, leastRoles[key])
				case !allowed && p.Status != http.StatusForbidden:
					t.Errorf("%s as %s: %d, want 403 (it needs %s)", key, role, p.Status, leastRoles[key])
				case p.Status >= 500 && p.Status != http.StatusServiceUnavailable: // 503: an outside service this test has none of
					t.Errorf("%s as %s: %d", key, role, p.Status)
				}
			}
		})
	}
}
