package knowledge

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// CorpusImportRow is one row of a file import, validated by the caller.
type CorpusImportRow struct {
	Title      string
	Content    string
	SegmentID  *string // nil: every segment
	Priority   int
	ExternalID *string // nil: always a new entry
}

// CorpusImport is a whole file to import. An entry found by its ExternalID is
// updated: its title, content and source always, its segment and priority
// only when the file has those columns (HasSegment, HasPriority).
type CorpusImport struct {
	Rows        []CorpusImportRow
	Source      string
	HasSegment  bool
	HasPriority bool
}

// CorpusImportResult counts what an import did with the rows it was given.
type CorpusImportResult struct {
	Created   int
	Updated   int
	Unchanged int // rows whose externalId names an entry they would not change
	// Duplicates are rows without an externalId whose title and content are
	// those of an entry the tenant already has: without an id to update, the
	// row could only add a copy, which the agent would then quote twice.
	Duplicates int
}

// ImportCorpus writes the rows of imp in one transaction, or none: the rows
// are copied into a temporary table, the ones that would change nothing are
// dropped, and the rest are inserted in one statement that upserts on
// externalId (the generated search document and the indexes are filled as
// for any insert). A row without an externalId is dropped as a duplicate when
// an entry of this tenant has its title and content (another tenant's entries
// are never compared). The plan's limit counts the entries the import
// creates, not the ones it updates or skips; past it nothing is written and
// the error is the limit's 429. ExternalIDs must be unique within imp (the
// caller checks): one statement cannot update a row twice.
func (d *Knowledge) ImportCorpus(ctx context.Context, tenantID string, limit int, imp CorpusImport) (CorpusImportResult, error) {
	var res CorpusImportResult
	withoutID := false
	for _, r := range imp.Rows {
		if r.ExternalID == nil {
			withoutID = true
			break
		}
	}
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		if err := pgbase.LockTenant(ctx, tx, tenantID); err != nil {
			return fmt.Errorf("locking tenant: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TEMP TABLE corpus_import (title text NOT NULL, content text NOT NULL,
			segment_id uuid, priority integer NOT NULL, external_id text) ON COMMIT DROP`); err != nil {
			return fmt.Errorf("creating the import table: %w", err)
		}
		_, err := tx.CopyFrom(ctx, pgx.Identifier{"corpus_import"},
			[]string{"title", "content", "segment_id", "priority", "external_id"},
			pgx.CopyFromSlice(len(imp.Rows), func(i int) ([]any, error) {
				r := imp.Rows[i]
				return []any{r.Title, r.Content, r.SegmentID, r.Priority, r.ExternalID}, nil
			}))
		if err != nil {
			return fmt.Errorf("copying the import: %w", err)
		}
		// A temporary table has no statistics until analysed: without them
		// the planner takes it for a few rows and joins it to the tenant's
		// corpus by a nested loop, 50,000 rows by 50,000 entries (minutes
		// where a hash join takes a fraction of a second).
		if _, err := tx.Exec(ctx, `ANALYZE corpus_import`); err != nil {
			return fmt.Errorf("analysing the import: %w", err)
		}
		// Rows that would change nothing are dropped first: an insert
		// computes the row's search document before it finds the conflict,
		// and a skipped row must not count against the plan's limit. The
		// comparison of titles and contents reads the tenant's whole corpus,
		// so it runs only when some row has no externalId.
		if withoutID {
			tag, err := tx.Exec(ctx, `DELETE FROM corpus_import i USING corpus_entries c
				WHERE i.external_id IS NULL AND c.tenant_id = $1 AND c.title = i.title AND c.content = i.content`, tenantID)
			if err != nil {
				return fmt.Errorf("dropping duplicate rows: %w", err)
			}
			res.Duplicates = int(tag.RowsAffected())
		}
		tag, err := tx.Exec(ctx, `DELETE FROM corpus_import i USING corpus_entries c
			WHERE c.tenant_id = $1 AND c.external_id = i.external_id
				AND c.title = i.title AND c.content = i.content AND c.source IS NOT DISTINCT FROM $2
				AND (NOT $3 OR c.segment_id IS NOT DISTINCT FROM i.segment_id)
				AND (NOT $4 OR c.priority = i.priority)`,
			tenantID, imp.Source, imp.HasSegment, imp.HasPriority)
		if err != nil {
			return fmt.Errorf("dropping unchanged rows: %w", err)
		}
		res.Unchanged = int(tag.RowsAffected())
		var current, updates int
		if err := tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM corpus_entries WHERE tenant_id = $1),
			(SELECT count(*) FROM corpus_import i JOIN corpus_entries c ON c.tenant_id = $1 AND c.external_id = i.external_id)`,
			tenantID).Scan(&current, &updates); err != nil {
			return fmt.Errorf("counting corpus: %w", err)
		}
		if adding := len(imp.Rows) - res.Duplicates - res.Unchanged - updates; current+adding > limit {
			return CorpusImportLimitError(current, adding, limit)
		}
		tag, err = tx.Exec(ctx, `INSERT INTO corpus_entries AS c (tenant_id, segment_id, title, content, priority, external_id, source)
			SELECT $1, segment_id, title, content, priority, external_id, $2 FROM corpus_import
			ON CONFLICT (tenant_id, external_id) WHERE external_id IS NOT NULL DO UPDATE SET
				title = excluded.title, content = excluded.content, source = excluded.source,
				segment_id = CASE WHEN $3 THEN excluded.segment_id ELSE c.segment_id END,
				priority = CASE WHEN $4 THEN excluded.priority ELSE c.priority END,
				updated_at = now()`,
			tenantID, imp.Source, imp.HasSegment, imp.HasPriority)
		if err != nil {
			return fmt.Errorf("importing corpus: %w", err)
		}
		res.Updated = updates
		res.Created = int(tag.RowsAffected()) - updates
		return d.enqueueEmbed(ctx, tx, tenantID)
	})
	if err != nil {
		return CorpusImportResult{}, err
	}
	return res, nil
}

