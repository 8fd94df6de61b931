package web

import (
	"net/http"
	"testing"
)

func TestAdminOverview(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t, nil)
	ten := b.ownedTenant(t, "scale")
	if _, err := b.db.Pool().Exec(t.Context(), `INSERT INTO corpus_entries (tenant_id, title, content)
		SELECT $1, 'Entry ' || g, 'text' FROM generate_series(1, 1234) g`, ten.ID); err != nil {
		t.Fatal(err)
	}
	c := b.newAdminClient(t)
	c.signIn(ten)
	p := c.get("/admin")
	if p.status != http.StatusOK {
		t.Fatalf("overview: %d", p.status)
	}
	if got := p.text("#corpus-usage"); got != "1,234 / 50,000" {
		t.Errorf("knowledge base usage = %q", got)
	}
	if got := p.text("#plan"); got != "scale" {
		t.Errorf("plan = %q", got)
	}
}
