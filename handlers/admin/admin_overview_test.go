package admin_test

import (
	"net/http"
	"testing"

	"github.com/parley/parley/web/webtest"
)

func TestAdminOverview(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	ten := b.OwnedTenant(t, "scale")
	if _, err := b.DB.Pool().Exec(t.Context(), `INSERT INTO corpus_entries (tenant_id, title, content)
		SELECT $1, 'Entry ' || g, 'text' FROM generate_series(1, 1234) g`, ten.ID); err != nil {
		t.Fatal(err)
	}
	c := b.NewAdminClient(t)
	c.SignIn(ten)
	p := c.Get("/admin")
	if p.Status != http.StatusOK {
		t.Fatalf("overview: %d", p.Status)
	}
	if got := p.Text("#corpus-usage"); got != "1,234 / 50,000" {
		t.Errorf("knowledge base usage = %q", got)
	}
	if got := p.Text("#plan"); got != "scale" {
		t.Errorf("plan = %q", got)
	}
}
