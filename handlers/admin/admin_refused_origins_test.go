package admin_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/parley/parley"
	"github.com/parley/parley/web/webtest"
)

// refuseFrom asks for ten's widget settings from a page of origin, which
// the tenant's allowed domains refuse.
func refuseFrom(t *testing.T, b *webtest.Bundle, ten webtest.Tenant, origin string) {
	t.Helper()
	if resp, body, _ := b.GetWidgetSettings(t, "/chat/"+ten.Slug+"/widget", map[string]string{"Origin": origin}); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("settings from %s: %d %v, want 403", origin, resp.StatusCode, body)
	}
}

// refusedID is the id of ten's refused origin, "" when it is not listed.
func refusedID(t *testing.T, b *webtest.Bundle, ten webtest.Tenant, origin string) string {
	t.Helper()
	list, err := b.DB.RefusedOrigins(t.Context(), ten.ID, time.Time{})
	webtest.MustStep(t, "listing the refused origins", err)
	for _, r := range list {
		if r.Origin == origin {
			return r.ID
		}
	}
	return ""
}

// TestRefusedOriginsOverview: the overview lists the sites the widget was
// refused on in the last 30 days, the tenant's own only; "Allow this site"
// adds the site to the allowed domains (recorded in the audit log), after
// which the widget loads there, and "Dismiss" forgets a site; another
// tenant's site is 404 to both; at the allowed domains' limit, allowing
// says so and changes nothing.
func TestRefusedOriginsOverview(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	b.AtItsAddress()
	ten := b.OwnedTenant(t, "starter")
	other := b.OwnedTenant(t, "starter")
	for _, x := range []webtest.Tenant{ten, other} {
		if st, body := b.Do(t, "PUT", "/tenants/"+x.Slug, x.Token, map[string]any{"allowedDomains": []string{"shop.example.com"}}); st != 200 {
			t.Fatalf("allowedDomains: %d %v", st, body)
		}
	}
	const site, stranger, otherSite = "http://127.0.0.1:5555", "https://copycat.example", "https://other-tenant.example"
	refuseFrom(t, b, ten, site)
	refuseFrom(t, b, ten, "HTTPS://Copycat.Example:443")
	refuseFrom(t, b, other, otherSite)
	// A site refused long ago is not listed.
	if err := b.DB.NoteRefusedOrigin(t.Context(), ten.ID, "https://old.example", 3, b.Srv.Base.Clock().AddDate(0, 0, -31)); err != nil {
		t.Fatal(err)
	}

	c := b.NewAdminClient(t)
	c.SignIn(ten)
	p := c.Get("/admin")
	var listed []string
	p.Doc.Find("#refused-site-list .refused-origin").Each(func(_ int, s *goquery.Selection) { listed = append(listed, strings.TrimSpace(s.Text())) })
	slices.Sort(listed)
	if want := []string{site, stranger}; !slices.Equal(listed, want) {
		t.Fatalf("overview lists %v, want %v", listed, want)
	}
	if got := p.Text("#refused-" + refusedID(t, b, ten, site) + " td:nth-child(2)"); got != "1 time" {
		t.Errorf("refusals shown = %q", got)
	}

	otherID := refusedID(t, b, other, otherSite)
	c.ExpectNotFound(t, []webtest.AdminCall{
		{Name: "AllowOthers", Method: "POST", Path: "/admin/refused-origins/" + otherID + "/allow", Form: url.Values{}},
		{Name: "DismissOthers", Method: "POST", Path: "/admin/refused-origins/" + otherID + "/dismiss", Form: url.Values{}},
		{Name: "AllowNoID", Method: "POST", Path: "/admin/refused-origins/nope/allow", Form: url.Values{}},
	})
	if refusedID(t, b, other, otherSite) == "" {
		t.Fatal("another tenant's site was forgotten")
	}

	// A chat message from the site, refused, leaves the tenant's
	// configuration in the chat's cache.
	chat := func() int {
		t.Helper()
		return b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "When are you open?", "sessionId": "refused-site"},
			map[string]string{"Origin": site, "X-Agent-Model": "test"}).Status
	}
	if st := chat(); st != http.StatusForbidden {
		t.Fatalf("chat from the refused site: %d", st)
	}

	// Allow: the site joins the allowed domains and leaves the list; the
	// widget's settings load from it, and the chat (its cache renewed by
	// the change) answers it.
	c.Get("/admin")
	p = c.Submit("/admin/refused-origins/"+refusedID(t, b, ten, site)+"/allow", url.Values{})
	if p.Status != http.StatusSeeOther || p.Location() != "/admin#refused-sites" {
		t.Fatalf("allow: %d to %q", p.Status, p.Location())
	}
	if got := b.TenantNow(t, ten.Slug).AllowedDomains; !slices.Equal(got, []string{"shop.example.com", "127.0.0.1:5555"}) {
		t.Errorf("allowed domains = %v", got)
	}
	p = c.Get("/admin")
	if got := p.Text(".flash.ok"); got != site+" is allowed: its visitors see your chat now." {
		t.Errorf("flash = %q", got)
	}
	if p.Doc.Find("#refused-site-list .refused-origin").Length() != 1 || refusedID(t, b, ten, site) != "" {
		t.Errorf("the allowed site is still listed")
	}
	if resp, body, _ := b.GetWidgetSettings(t, "/chat/"+ten.Slug+"/widget", map[string]string{"Origin": site}); resp.StatusCode != http.StatusOK {
		t.Errorf("settings from the allowed site: %d %v", resp.StatusCode, body)
	}
	if st := chat(); st != http.StatusOK {
		t.Errorf("chat from the allowed site: %d", st)
	}
	if n := b.Count(t, `SELECT count(*) FROM audit_log WHERE tenant_id = $1 AND action = 'settings.changed'
		AND target = 'Allowed domains' AND details->>'change' = $2`, ten.ID, "Allowed "+site); n != 1 {
		t.Errorf("%d audit entries of the allowed site, want 1", n)
	}

	// At the limit: said in words, nothing changes, nothing is recorded.
	full := make([]string, parley.MaxDomains)
	for i := range full {
		full[i] = fmt.Sprintf("site%d.example.com", i)
	}
	if st, body := b.Do(t, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"allowedDomains": full}); st != 200 {
		t.Fatalf("allowedDomains: %d %v", st, body)
	}
	c.Get("/admin")
	p = c.Submit("/admin/refused-origins/"+refusedID(t, b, ten, stranger)+"/allow", url.Values{})
	if p.Status != http.StatusSeeOther {
		t.Fatalf("allow at the limit: %d", p.Status)
	}
	p = c.Get("/admin")
	if got := p.Text(".flash.error"); !strings.Contains(got, "Your allowed domains are full (100 of 100)") || !strings.Contains(got, stranger) {
		t.Errorf("flash at the limit = %q", got)
	}
	if got := b.TenantNow(t, ten.Slug).AllowedDomains; len(got) != parley.MaxDomains || refusedID(t, b, ten, stranger) == "" {
		t.Errorf("at the limit: %d allowed domains, the site listed: %v", len(got), refusedID(t, b, ten, stranger) != "")
	}
	if n := b.Count(t, `SELECT count(*) FROM audit_log WHERE tenant_id = $1 AND target = 'Allowed domains'`, ten.ID); n != 1 {
		t.Errorf("%d audit entries after a refused allow, want the first only", n)
	}

	// Dismiss: forgotten, the allowed domains unchanged.
	p = c.Submit("/admin/refused-origins/"+refusedID(t, b, ten, stranger)+"/dismiss", url.Values{})
	if p.Status != http.StatusSeeOther || refusedID(t, b, ten, stranger) != "" {
		t.Errorf("dismiss: %d, the site still there: %v", p.Status, refusedID(t, b, ten, stranger) != "")
	}
	if got := b.TenantNow(t, ten.Slug).AllowedDomains; len(got) != parley.MaxDomains {
		t.Errorf("dismiss changed the allowed domains: %d", len(got))
	}
	if p = c.Get("/admin"); p.Doc.Find("#refused-sites").Length() != 0 {
		t.Errorf("an empty list still shows its card")
	}
}
