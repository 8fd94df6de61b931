package db_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
)

// promptFixture is a tenant with two extra segments, seeded row by row.
type promptFixture struct {
	store   *db.DB
	tenant  parley.Tenant
	sales   string // segment ids
	support string
}

func setupPromptCorpus(t *testing.T) *promptFixture {
	t.Helper()
	store := dbtest.New(t)
	f := &promptFixture{store: store, tenant: newTenant(t, store)}
	f.sales = f.segment(t, "sales")
	f.support = f.segment(t, "support")
	return f
}

func (f *promptFixture) segment(t *testing.T, slug string) string {
	t.Helper()
	var id string
	err := f.store.Pool().QueryRow(context.Background(), `INSERT INTO segments (tenant_id, slug, name, system_prompt)
		VALUES ($1, $2, $2, 'prompt') RETURNING id`, f.tenant.ID, slug).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// entry describes one row to insert; zero values are the defaults of a
// plain active entry for every segment and every locale.
type entry struct {
	title    string
	segment  string // id; empty: every segment
	locale   string
	summary  string
	priority int
	inactive bool
	age      time.Duration // how long ago it was updated
}

func (f *promptFixture) add(t *testing.T, tenantID string, e entry) {
	t.Helper()
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	_, err := f.store.Pool().Exec(context.Background(), `INSERT INTO corpus_entries
		(tenant_id, segment_id, title, content, summary, priority, is_active, locale, updated_at)
		VALUES ($1, $2, $3, 'content of ' || $3, $4, $5, $6, $7, now() - $8::interval)`,
		tenantID, opt(e.segment), e.title, opt(e.summary), e.priority, !e.inactive, opt(e.locale), e.age)
	if err != nil {
		t.Fatal(err)
	}
}

// hasSummaries is what a turn reads of whether any active entry applying to
// the segment and the locale has a summary (PromptData's HasSummaries).
func (f *promptFixture) hasSummaries(ctx context.Context, tenantID, segmentID, locale string) (bool, error) {
	p, err := f.store.PromptData(ctx, tenantID, segmentID, locale, "", 0)
	return p.HasSummaries, err
}

func titles(entries []parley.CorpusEntry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Title
	}
	return out
}

func TestPromptCorpus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("SegmentScoping", func(t *testing.T) {
		t.Parallel()
		f := setupPromptCorpus(t)
		f.add(t, f.tenant.ID, entry{title: "everyone", priority: 3})
		f.add(t, f.tenant.ID, entry{title: "sales only", segment: f.sales, priority: 2})
		f.add(t, f.tenant.ID, entry{title: "support only", segment: f.support, priority: 1})
		for _, tc := range []struct {
			name, segment string
			want          []string
		}{
			{"Sales", f.sales, []string{"everyone", "sales only"}},
			{"Support", f.support, []string{"everyone", "support only"}},
			{"NoSegment", "", []string{"everyone"}},
		} {
			got, err := f.store.PromptCorpus(ctx, f.tenant.ID, tc.segment, "", 50)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(titles(got), tc.want) {
				t.Errorf("%s: got %q, want %q", tc.name, titles(got), tc.want)
			}
		}
	})

	t.Run("LocaleScoping", func(t *testing.T) {
		t.Parallel()
		f := setupPromptCorpus(t)
		f.add(t, f.tenant.ID, entry{title: "any", priority: 6})
		f.add(t, f.tenant.ID, entry{title: "fr", locale: "fr", priority: 5})
		f.add(t, f.tenant.ID, entry{title: "fr-CA", locale: "fr-CA", priority: 4})
		f.add(t, f.tenant.ID, entry{title: "en", locale: "en", priority: 3})
		f.add(t, f.tenant.ID, entry{title: "en-GB", locale: "en-gb", priority: 2})
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
			got, err := f.store.PromptCorpus(ctx, f.tenant.ID, f.sales, tc.locale, 50)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(titles(got), tc.want) {
				t.Errorf("locale %q: got %q, want %q", tc.locale, titles(got), tc.want)
			}
		}
	})

	t.Run("InactiveAndOtherTenantExcluded", func(t *testing.T) {
		t.Parallel()
		f := setupPromptCorpus(t)
		other := newTenant(t, f.store)
		f.add(t, f.tenant.ID, entry{title: "active"})
		f.add(t, f.tenant.ID, entry{title: "inactive", inactive: true})
		f.add(t, f.tenant.ID, entry{title: "inactive with summary", summary: "s", inactive: true})
		f.add(t, other.ID, entry{title: "other tenant", priority: 100})
		f.add(t, other.ID, entry{title: "other tenant with summary", summary: "s", priority: 100})
		got, err := f.store.PromptCorpus(ctx, f.tenant.ID, f.sales, "fr", 50)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"active"}; !slices.Equal(titles(got), want) {
			t.Errorf("got %q, want %q", titles(got), want)
		}
		has, err := f.hasSummaries(ctx, f.tenant.ID, f.sales, "")
		if err != nil || has {
			t.Errorf("HasSummaries = %v, %v; want false: the only summaries are inactive or another tenant's", has, err)
		}
		// The other tenant's segment id does not open its entries either.
		got, err = f.store.PromptCorpus(ctx, other.ID, f.sales, "", 50)
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
		f := setupPromptCorpus(t)
		f.add(t, f.tenant.ID, entry{title: "low", priority: 1})
		f.add(t, f.tenant.ID, entry{title: "high old", priority: 9, age: time.Hour})
		f.add(t, f.tenant.ID, entry{title: "high new", priority: 9, segment: f.sales})
		f.add(t, f.tenant.ID, entry{title: "mid", priority: 5, summary: "a summary"})
		got, err := f.store.PromptCorpus(ctx, f.tenant.ID, f.sales, "", 50)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"high new", "high old", "mid", "low"}; !slices.Equal(titles(got), want) {
			t.Errorf("got %q, want %q", titles(got), want)
		}
		if got[2].Summary == nil || *got[2].Summary != "a summary" {
			t.Errorf("summary not loaded: %v", got[2].Summary)
		}
		got, err = f.store.PromptCorpus(ctx, f.tenant.ID, f.sales, "", 2)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"high new", "high old"}; !slices.Equal(titles(got), want) {
			t.Errorf("limit 2: got %q, want %q", titles(got), want)
		}
		if got, err := f.store.PromptCorpus(ctx, f.tenant.ID, f.sales, "", 0); err != nil || len(got) != 0 {
			t.Errorf("limit 0: got %d entries, %v", len(got), err)
		}
	})

	t.Run("BadSegmentID", func(t *testing.T) {
		t.Parallel()
		f := setupPromptCorpus(t)
		_, err := f.store.PromptCorpus(ctx, f.tenant.ID, "sales", "", 10)
		var e *parley.Error
		if !errors.As(err, &e) || e.Kind != parley.KindNotFound {
			t.Errorf("err = %v, want not found", err)
		}
	})
}

