package knowledge_test

import (
	"context"
	"slices"
	"testing"

	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/db/knowledge"
)

// A tenant's lexicon is built in the background from its active entries,
// is stale again once its corpus moves, and lets the question search read a
// typo as the word the entries use (issue 34).
func TestCorpusLexicon(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := dbtest.SetupPromptCorpus(t)
	other := dbtest.NewTenant(t, f.Store)
	add := func(tenantID, title, content string, active bool) {
		t.Helper()
		if _, err := f.Store.Pool().Exec(ctx, `INSERT INTO corpus_entries (tenant_id, title, content, locale, is_active) VALUES ($1, $2, $3, 'en', $4)`,
			tenantID, title, content, active); err != nil {
			t.Fatal(err)
		}
	}
	add(f.Tenant.ID, "Puncture repair", "We fix a flat tyre while you wait: a new inner tube, fitted and checked, for 15 euros.", true)
	add(f.Tenant.ID, "Opening hours", "The workshop is open from nine to six, Monday to Saturday.", true)
	add(f.Tenant.ID, "Old tariff", "Puncture repair used to cost 12 euros.", false)
	add(other.ID, "Tyre storage", "We keep your winter tyres.", true)

	stale := func() []string {
		t.Helper()
		ids, err := f.Store.StaleCorpusLexicons(ctx, 10_000)
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	if s := stale(); !slices.Contains(s, f.Tenant.ID) || !slices.Contains(s, other.ID) {
		t.Fatalf("tenants with entries and no lexicon are not stale: %v", s)
	}
	// A typo finds nothing before the lexicon is built.
	typo := "punctre repiar"
	if got, err := f.Store.ExploreCorpus(ctx, f.Tenant.ID, "", "", typo, nil, 3); err != nil || len(got) != 0 {
		t.Fatalf("without a lexicon: %q, %v", dbtest.Titles(got), err)
	}
	if err := f.Store.RefreshCorpusLexicon(ctx, f.Tenant.ID); err != nil {
		t.Fatal(err)
	}
	if s := stale(); slices.Contains(s, f.Tenant.ID) || !slices.Contains(s, other.ID) {
		t.Fatalf("after the refresh of one tenant: %v", s)
	}
	lexicon := func(tenantID string) map[string]int {
		t.Helper()
		rows, err := f.Store.Pool().Query(ctx, `SELECT lexeme, ndoc FROM corpus_lexicon WHERE tenant_id = $1`, tenantID)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]int{}
		for rows.Next() {
			var w string
			var n int
			if err := rows.Scan(&w, &n); err != nil {
				t.Fatal(err)
			}
			out[w] = n
		}
		return out
	}
	lex := lexicon(f.Tenant.ID)
	if lex["punctur"] != 1 || lex["open"] != 1 || lex["tariff"] != 0 || lex["winter"] != 0 {
		t.Errorf("lexicon of the active entries of the tenant only: %v", lex)
	}
	if len(lexicon(other.ID)) != 0 {
		t.Error("another tenant's lexicon was built")
	}
	got, err := f.Store.ExploreCorpus(ctx, f.Tenant.ID, "", "", typo, nil, 3)
	if err != nil || len(got) == 0 || got[0].Title != "Puncture repair" {
		t.Errorf("%q with a lexicon: %q, %v", typo, dbtest.Titles(got), err)
	}
	// A word far from every word of the entries is no typo.
	if got, _ := f.Store.ExploreCorpus(ctx, f.Tenant.ID, "", "", "xylophone", nil, 3); len(got) != 0 {
		t.Errorf("xylophone: %q", dbtest.Titles(got))
	}
	// The corpus moves: the lexicon is stale again until rebuilt.
	add(f.Tenant.ID, "Saddle fitting", "A saddle adjusted to your sit bones.", true)
	if !slices.Contains(stale(), f.Tenant.ID) {
		t.Error("a new entry left the lexicon fresh")
	}
	if err := f.Store.RefreshCorpusLexicon(ctx, f.Tenant.ID); err != nil {
		t.Fatal(err)
	}
	if lexicon(f.Tenant.ID)["saddl"] != 1 {
		t.Error("the rebuilt lexicon lacks the new entry's words")
	}
}

