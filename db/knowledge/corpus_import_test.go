package knowledge_test

import (
	"context"
	"errors"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/db/knowledge"
)

// TestImportCorpus: an import creates, updates by externalId and leaves
// unchanged rows as they are, counting each; a row without externalId equal
// to an entry is not added again; segment and priority change only when the
// file has their columns; past the limit nothing is written.
func TestImportCorpus(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	ctx := context.Background()
	ten := dbtest.NewTenant(t, store)
	seg, err := store.DefaultSegment(ctx, ten.ID)
	if err != nil {
		t.Fatal(err)
	}
	id := func(s string) *string { return &s }
	rows := []knowledge.CorpusImportRow{
		{Title: "Hours", Content: "Nine to five", SegmentID: &seg.ID, Priority: 7, ExternalID: id("hours")},
		{Title: "Refunds", Content: "Thirty days", Priority: 5, ExternalID: id("refunds")},
		{Title: "No id", Content: "Always new", Priority: 5},
	}
	imp := knowledge.CorpusImport{Rows: rows, Source: "csv", HasSegment: true, HasPriority: true}
	res, err := store.ImportCorpus(ctx, ten.ID, 10, imp)
	if err != nil || res != (knowledge.CorpusImportResult{Created: 3}) {
		t.Fatalf("first import: %+v %v", res, err)
	}
	// Again: the two rows with an id change nothing, the third is the
	// entry it made the first time.
	res, err = store.ImportCorpus(ctx, ten.ID, 10, imp)
	if err != nil || res != (knowledge.CorpusImportResult{Unchanged: 2, Duplicates: 1}) {
		t.Fatalf("second import: %+v %v", res, err)
	}
	// A file without the segment and priority columns keeps them.
	res, err = store.ImportCorpus(ctx, ten.ID, 10, knowledge.CorpusImport{Source: "csv", Rows: []knowledge.CorpusImportRow{
		{Title: "Hours", Content: "Nine to six", Priority: knowledge.DefaultCorpusPriority, ExternalID: id("hours")},
	}})
	if err != nil || res != (knowledge.CorpusImportResult{Updated: 1}) {
		t.Fatalf("update: %+v %v", res, err)
	}
	page, err := store.ListCorpus(ctx, ten.ID, knowledge.CorpusQuery{Search: "six", Page: 1, Limit: 10})
	if err != nil || len(page.Entries) != 1 {
		t.Fatalf("search after the update: %+v %v", page, err)
	}
	if e := page.Entries[0]; e.Content != "Nine to six" || e.Priority != 7 || e.SegmentID == nil || *e.SegmentID != seg.ID || *e.Source != "csv" {
		t.Errorf("updated entry: %+v", e)
	}
	// Limit 5 with 3 entries: 2 new rows fit, 3 do not (the update is not counted).
	over := []knowledge.CorpusImportRow{
		{Title: "Hours", Content: "Nine to seven", Priority: 5, ExternalID: id("hours")},
		{Title: "A", Content: "a", Priority: 5}, {Title: "B", Content: "b", Priority: 5}, {Title: "C", Content: "c", Priority: 5},
	}
	_, err = store.ImportCorpus(ctx, ten.ID, 5, knowledge.CorpusImport{Source: "csv", Rows: over})
	var perr *parley.Error
	if !errors.As(err, &perr) || perr.Kind != parley.KindRateLimited {
		t.Fatalf("over the limit: %v", err)
	}
	if n, _ := store.CountCorpus(ctx, ten.ID); n != 3 {
		t.Errorf("%d entries after a refused import, want 3", n)
	}
	if res, err = store.ImportCorpus(ctx, ten.ID, 5, knowledge.CorpusImport{Source: "csv", Rows: over[:3]}); err != nil || res != (knowledge.CorpusImportResult{Created: 2, Updated: 1}) {
		t.Errorf("to the limit: %+v %v", res, err)
	}
	// At the limit, rows that are already entries are skipped, not refused.
	again := append(over[:3:3], knowledge.CorpusImportRow{Title: "No id", Content: "Always new", Priority: 1})
	if res, err = store.ImportCorpus(ctx, ten.ID, 5, knowledge.CorpusImport{Source: "csv", Rows: again}); err != nil || res != (knowledge.CorpusImportResult{Unchanged: 1, Duplicates: 3}) {
		t.Errorf("the same rows at the limit: %+v %v", res, err)
	}
}

