package dbtest

import (
	"context"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
)

// PromptFixture is a tenant with two extra segments, seeded row by row: the
// prompt reads' tests (PromptCorpus, PromptData, the chat's cache, the
// lexicon, synonyms) add entries to it.
type PromptFixture struct {
	Store   *db.DB
	Tenant  parley.Tenant
	Sales   string // segment ids
	Support string
}

// SetupPromptCorpus creates a PromptFixture on the test binary's database.
func SetupPromptCorpus(t *testing.T) *PromptFixture {
	t.Helper()
	store := New(t)
	f := &PromptFixture{Store: store, Tenant: NewTenant(t, store)}
	f.Sales = f.Segment(t, "sales")
	f.Support = f.Segment(t, "support")
	return f
}

// Segment adds a segment of that slug to the fixture's tenant and returns its id.
func (f *PromptFixture) Segment(t *testing.T, slug string) string {
	t.Helper()
	var id string
	err := f.Store.Pool().QueryRow(context.Background(), `INSERT INTO segments (tenant_id, slug, name, system_prompt)
		VALUES ($1, $2, $2, 'prompt') RETURNING id`, f.Tenant.ID, slug).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// PromptEntry describes one row to insert; zero values are the defaults of a
// plain active entry for every segment and every locale.
type PromptEntry struct {
	Title    string
	Segment  string // id; empty: every segment
	Locale   string
	Summary  string
	Priority int
	Inactive bool
	Age      time.Duration // how long ago it was updated
}

// Add inserts e as an entry of the tenant tenantID.
func (f *PromptFixture) Add(t *testing.T, tenantID string, e PromptEntry) {
	t.Helper()
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	_, err := f.Store.Pool().Exec(context.Background(), `INSERT INTO corpus_entries
		(tenant_id, segment_id, title, content, summary, priority, is_active, locale, updated_at)
		VALUES ($1, $2, $3, 'content of ' || $3, $4, $5, $6, $7, now() - $8::interval)`,
		tenantID, opt(e.Segment), e.Title, opt(e.Summary), e.Priority, !e.Inactive, opt(e.Locale), e.Age)
	if err != nil {
		t.Fatal(err)
	}
}

// HasSummaries is what a turn reads of whether any active entry applying to
// the segment and the locale has a summary (PromptData's HasSummaries).
func (f *PromptFixture) HasSummaries(ctx context.Context, tenantID, segmentID, locale string) (bool, error) {
	p, err := f.Store.PromptData(ctx, tenantID, segmentID, locale, "", 0)
	return p.HasSummaries, err
}

// Titles lists the entries' titles.
func Titles(entries []parley.CorpusEntry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Title
	}
	return out
}
