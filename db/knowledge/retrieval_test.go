package knowledge_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db/dbtest"
)

func TestPromptCorpus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("SegmentScoping", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupPromptCorpus(t)
		f.Add(t, f.Tenant.ID, dbtest.PromptEntry{Title: "everyone", Priority: 3})
		f.Add(t, f.Tenant.ID, dbtest.PromptEntry{Title: "sales only", Segment: f.Sales, Priority: 2})
		f.Add(t, f.Tenant.ID, dbtest.PromptEntry{Title: "support only", Segment: f.Support, Priority: 1})
		for _, tc := range []struct {
			name, segment string
			want          []string
		}{
			{"Sales", f.Sales, []string{"everyone", "sales only"}},
			{"Support", f.Support, []string{"everyone", "support only"}},
			{"NoSegment", "", []string{"everyone"}},
		} {
			got, err := f.Store.PromptCorpus(ctx, f.Tenant.ID, tc.segment, "", 50)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(dbtest.Titles(got), tc.want) {
				t.Errorf("%s: got %q, want %q", tc.name, dbtest.Titles(got), tc.want)
			}
		}
	})

	t.Run("LocaleScoping", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupPromptCorpus(t)
		f.Add(t, f.Tenant.ID, dbtest.PromptEntry{Title: "any", Priority: 6})
		f.Add(t, f.Tenant.ID, dbtest.PromptEntry{Title: "fr", Locale: "fr", Priority: 5})
		f.Add(t, f.Tenant.ID, dbtest.PromptEntry{Title: "fr-CA", Locale: "fr-CA", Priority: 4})
		f.Add(t, f.Tenant.ID, dbtest.PromptEntry{Title: "en", Locale: "en", Priority: 3})
		f.Add(t, f.Tenant.ID, dbtest.PromptEntry{Title: "en-GB", Locale: "en-gb", Priority: 2})
		for _, tc := range []struct {
			locale string
			want   []string
		}{
			{"fr", []string{"any", "fr", "fr-CA"}},
			{"fr-ca", []string{"any", "fr", "fr-CA"}},
			{"FR-FR", []string{"any", "fr", "fr-CA"}},
			{"fr_CA", []string{"any", "fr", "fr-CA"}},
			{"en-US", []string{"any", "en", "en-GB"}},
			{"de", []string{"any"}},
			{"", []string{"any", "fr", "fr-CA", "en", "en-GB"}},
		} {
			got, err := f.Store.PromptCorpus(ctx, f.Tenant.ID, f.Sales, tc.locale, 50)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(dbtest.Titles(got), tc.want) {
				t.Errorf("locale %q: got %q, want %q", tc.locale, dbtest.Titles(got), tc.want)
			}
		}
	})

	t.Run("InactiveAndOtherTenantExcluded", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupPromptCorpus(t)
		other := dbtest.NewTenant(t, f.Store)
		f.Add(t, f.Tenant.ID, dbtest.PromptEntry{Title: "active"})
		f.Add(t, f.Tenant.ID, dbtest.PromptEntry{Title: "inactive", Inactive: true})
		f.Add(t, f.Tenant.ID, dbtest.PromptEntry{Title: "inactive with summary", Summary: "s", Inactive: true})
		f.Add(t, other.ID, dbtest.PromptEntry{Title: "other tenant", Priority: 100})
		f.Add(t, other.ID, dbtest.PromptEntry{Title: "other tenant with summary", Summary: "s", Priority: 100})
		got, err := f.Store.PromptCorpus(ctx, f.Tenant.ID, f.Sales, "fr", 50)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"active"}; !slices.Equal(dbtest.Titles(got), want) {
			t.Errorf("got %q, want %q", dbtest.Titles(got), want)
		}
		has, err := f.HasSummaries(ctx, f.Tenant.ID, f.Sales, "")
		if err != nil || has {
			t.Errorf("HasSummaries = %v, %v; want false: the only summaries are inactive or another tenant's", has, err)
		}
		// The other tenant's segment id does not open its entries either.
		got, err = f.Store.PromptCorpus(ctx, other.ID, f.Sales, "", 50)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range got {
			if e.TenantID != other.ID {
				t.Errorf("entry %q of tenant %s returned for %s", e.Title, e.TenantID, other.ID)
			}
		}
	})

	t.Run("OrderAndLimit", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupPromptCorpus(t)
		f.Add(t, f.Tenant.ID, dbtest.PromptEntry{Title: "low", Priority: 1})
		f.Add(t, f.Tenant.ID, dbtest.PromptEntry{Title: "high old", Priority: 9, Age: time.Hour})
		f.Add(t, f.Tenant.ID, dbtest.PromptEntry{Title: "high new", Priority: 9, Segment: f.Sales})
		f.Add(t, f.Tenant.ID, dbtest.PromptEntry{Title: "mid", Priority: 5, Summary: "a summary"})
		got, err := f.Store.PromptCorpus(ctx, f.Tenant.ID, f.Sales, "", 50)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"high new", "high old", "mid", "low"}; !slices.Equal(dbtest.Titles(got), want) {
			t.Errorf("got %q, want %q", dbtest.Titles(got), want)
		}
		if got[2].Summary == nil || *got[2].Summary != "a summary" {
			t.Errorf("summary not loaded: %v", got[2].Summary)
		}
		got, err = f.Store.PromptCorpus(ctx, f.Tenant.ID, f.Sales, "", 2)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"high new", "high old"}; !slices.Equal(dbtest.Titles(got), want) {
			t.Errorf("limit 2: got %q, want %q", dbtest.Titles(got), want)
		}
		if got, err := f.Store.PromptCorpus(ctx, f.Tenant.ID, f.Sales, "", 0); err != nil || len(got) != 0 {
			t.Errorf("limit 0: got %d entries, %v", len(got), err)
		}
	})

	t.Run("BadSegmentID", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupPromptCorpus(t)
		_, err := f.Store.PromptCorpus(ctx, f.Tenant.ID, "sales", "", 10)
		var e *parley.Error
		if !errors.As(err, &e) || e.Kind != parley.KindNotFound {
			t.Errorf("err = %v, want not found", err)
		}
	})
}