// TestImportCorpusDuplicates: the rule on equal titles and contents compares
// a row without externalId with the entries of its own tenant only, both
// members exactly; a row with an externalId is never such a duplicate.
func TestImportCorpusDuplicates(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	ctx := context.Background()
	ten, other := dbtest.NewTenant(t, store), dbtest.NewTenant(t, store)
	id := func(s string) *string { return &s }
	rows := []knowledge.CorpusImportRow{
		{Title: "Hours", Content: "Nine to five", Priority: 5},
		{Title: "Refunds", Content: "Thirty days", Priority: 5},
	}
	if res, err := store.ImportCorpus(ctx, other.ID, 10, knowledge.CorpusImport{Source: "csv", Rows: rows}); err != nil || res != (knowledge.CorpusImportResult{Created: 2}) {
		t.Fatalf("the other tenant's import: %+v %v", res, err)
	}
	// The same rows for another tenant: new entries, the other's never matched.
	if res, err := store.ImportCorpus(ctx, ten.ID, 10, knowledge.CorpusImport{Source: "csv", Rows: rows}); err != nil || res != (knowledge.CorpusImportResult{Created: 2}) {
		t.Fatalf("first import: %+v %v", res, err)
	}
	more := []knowledge.CorpusImportRow{
		{Title: "Hours", Content: "Nine to five", Priority: 9},                             // the same entry, another priority: skipped
		{Title: "Hours", Content: "Nine to six", Priority: 5},                              // another content: new
		{Title: "hours", Content: "Nine to five", Priority: 5},                             // another title (case): new
		{Title: "Refunds", Content: "Thirty days", Priority: 5, ExternalID: id("refunds")}, // an id: new
	}
	res, err := store.ImportCorpus(ctx, ten.ID, 10, knowledge.CorpusImport{Source: "csv", HasPriority: true, Rows: more})
	if err != nil || res != (knowledge.CorpusImportResult{Created: 3, Duplicates: 1}) {
		t.Fatalf("second import: %+v %v", res, err)
	}
	for tenantID, want := range map[string]int{ten.ID: 5, other.ID: 2} {
		if n, _ := store.CountCorpus(ctx, tenantID); n != want {
			t.Errorf("tenant %s: %d entries, want %d", tenantID, n, want)
		}
	}
	var priority int
	if err := store.Pool().QueryRow(ctx, `SELECT priority FROM corpus_entries WHERE tenant_id = $1 AND title = 'Hours' AND content = 'Nine to five'`, ten.ID).Scan(&priority); err != nil || priority != 5 {
		t.Errorf("the skipped row changed its entry: priority %d %v", priority, err)
	}
}

// TestImportCorpusFailureWritesNothing: the rows of an import (and the items
// of a bulk upsert) are written in one transaction; when the database fails
// on one of them, here a segment that does not exist (the handlers check
// segments, so only the database can trip on it), none is written.
func TestImportCorpusFailureWritesNothing(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	ctx := context.Background()
	ten := dbtest.NewTenant(t, store)
	gone := "00000000-0000-4000-8000-000000000000"
	rows := []knowledge.CorpusImportRow{
		{Title: "Hours", Content: "Nine to five", Priority: 5},
		{Title: "Refunds", Content: "Thirty days", Priority: 5, SegmentID: &gone},
	}
	if _, err := store.ImportCorpus(ctx, ten.ID, 10, knowledge.CorpusImport{Source: "csv", HasSegment: true, Rows: rows}); err == nil {
		t.Fatal("an import into a segment that does not exist succeeded")
	}
	ws := []knowledge.CorpusWrite{
		{Title: parley.Some("Hours"), Content: parley.Some("Nine to five"), ExternalID: parley.Some("hours")},
		{Title: parley.Some("Refunds"), Content: parley.Some("Thirty days"), ExternalID: parley.Some("refunds"), SegmentID: parley.Some(gone)},
	}
	if _, err := store.UpsertCorpusBatch(ctx, ten.ID, 10, ws); err == nil {
		t.Fatal("a bulk upsert into a segment that does not exist succeeded")
	}
	if n, _ := store.CountCorpus(ctx, ten.ID); n != 0 {
		t.Errorf("%d entries written by failed writes, want 0", n)
	}
}