func TestPromptDataHasSummaries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := setupPromptCorpus(t)
	f.add(t, f.tenant.ID, entry{title: "plain"})
	f.add(t, f.tenant.ID, entry{title: "blank summary", summary: "   "})
	f.add(t, f.tenant.ID, entry{title: "summarised for sales", segment: f.sales, summary: "short"})
	for _, tc := range []struct {
		name, segment string
		want          bool
	}{
		{"SegmentWithSummary", f.sales, true},
		{"OtherSegment", f.support, false},
		{"NoSegment", "", false},
	} {
		got, err := f.hasSummaries(ctx, f.tenant.ID, tc.segment, "")
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
	f.add(t, f.tenant.ID, entry{title: "summarised for all", summary: "short"})
	if got, err := f.hasSummaries(ctx, f.tenant.ID, f.support, ""); err != nil || !got {
		t.Errorf("after an entry for every segment: %v, %v; want true", got, err)
	}

	// Summaries in another language do not count for a visitor's locale.
	g := setupPromptCorpus(t)
	g.add(t, g.tenant.ID, entry{title: "résumé", locale: "fr", summary: "court"})
	for _, tc := range []struct {
		locale string
		want   bool
	}{{"en", false}, {"fr", true}, {"fr-CA", true}, {"", true}} {
		if got, err := g.hasSummaries(ctx, g.tenant.ID, "", tc.locale); err != nil || got != tc.want {
			t.Errorf("a French summary, locale %q: %v, %v; want %v", tc.locale, got, err, tc.want)
		}
	}
}

func TestExploreCorpusLocale(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := setupPromptCorpus(t)
	f.add(t, f.tenant.ID, entry{title: "Warranty", locale: "en"})
	f.add(t, f.tenant.ID, entry{title: "Garantie warranty", locale: "fr"})
	f.add(t, f.tenant.ID, entry{title: "Warranty terms"}) // no locale: every language
	for _, tc := range []struct {
		locale string
		want   string
	}{
		{"en-GB", "Warranty,Warranty terms"},
		{"fr", "Garantie warranty,Warranty terms"},
		{"", "Warranty,Garantie warranty,Warranty terms"},
	} {
		got, err := f.store.ExploreCorpus(ctx, f.tenant.ID, "", tc.locale, "warranty", nil, 10)
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
	f := setupPromptCorpus(t)
	add := func(title, content string) {
		t.Helper()
		if _, err := f.store.Pool().Exec(ctx, `INSERT INTO corpus_entries (tenant_id, title, content, locale) VALUES ($1, $2, $3, 'en')`,
			f.tenant.ID, title, content); err != nil {
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
		got, err := f.store.ExploreCorpus(ctx, f.tenant.ID, "", "", question, nil, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 || got[0].Title != want {
			t.Errorf("%q: explored %q, want %q first", question, titles(got), want)
		}
	}
	// Only stop words: nothing to match, no error.
	if got, err := f.store.ExploreCorpus(ctx, f.tenant.ID, "", "", "how is it", nil, 3); err != nil || len(got) != 0 {
		t.Errorf("stop words only: %q, %v", titles(got), err)
	}
	// Equal ranks: the same order however often it is asked.
	add("Brakes A", "brakes service")
	add("Brakes B", "brakes service")
	first, _ := f.store.ExploreCorpus(ctx, f.tenant.ID, "", "", "brakes service", nil, 5)
	for range 3 {
		again, _ := f.store.ExploreCorpus(ctx, f.tenant.ID, "", "", "brakes service", nil, 5)
		if !slices.Equal(titles(first), titles(again)) {
			t.Errorf("order changed: %q then %q", titles(first), titles(again))
		}
	}
}