func TestPromptDataHasSummaries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := dbtest.SetupPromptCorpus(t)
	f.Add(t, f.Tenant.ID, dbtest.PromptEntry{Title: "plain"})
	f.Add(t, f.Tenant.ID, dbtest.PromptEntry{Title: "blank summary", Summary: "   "})
	f.Add(t, f.Tenant.ID, dbtest.PromptEntry{Title: "summarised for sales", Segment: f.Sales, Summary: "short"})
	for _, tc := range []struct {
		name, segment string
		want          bool
	}{
		{"SegmentWithSummary", f.Sales, true},
		{"OtherSegment", f.Support, false},
		{"NoSegment", "", false},
	} {
		got, err := f.HasSummaries(ctx, f.Tenant.ID, tc.segment, "")
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
	f.Add(t, f.Tenant.ID, dbtest.PromptEntry{Title: "summarised for all", Summary: "short"})
	if got, err := f.HasSummaries(ctx, f.Tenant.ID, f.Support, ""); err != nil || !got {
		t.Errorf("after an entry for every segment: %v, %v; want true", got, err)
	}

	// Summaries in another language do not count for a visitor's locale.
	g := dbtest.SetupPromptCorpus(t)
	g.Add(t, g.Tenant.ID, dbtest.PromptEntry{Title: "résumé", Locale: "fr", Summary: "court"})
	for _, tc := range []struct {
		locale string
		want   bool
	}{{"en", false}, {"fr", true}, {"fr-CA", true}, {"", true}} {
		if got, err := g.HasSummaries(ctx, g.Tenant.ID, "", tc.locale); err != nil || got != tc.want {
			t.Errorf("a French summary, locale %q: %v, %v; want %v", tc.locale, got, err, tc.want)
		}
	}
}