// CorpusImportLimitError is the 429 of an import or a bulk upsert that would
// take the corpus past the plan's limit: nothing of it was written.
func CorpusImportLimitError(current, adding, limit int) *parley.Error {
	return &parley.Error{Kind: parley.KindRateLimited,
		Message: fmt.Sprintf("Corpus limit of the plan reached: %d new entries would make %d, over the plan's %d; nothing was written. Upgrade the plan or delete entries first",
			adding, current+adding, limit),
		Details: map[string]int{"current": current, "adding": adding, "limit": limit}}
}

// UpsertResultOf is what one write of UpsertCorpusBatch did.
type UpsertResultOf struct {
	Entry  parley.CorpusEntry
	Result UpsertResult
}

// UpsertCorpusBatch upserts every write as UpsertCorpus does, all in one
// transaction: all are written or none (the caller has left out the items it
// refused). The plan's limit applies to the creates of the whole batch.
func (d *Knowledge) UpsertCorpusBatch(ctx context.Context, tenantID string, limit int, ws []CorpusWrite) ([]UpsertResultOf, error) {
	out := make([]UpsertResultOf, 0, len(ws))
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		if err := pgbase.LockTenant(ctx, tx, tenantID); err != nil {
			return fmt.Errorf("locking tenant: %w", err)
		}
		var ids []string
		for _, w := range ws {
			if w.ExternalID.Set && !w.ExternalID.Null {
				ids = append(ids, w.ExternalID.Value)
			}
		}
		var current, updates int
		if err := tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM corpus_entries WHERE tenant_id = $1),
			(SELECT count(*) FROM corpus_entries WHERE tenant_id = $1 AND external_id = ANY($2))`,
			tenantID, ids).Scan(&current, &updates); err != nil {
			return fmt.Errorf("counting corpus: %w", err)
		}
		if adding := len(ws) - updates; current+adding > limit {
			return CorpusImportLimitError(current, adding, limit)
		}
		for _, w := range ws {
			e, res, err := upsertCorpus(ctx, tx, tenantID, limit, w)
			if err != nil {
				return err
			}
			out = append(out, UpsertResultOf{Entry: e, Result: res})
		}
		return d.enqueueEmbed(ctx, tx, tenantID)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
