package admin_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/parley/parley/web/webtest"
)

// The knowledge-base page shows, per active segment, what the agent is given
// of the knowledge base and which entries do not fit its prompt.
func TestAdminCorpusBudget(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	ten := b.OwnedTenant(t, "builder")
	base := "/tenants/" + ten.Slug
	b.MustDo(t, 201, "POST", base+"/segments", ten.Token, map[string]any{"slug": "pros", "name": "Professionals", "systemPrompt": "p"})
	b.MustDo(t, 201, "POST", base+"/segments", ten.Token, map[string]any{"slug": "old", "name": "Archive", "systemPrompt": "p"})
	b.MustDo(t, 200, "PATCH", base+"/segments/old", ten.Token, map[string]any{"isActive": false})
	// Three long entries for every segment: two fit the 24,000 characters,
	// the third (lowest priority) does not.
	for i, title := range []string{"Catalogue", "Terms", "History"} {
		b.MustDo(t, 201, "POST", base+"/corpus", ten.Token, map[string]any{"title": title,
			"content": strings.Repeat("word ", 2300), "priority": 90 - 10*i})
	}
	b.MustDo(t, 201, "POST", base+"/corpus", ten.Token, map[string]any{"title": "Manual", "summary": "How to use the product.",
		"content": "The full manual.", "segment": "pros"})

	c := b.NewAdminClient(t)
	c.SignIn(ten)
	p := c.Get("/admin/corpus")
	if p.Status != http.StatusOK {
		t.Fatalf("GET /admin/corpus: %d", p.Status)
	}
	rows := map[string]*goquery.Selection{}
	p.Doc.Find("#prompt-budget .budget-row").Each(func(_ int, s *goquery.Selection) {
		name, _ := s.Attr("data-segment")
		rows[name] = s
	})
	if len(rows) != 2 || rows["Archive"] != nil {
		t.Fatalf("budget rows %v, want the two active segments", len(rows))
	}
	for _, seg := range []string{"Default", "Professionals"} {
		r := rows[seg]
		if r == nil {
			var names []string
			for n := range rows {
				names = append(names, n)
			}
			t.Fatalf("no row for %q: %v", seg, names)
		}
		if got := r.Find(".budget-whole").Text(); got != "2" {
			t.Errorf("%s: %s given whole, want 2", seg, got)
		}
		if got := r.Find(".budget-left-out").Text(); !strings.Contains(got, "Unknown to the agent: History") || strings.Contains(got, "Catalogue") {
			t.Errorf("%s: left out %q, want History alone", seg, got)
		}
	}
	if got := rows["Professionals"].Find(".budget-summarized").Text(); got != "1" {
		t.Errorf("Professionals: %s by summary, want 1", got)
	}
	if got := rows["Default"].Find(".budget-summarized").Text(); got != "0" {
		t.Errorf("Default: %s by summary, want 0", got)
	}
	if p.Text("#budget-advice") == "" {
		t.Error("no advice shown for the entry left out")
	}

	// Raising History's priority brings it in and leaves Terms out.
	var id string
	if err := b.DB.Pool().QueryRow(t.Context(), `SELECT id FROM corpus_entries WHERE tenant_id = $1 AND title = 'History'`, ten.ID).Scan(&id); err != nil {
		t.Fatal(err)
	}
	b.MustDo(t, 200, "PATCH", base+"/corpus/"+id, ten.Token, map[string]any{"priority": 100})
	p = c.Get("/admin/corpus")
	if got := p.Text(`#prompt-budget .budget-row[data-segment="Default"] .budget-left-out`); !strings.Contains(got, "Terms") || strings.Contains(got, "History") {
		t.Errorf("after raising History: left out %q, want Terms", got)
	}
}
