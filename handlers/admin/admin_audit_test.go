package admin_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley/db/audit"
	"github.com/parley/parley/web/webtest"
)

// The Activity log page (issue 37): the tenant's entries in words, newest
// first, filtered by who, what and dates, a page of 50 at a time.
func TestAdminAuditPage(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten, other := b.OwnedTenant(t, "starter"), b.OwnedTenant(t, "starter")
	ctx := context.Background()
	// 51 refusals of a token on 1 March, then the owner's sign-in and own
	// change through the dashboard; another tenant's entry is never shown.
	day := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for i := range 51 {
		if err := b.DB.RecordAudit(ctx, audit.Entry{TenantID: ten.ID, At: day.Add(time.Duration(i) * time.Minute),
			Actor: audit.Actor{Kind: audit.ActorToken, ID: "tok-1", Name: "CRM sync"}, Action: audit.ActionAccessDenied, Denied: true,
			Target: "Webhook", Details: map[string]any{"via": "api"}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.DB.RecordAudit(ctx, audit.Entry{TenantID: other.ID, Actor: audit.Actor{Kind: audit.ActorPerson, ID: "x", Name: "stranger@example.com"},
		Action: audit.ActionDeleted, Target: "Someone else's entry"}); err != nil {
		t.Fatal(err)
	}
	c := b.NewAdminClient(t)
	c.SignIn(ten)
	c.Get("/admin/settings/widget-key")
	c.Get("/admin/settings")
	if p := c.Submit("/admin/settings/widget-key", url.Values{"action": {"generate"}}); p.Status != http.StatusSeeOther {
		t.Fatalf("new widget key: %d", p.Status)
	}

	p := c.Get("/admin/audit")
	if p.Status != http.StatusOK {
		t.Fatalf("GET: %d", p.Status)
	}
	rows := p.Doc.Find("#audit-entries tbody tr")
	if rows.Length() != 50 {
		t.Fatalf("%d rows on page 1, want 50", rows.Length())
	}
	first := strings.Join(strings.Fields(rows.First().Text()), " ")
	if !strings.Contains(first, ten.OwnerEmail+" (Person)") || !strings.Contains(first, "Changed settings: Made a new widget key") ||
		!strings.Contains(first, "Widget key") {
		t.Errorf("newest row = %q", first)
	}
	if strings.Contains(p.Body, "stranger@example.com") {
		t.Error("another tenant's entry shown")
	}
	if p.Doc.Find(`nav[aria-label="Main"] a[href="/admin/audit"]`).Length() != 1 {
		t.Error("no navigation link")
	}
	older, ok := p.Doc.Find("#older-entries").Attr("href")
	if !ok || p.Doc.Find("#newest-entries").Length() != 0 {
		t.Fatalf("page 1's links: older %q", older)
	}
	p2 := c.Get(older)
	if n := p2.Doc.Find("#audit-entries tbody tr").Length(); n != 3 || p2.Doc.Find("#older-entries").Length() != 0 ||
		p2.Doc.Find("#newest-entries").Length() != 1 {
		t.Errorf("page 2: %d rows, links %q", n, p2.Text(".pager"))
	}

	t.Run("Filters", func(t *testing.T) {
		c := c.As(t)
		for q, want := range map[string]int{
			"who=person":                        2,
			"who=token:tok-1":                   50,
			"what=settings":                     1,
			"what=access.denied&denied=true":    50,
			"what=token":                        0,
			"from=2026-03-01&to=2026-03-01":     50,
			"from=2026-03-02&to=2026-03-05":     0,
			"who=token:tok-1&from=2026-03-01":   50,
			"who=person&what=settings&denied=":  1,
			"who=person&what=data.exported":     0,
			"from=2026-03-01&to=2026-03-01&x=1": 50,
		} {
			p := c.Get("/admin/audit?" + q)
			if n := p.Doc.Find("#audit-entries tbody tr").Length(); p.Status != http.StatusOK || n != want {
				t.Errorf("%s: %d, %d rows, want %d", q, p.Status, n, want)
			}
		}
		p := c.Get("/admin/audit?who=token:tok-1")
		if v, _ := p.Doc.Find("#who option[selected]").Attr("value"); v != "token:tok-1" || p.Text("#who option[selected]") != "CRM sync (api token)" {
			t.Errorf("who kept as %q %q", v, p.Text("#who option[selected]"))
		}
		older, _ := p.Doc.Find("#older-entries").Attr("href")
		if q, _ := url.Parse(older); q == nil || q.Query().Get("who") != "token:tok-1" {
			t.Errorf("the next page forgets the filter: %q", older)
		}
	})

	t.Run("BadFilters", func(t *testing.T) {
		c := c.As(t)
		for q, field := range map[string]string{"from=soon": "from", "from=2026-03-05&to=2026-03-01": "to", "what=everything": "what",
			"who=robot": "who", "cursor=nope": "from"} {
			p := c.Get("/admin/audit?" + q)
			if p.Status != http.StatusUnprocessableEntity || p.Doc.Find("#"+field+"[aria-invalid=true]").Length() != 1 ||
				p.Doc.Find("#audit-entries").Length() != 0 {
				t.Errorf("%s: %d, %s not marked", q, p.Status, field)
			}
		}
	})
}