func TestExploreCorpusLocale(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := dbtest.SetupPromptCorpus(t)
	f.Add(t, f.Tenant.ID, dbtest.PromptEntry{Title: "Warranty", Locale: "en"})
	f.Add(t, f.Tenant.ID, dbtest.PromptEntry{Title: "Garantie warranty", Locale: "fr"})
	f.Add(t, f.Tenant.ID, dbtest.PromptEntry{Title: "Warranty terms"}) // no locale: every language
	for _, tc := range []struct {
		locale string
		want   string
	}{
		{"en-GB", "Warranty,Warranty terms"},
		{"fr", "Garantie warranty,Warranty terms"},
		{"", "Warranty,Garantie warranty,Warranty terms"},
	} {
		got, err := f.Store.ExploreCorpus(ctx, f.Tenant.ID, "", tc.locale, "warranty", nil, 10)
		if err != nil {
			t.Fatal(err)
		}
		var titles []string
		for _, e := range got {
			titles = append(titles, e.Title)
		}
		slices.Sort(titles)
		want := strings.Split(tc.want, ",")
		slices.Sort(want)
		if !slices.Equal(titles, want) {
			t.Errorf("locale %q: explored %q, want %q", tc.locale, titles, want)
		}
	}
}

// explore_corpus finds what people type: any meaningful word of the
// question matches (websearch_to_tsquery's AND of every word missed
// "Puncture repair" for "How much does a puncture repair cost?" on
// "much"), the entries holding most of its words, title first, rank first,
// and equal ranks fall to the id, so the order never depends on when rows
// were written (issue 34).
func TestExploreCorpusAnyWord(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := dbtest.SetupPromptCorpus(t)
	add := func(title, content string) {
		t.Helper()
		if _, err := f.Store.Pool().Exec(ctx, `INSERT INTO corpus_entries (tenant_id, title, content, locale) VALUES ($1, $2, $3, 'en')`,
			f.Tenant.ID, title, content); err != nil {
			t.Fatal(err)
		}
	}
	add("Puncture repair", "We fix a flat tyre while you wait: a new inner tube, fitted and checked, for 15 euros.")
	add("Opening hours", "The workshop is open from nine to six, Monday to Saturday.")
	add("Chain replacement", "A worn chain is replaced and the gears adjusted; the price depends on the bike.")
	add("Réparation de crevaison", "Nous réparons une crevaison pendant que vous attendez.")
	for question, want := range map[string]string{
		"How much does a puncture repair cost?":       "Puncture repair",
		"when are you open on saturday":               "Opening hours",
		"my chain is worn, can you replace it?":       "Chain replacement",
		"can you fix a flat tyre while I wait":        "Puncture repair",
		"combien coûte la réparation d'une crevaison": "Réparation de crevaison",
	} {
		got, err := f.Store.ExploreCorpus(ctx, f.Tenant.ID, "", "", question, nil, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 || got[0].Title != want {
			t.Errorf("%q: explored %q, want %q first", question, dbtest.Titles(got), want)
		}
	}
	// Only stop words: nothing to match, no error.
	if got, err := f.Store.ExploreCorpus(ctx, f.Tenant.ID, "", "", "how is it", nil, 3); err != nil || len(got) != 0 {
		t.Errorf("stop words only: %q, %v", dbtest.Titles(got), err)
	}
	// Equal ranks: the same order however often it is asked.
	add("Brakes A", "brakes service")
	add("Brakes B", "brakes service")
	first, _ := f.Store.ExploreCorpus(ctx, f.Tenant.ID, "", "", "brakes service", nil, 5)
	for range 3 {
		again, _ := f.Store.ExploreCorpus(ctx, f.Tenant.ID, "", "", "brakes service", nil, 5)
		if !slices.Equal(dbtest.Titles(first), dbtest.Titles(again)) {
			t.Errorf("order changed: %q then %q", dbtest.Titles(first), dbtest.Titles(again))
		}
	}
}
