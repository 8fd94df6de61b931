package admin_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/parley/parley/web/webtest"
)

// TestTokensCurlCommand: the command shown with a new token calls a GET
// the token's scopes allow, the first of settings, the knowledge base,
// conversations...; a token that only writes gets no command but the way
// to the reference. Either way the page links to /docs.
func TestTokensCurlCommand(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	ten := b.OwnedTenant(t, "starter")
	c := b.NewAdminClient(t)
	c.SignIn(ten)
	for _, tc := range []struct {
		name   string
		scopes []string
		path   string // "" for no command
	}{
		{"Settings", []string{"corpus:read", "settings:read"}, "/tenants/" + ten.Slug},
		{"KnowledgeBase", []string{"visitors:read", "corpus:read", "corpus:write"}, "/tenants/" + ten.Slug + "/corpus"},
		{"Analytics", []string{"stats:read"}, "/tenants/" + ten.Slug + "/conversations/stats"},
		{"WritesOnly", []string{"corpus:write", "settings:write"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.Get("/admin/tokens")
			if p := c.Submit("/admin/tokens", url.Values{"name": {tc.name}, "scopes": tc.scopes}); p.Status != http.StatusSeeOther {
				t.Fatalf("creating the token: %d", p.Status)
			}
			p := c.Get("/admin/tokens")
			token := p.Text("#new-token")
			if p.Doc.Find(`main a[href="/docs"]`).Length() == 0 {
				t.Error("no link to the API reference")
			}
			curl := p.Text("#new-token-curl")
			if tc.path == "" {
				if curl != "" || !strings.Contains(p.Text(".token-once"), "can only make changes") {
					t.Errorf("a token that only writes: command %q, box %q", curl, p.Text(".token-once"))
				}
				return
			}
			if want := `curl -H "Authorization: Bearer ` + token + `" ` + b.Srv.Config.BaseURL + tc.path; !strings.HasPrefix(token, "ak_") || curl != want {
				t.Errorf("command = %q, want %q", curl, want)
			}
			if status, body := b.Do(t, "GET", tc.path, token, nil); status != http.StatusOK {
				t.Errorf("GET %s with the new token: %d %v", tc.path, status, body)
			}
		})
	}
}