// A question's common words weigh in the rank but do not widen the match:
// with a word in more entries than the match budget, the entries of the
// telling word still come first, and an entry holding both ranks above
// one holding only the telling word.
func TestExploreCorpusCommonWords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := dbtest.SetupPromptCorpus(t)
	if _, err := f.Store.Pool().Exec(ctx, `INSERT INTO corpus_entries (tenant_id, title, content, locale)
		SELECT $1, 'Notice ' || g, 'Every bike we sell is checked twice, notice ' || g, 'en' FROM generate_series(1, 1100) g`,
		f.Tenant.ID); err != nil {
		t.Fatal(err)
	}
	for _, e := range [][2]string{{"Saddle fitting", "A saddle adjusted to your sit bones, free with every bike."},
		{"Saddle covers", "Gel covers for any saddle."}} {
		if _, err := f.Store.Pool().Exec(ctx, `INSERT INTO corpus_entries (tenant_id, title, content, locale) VALUES ($1, $2, $3, 'en')`,
			f.Tenant.ID, e[0], e[1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Store.RefreshCorpusLexicon(ctx, f.Tenant.ID); err != nil {
		t.Fatal(err)
	}
	got, err := f.Store.ExploreCorpus(ctx, f.Tenant.ID, "", "", "a saddle for my bike", nil, 5)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"Saddle fitting", "Saddle covers"}; !slices.Equal(dbtest.Titles(got), want) {
		t.Errorf("explored %q, want %q", dbtest.Titles(got), want)
	}
	// Only words in most entries: nothing tells the entries apart, and
	// nothing is matched (ranking them all would cost a scan of the
	// corpus for a question like "what do you sell?").
	got, err = f.Store.ExploreCorpus(ctx, f.Tenant.ID, "", "", "bike checked twice", nil, 3)
	if err != nil || len(got) != 0 {
		t.Errorf("words in most entries only: %q, %v", dbtest.Titles(got), err)
	}
}

// The corpus list's search finds what owners type: a typo as the word the
// entries use, a synonym as its group's other terms; every word still
// counts, as a filter's do.
func TestListCorpusTypedSearch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := dbtest.SetupPromptCorpus(t)
	if _, err := f.Store.Pool().Exec(ctx, `INSERT INTO corpus_entries (tenant_id, title, content, locale) VALUES
		($1, 'Puncture repair', 'We fix a flat tyre while you wait.', 'en'),
		($1, 'Bicycle hire', 'City bicycles by the day or the week.', 'en'),
		($1, 'Opening hours', 'Open from nine to six.', NULL)`, f.Tenant.ID); err != nil {
		t.Fatal(err)
	}
	list := func(search string) []string {
		t.Helper()
		page, err := f.Store.ListCorpus(ctx, f.Tenant.ID, knowledge.CorpusQuery{Search: search, Page: 1, Limit: 20})
		if err != nil {
			t.Fatal(err)
		}
		if page.Total != len(page.Entries) {
			t.Errorf("%q: total %d for %d entries", search, page.Total, len(page.Entries))
		}
		return dbtest.Titles(page.Entries)
	}
	if got := list("punctre"); len(got) != 0 {
		t.Fatalf("a typo found %q before the lexicon", got)
	}
	if err := f.Store.RefreshCorpusLexicon(ctx, f.Tenant.ID); err != nil {
		t.Fatal(err)
	}
	for search, want := range map[string][]string{
		"repair":         {"Puncture repair"},
		"punctre":        {"Puncture repair"},
		"punctre repair": {"Puncture repair"},
		"punctre hours":  nil, // every word counts
		"xylophone":      nil,
		"bike hire":      nil, // no group yet
		"the week":       {"Bicycle hire"},
	} {
		if got := list(search); !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Errorf("%q: %q, want %q", search, got, want)
		}
	}
	if _, err := f.Store.CreateSynonyms(ctx, f.Tenant.ID, []string{"bike", "bicycle"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Store.CreateSynonyms(ctx, f.Tenant.ID, []string{"when are you open", "opening hours"}); err != nil {
		t.Fatal(err)
	}
	for search, want := range map[string][]string{
		"bike hire": {"Bicycle hire"},
		"bikes":     {"Bicycle hire"},
		"bike":      {"Bicycle hire"},
		"car hire":  nil,
	} {
		if got := list(search); !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Errorf("with synonyms, %q: %q, want %q", search, got, want)
		}
	}
}
