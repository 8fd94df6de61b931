package knowledge_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/db/dbtest"
)

// Synonym groups: stored per tenant, checked, limited, and read with the
// prompt's data; a question holding one term of a group finds the entries
// that use another (issue 34).
func TestSynonyms(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := dbtest.SetupPromptCorpus(t)
	other := dbtest.NewTenant(t, f.Store)
	kind := func(err error) parley.Kind {
		var e *parley.Error
		if errors.As(err, &e) {
			return e.Kind
		}
		return -1
	}
	// The terms come clean (manage.CreateSynonyms cleans and checks them).
	g, err := f.Store.CreateSynonyms(ctx, f.Tenant.ID, []string{"bike", "bicycle", "push bike"})
	if err != nil || !slices.Equal(g.Terms, []string{"bike", "bicycle", "push bike"}) {
		t.Fatalf("create: %+v, %v", g, err)
	}
	if _, err := f.Store.GetSynonyms(ctx, other.ID, g.ID); kind(err) != parley.KindNotFound {
		t.Errorf("another tenant's group: %v", err)
	}
	if _, err := f.Store.UpdateSynonyms(ctx, other.ID, g.ID, []string{"a", "b"}); kind(err) != parley.KindNotFound {
		t.Errorf("another tenant's update: %v", err)
	}
	if err := f.Store.DeleteSynonyms(ctx, other.ID, g.ID); kind(err) != parley.KindNotFound {
		t.Errorf("another tenant's delete: %v", err)
	}
	if err := f.Store.DeleteSynonyms(ctx, f.Tenant.ID, "not-a-uuid"); kind(err) != parley.KindNotFound {
		t.Errorf("malformed id: %v", err)
	}
	if g, err = f.Store.UpdateSynonyms(ctx, f.Tenant.ID, g.ID, []string{"bike", "bicycle"}); err != nil || len(g.Terms) != 2 {
		t.Fatalf("update: %+v, %v", g, err)
	}

	// The search: "rent a bike" finds "Bicycle rental" through the group.
	if _, err := f.Store.Pool().Exec(ctx, `INSERT INTO corpus_entries (tenant_id, title, content, locale) VALUES
		($1, 'Bicycle hire', 'City bicycles by the day or the week.', 'en'),
		($1, 'Opening hours', 'Open from nine to six.', 'en')`, f.Tenant.ID); err != nil {
		t.Fatal(err)
	}
	data, err := f.Store.PromptData(ctx, f.Tenant.ID, "", "", "", 200)
	if err != nil || len(data.Synonyms) != 1 || !slices.Equal(data.Synonyms[0], []string{"bike", "bicycle"}) {
		t.Fatalf("prompt data synonyms: %v, %v", data.Synonyms, err)
	}
	got, err := f.Store.ExploreCorpus(ctx, f.Tenant.ID, "", "", "a bike", data.Synonyms, 3)
	if err != nil || len(got) == 0 || got[0].Title != "Bicycle hire" {
		t.Errorf("with the group: %q, %v", dbtest.Titles(got), err)
	}
	if got, _ := f.Store.ExploreCorpus(ctx, f.Tenant.ID, "", "", "a bike", nil, 3); len(got) != 0 {
		t.Errorf("without the group: %q", dbtest.Titles(got))
	}
	if d, _ := f.Store.PromptData(ctx, other.ID, "", "", "", 200); len(d.Synonyms) != 0 {
		t.Errorf("another tenant's prompt data holds synonyms: %v", d.Synonyms)
	}

	// The limit: 500 groups, under the tenant's lock.
	if _, err := f.Store.Pool().Exec(ctx, `INSERT INTO corpus_synonyms (tenant_id, terms)
		SELECT $1, ARRAY['a' || g, 'b' || g] FROM generate_series(2, $2) g`, f.Tenant.ID, parley.MaxSynonymGroups); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Store.CreateSynonyms(ctx, f.Tenant.ID, []string{"x", "y"}); kind(err) != parley.KindRateLimited {
		t.Errorf("group %d: %v", parley.MaxSynonymGroups+1, err)
	}
	if err := f.Store.DeleteSynonyms(ctx, f.Tenant.ID, g.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Store.CreateSynonyms(ctx, f.Tenant.ID, []string{"x", "y"}); err != nil {
		t.Errorf("group %d after a delete: %v", parley.MaxSynonymGroups, err)
	}
	list, err := f.Store.ListSynonyms(ctx, f.Tenant.ID)
	if err != nil || len(list) != parley.MaxSynonymGroups {
		t.Errorf("list: %d, %v", len(list), err)
	}
}
