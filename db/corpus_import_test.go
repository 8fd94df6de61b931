package db_test

import (
	"context"
	"errors"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
)

// TestImportCorpus: an import creates, updates by externalId and leaves
// unchanged rows as they are, counting each; segment and priority change only
// when the file has their columns; past the limit nothing is written.
func TestImportCorpus(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	ctx := context.Background()
	ten := newTenant(t, store)
	seg, err := store.DefaultSegment(ctx, ten.ID)
	if err != nil {
		t.Fatal(err)
	}
	id := func(s string) *string { return &s }
	rows := []db.CorpusImportRow{
		{Title: "Hours", Content: "Nine to five", SegmentID: &seg.ID, Priority: 7, ExternalID: id("hours")},
		{Title: "Refunds", Content: "Thirty days", Priority: 5, ExternalID: id("refunds")},
		{Title: "No id", Content: "Always new", Priority: 5},
	}
	imp := db.CorpusImport{Rows: rows, Source: "csv", HasSegment: true, HasPriority: true}
	res, err := store.ImportCorpus(ctx, ten.ID, 10, imp)
	if err != nil || res != (db.CorpusImportResult{Created: 3}) {
		t.Fatalf("first import: %+v %v", res, err)
	}
	// Again: the two rows with an id change nothing, the third is new again.
	res, err = store.ImportCorpus(ctx, ten.ID, 10, imp)
	if err != nil || res != (db.CorpusImportResult{Created: 1, Unchanged: 2}) {
		t.Fatalf("second import: %+v %v", res, err)
	}
	// A file without the segment and priority columns keeps them.
	res, err = store.ImportCorpus(ctx, ten.ID, 10, db.CorpusImport{Source: "csv", Rows: []db.CorpusImportRow{
		{Title: "Hours", Content: "Nine to six", Priority: db.DefaultCorpusPriority, ExternalID: id("hours")},
	}})
	if err != nil || res != (db.CorpusImportResult{Updated: 1}) {
		t.Fatalf("update: %+v %v", res, err)
	}
	page, err := store.ListCorpus(ctx, ten.ID, db.CorpusQuery{Search: "six", Page: 1, Limit: 10})
	if err != nil || len(page.Entries) != 1 {
		t.Fatalf("search after the update: %+v %v", page, err)
	}
	if e := page.Entries[0]; e.Content != "Nine to six" || e.Priority != 7 || e.SegmentID == nil || *e.SegmentID != seg.ID || *e.Source != "csv" {
		t.Errorf("updated entry: %+v", e)
	}
	// Limit 6 with 4 entries: 2 new rows fit, 3 do not (the update is not counted).
	over := []db.CorpusImportRow{
		{Title: "Hours", Content: "Nine to seven", Priority: 5, ExternalID: id("hours")},
		{Title: "A", Content: "a", Priority: 5}, {Title: "B", Content: "b", Priority: 5}, {Title: "C", Content: "c", Priority: 5},
	}
	_, err = store.ImportCorpus(ctx, ten.ID, 6, db.CorpusImport{Source: "csv", Rows: over})
	var perr *parley.Error
	if !errors.As(err, &perr) || perr.Kind != parley.KindRateLimited {
		t.Fatalf("over the limit: %v", err)
	}
	if n, _ := store.CountCorpus(ctx, ten.ID); n != 4 {
		t.Errorf("%d entries after a refused import, want 4", n)
	}
	if res, err = store.ImportCorpus(ctx, ten.ID, 6, db.CorpusImport{Source: "csv", Rows: over[:3]}); err != nil || res != (db.CorpusImportResult{Created: 2, Updated: 1}) {
		t.Errorf("to the limit: %+v %v", res, err)
	}
}
