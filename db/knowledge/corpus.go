package knowledge

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

const corpusColumns = `c.id, c.tenant_id, c.segment_id, s.slug AS segment_slug, s.name AS segment_name,
	c.title, c.content, c.summary, c.priority, c.is_active, c.external_id, c.source, c.source_url,
	c.locale, c.tags, c.sync_etag, c.sync_last_modified, c.synced_at, c.sync_error, c.sync_error_at,
	c.created_at, c.updated_at`

const corpusFrom = ` FROM corpus_entries c LEFT JOIN segments s ON s.id = c.segment_id `

// CorpusWrite is a corpus create or partial update. SegmentID is resolved by
// the caller from a slug; Set with Null means "every segment".
type CorpusWrite struct {
	Title      parley.Opt[string]
	Content    parley.Opt[string]
	Summary    parley.Opt[string]
	Priority   parley.Opt[int]
	IsActive   parley.Opt[bool]
	ExternalID parley.Opt[string]
	Source     parley.Opt[string]
	SourceURL  parley.Opt[string]
	Locale     parley.Opt[string]
	Tags       parley.Opt[[]string]
	SegmentID  parley.Opt[string]
}

// CorpusQuery filters and pages a corpus list.
type CorpusQuery struct {
	SegmentID string // empty: every entry
	Search    string
	Page      int
	Limit     int
}

// searchCondition matches an entry against free text: full-text search in the
// English and language-neutral configurations (so stemmed English and other
// languages both match) or a title substring (pg_trgm index).
const searchCondition = `(c.search @@ (websearch_to_tsquery('english', $%[1]d) || websearch_to_tsquery('simple', $%[1]d))
	OR c.title ILIKE '%%' || $%[2]d || '%%')`

// searchCountCap bounds how many search matches are counted: past it the
// total is reported as a lower bound (CorpusPage.TotalCapped), as search
// engines do, and the page is read straight off the priority index.
const searchCountCap = 500

// CorpusPage is one page of a corpus list.
type CorpusPage struct {
	Entries []parley.CorpusEntry
	Total   int
	// TotalCapped is set when a search matched more than searchCountCap
	// entries: Total is then searchCountCap, a lower bound.
	TotalCapped bool
}

// ListCorpus returns one page of a tenant's corpus, highest priority first,
// then most recently updated. A search matches the words as typed
// (searchCondition) or as the tenant's lexicon and synonyms read them
// (typedQuery: a typo as the word the entries use, a synonym as its
// group's other terms).
//
// A search first collects up to searchCountCap+1 matching ids from the GIN
// indexes. Fewer: the page is cut from those ids. More: the page comes off
// the priority index, which finds enough matches within a few rows when
// matches are that common, and the total is reported as capped; counting
// every match of a word that sits in most entries would cost more than the
// page is worth.
func (d *Knowledge) ListCorpus(ctx context.Context, tenantID string, q CorpusQuery) (CorpusPage, error) {
	where := " WHERE c.tenant_id = $1"
	args := []any{tenantID}
	if q.SegmentID != "" {
		args = append(args, q.SegmentID)
		where += fmt.Sprintf(" AND c.segment_id = $%d", len(args))
	}
	if q.Search != "" {
		typed, err := d.typedQuery(ctx, tenantID, q.Search)
		if err != nil {
			return CorpusPage{}, err
		}
		args = append(args, q.Search, pgbase.EscapeLike(q.Search))
		cond := fmt.Sprintf(searchCondition, len(args)-1, len(args))
		if typed != "" {
			args = append(args, typed)
			cond = fmt.Sprintf("(%s OR c.search @@ $%d::tsquery)", cond, len(args))
		}
		where += " AND " + cond
	}
	page := CorpusPage{}
	offset := (q.Page - 1) * q.Limit
	const order = " ORDER BY c.priority DESC, c.updated_at DESC, c.id"
	pageSQL := `SELECT ` + corpusColumns + corpusFrom + where + order +
		fmt.Sprintf(" LIMIT $%d OFFSET $%d", len(args)+1, len(args)+2)
	if q.Search == "" {
		if err := d.pool.QueryRow(ctx, `SELECT count(*) FROM corpus_entries c`+where, args...).Scan(&page.Total); err != nil {
			return page, fmt.Errorf("counting corpus: %w", err)
		}
	} else {
		ids, err := d.matchingCorpusIDs(ctx, where, args)
		if err != nil {
			return page, err
		}
		if len(ids) > searchCountCap {
			page.Total, page.TotalCapped = searchCountCap, true
		} else {
			page.Total = len(ids)
			if len(ids) == 0 {
				return page, nil
			}
			pageSQL = `SELECT ` + corpusColumns + corpusFrom + ` WHERE c.tenant_id = $1 AND c.id = ANY($2::uuid[])` + order + ` LIMIT $3 OFFSET $4`
			args = []any{tenantID, ids}
		}
	}
	args = append(args, q.Limit, offset)
	rows, _ := d.pool.Query(ctx, pageSQL, args...)
	entries, err := pgx.CollectRows(rows, pgx.RowToStructByName[parley.CorpusEntry])
	if err != nil {
		return page, fmt.Errorf("listing corpus: %w", err)
	}
	page.Entries = entries
	return page, nil
}

// matchingCorpusIDs returns up to searchCountCap+1 ids of entries matching
// where. The matches come from the GIN indexes, through the statement's
// shape: the planner prices testing a row's text far below its real cost
// (the document is decompressed for each row), and under a LIMIT it would
// walk the tenant's rows expecting to meet 501 matches soon; for a word in a
// few percent of 50,000 entries that took 14 ms instead of 3. A MATERIALIZED
// CTE is planned for all its rows, which makes the bitmap scans of the GIN
// indexes the cheaper plan unless matches are dense (then a sequential scan
// does meet them soon); it is still read lazily, so the LIMIT stops it at
// 501. It goes as an unnamed statement (pgx.QueryExecModeExec), planned for
// this query's words each time: a cached statement gets PostgreSQL's generic
// plan after five runs, which guesses 250 matches for any word and took
// 7.7 ms for a word in every entry instead of 2.8. One round trip, no
// planner settings (BenchmarkCorpusSearch, BenchmarkCorpusSearchCommonWord).
func (d *Knowledge) matchingCorpusIDs(ctx context.Context, where string, args []any) ([]string, error) {
	rows, _ := d.pool.Query(ctx, `WITH m AS MATERIALIZED (SELECT c.id FROM corpus_entries c`+where+`)
		SELECT id FROM m`+fmt.Sprintf(" LIMIT %d", searchCountCap+1), append([]any{pgx.QueryExecModeExec}, args...)...)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("searching corpus: %w", err)
	}
	return ids, nil
}

// CorpusEntry returns one of the tenant's entries.
func (d *Knowledge) CorpusEntry(ctx context.Context, tenantID, id string) (parley.CorpusEntry, error) {
	return corpusEntry(ctx, d.pool, tenantID, id)
}

func corpusEntry(ctx context.Context, q pgbase.Querier, tenantID, id string) (parley.CorpusEntry, error) {
	if !pgbase.LooksLikeUUID(id) {
		return parley.CorpusEntry{}, parley.Errorf(parley.KindNotFound, "Corpus entry not found")
	}
	rows, _ := q.Query(ctx, `SELECT `+corpusColumns+corpusFrom+` WHERE c.tenant_id = $1 AND c.id = $2`, tenantID, id)
	e, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.CorpusEntry])
	if err != nil {
		return parley.CorpusEntry{}, pgbase.NotFound(err, "Corpus entry")
	}
	return e, nil
}

// CountCorpus counts a tenant's entries.
func (d *Knowledge) CountCorpus(ctx context.Context, tenantID string) (int, error) {
	var n int
	err := d.pool.QueryRow(ctx, `SELECT count(*) FROM corpus_entries WHERE tenant_id = $1`, tenantID).Scan(&n)
	return n, err
}

// CorpusLimitError is the 429 of a create beyond the plan's corpus limit.
func CorpusLimitError(current, limit int) *parley.Error {
	return &parley.Error{Kind: parley.KindRateLimited,
		Message: fmt.Sprintf("Corpus limit of the plan reached (%d of %d entries): upgrade the plan or delete entries", current, limit),
		Details: map[string]int{"current": current, "limit": limit}}
}

// DefaultCorpusPriority is the priority of an entry created without one.
const DefaultCorpusPriority = 5

// UpsertResult says what an upsert did.
type UpsertResult int

// What an upsert did.
const (
	Created UpsertResult = iota
	Updated
	Unchanged
)

// UpsertCorpus creates an entry or, when ExternalID names an existing one,
// updates it (only the fields set). The plan's limit applies to creates. One
// transaction; the tenant row lock makes the limit hold under concurrency.
func (d *Knowledge) UpsertCorpus(ctx context.Context, tenantID string, limit int, w CorpusWrite) (parley.CorpusEntry, UpsertResult, error) {
	var e parley.CorpusEntry
	var res UpsertResult
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		var err error
		e, res, err = upsertCorpus(ctx, tx, tenantID, limit, w)
		if err != nil || res == Unchanged {
			return err
		}
		return d.enqueueEmbed(ctx, tx, tenantID)
	})
	return e, res, err
}

func upsertCorpus(ctx context.Context, tx pgx.Tx, tenantID string, limit int, w CorpusWrite) (parley.CorpusEntry, UpsertResult, error) {
	if err := pgbase.LockTenant(ctx, tx, tenantID); err != nil {
		return parley.CorpusEntry{}, 0, fmt.Errorf("locking tenant: %w", err)
	}
	if w.ExternalID.Set && !w.ExternalID.Null {
		var id string
		err := tx.QueryRow(ctx, `SELECT id FROM corpus_entries WHERE tenant_id = $1 AND external_id = $2`, tenantID, w.ExternalID.Value).Scan(&id)
		if err == nil {
			before, err := corpusEntry(ctx, tx, tenantID, id)
			if err != nil {
				return parley.CorpusEntry{}, 0, err
			}
			if w.sameAs(before) {
				return before, Unchanged, nil
			}
			e, err := updateCorpus(ctx, tx, tenantID, id, w)
			return e, Updated, err
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return parley.CorpusEntry{}, 0, fmt.Errorf("finding entry by externalId: %w", err)
		}
	}
	var n int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM corpus_entries WHERE tenant_id = $1`, tenantID).Scan(&n); err != nil {
		return parley.CorpusEntry{}, 0, fmt.Errorf("counting corpus: %w", err)
	}
	if n >= limit {
		return parley.CorpusEntry{}, 0, CorpusLimitError(n, limit)
	}
	priority := DefaultCorpusPriority
	if w.Priority.Set && !w.Priority.Null {
		priority = w.Priority.Value
	}
	active := true
	if w.IsActive.Set && !w.IsActive.Null {
		active = w.IsActive.Value
	}
	tags := w.Tags.Value
	if tags == nil {
		tags = []string{}
	}
	var id string
	err := tx.QueryRow(ctx, `INSERT INTO corpus_entries (tenant_id, segment_id, title, content, summary, priority,
		is_active, external_id, source, source_url, locale, tags)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id`,
		tenantID, w.SegmentID.Ptr(), w.Title.Value, w.Content.Value, w.Summary.Ptr(), priority, active,
		w.ExternalID.Ptr(), w.Source.Ptr(), w.SourceURL.Ptr(), w.Locale.Ptr(), tags).Scan(&id)
	if err != nil {
		return parley.CorpusEntry{}, 0, fmt.Errorf("inserting corpus entry: %w", err)
	}
	e, err := corpusEntry(ctx, tx, tenantID, id)
	return e, Created, err
}

// sameAs reports whether applying w to e would change nothing.
func (w CorpusWrite) sameAs(e parley.CorpusEntry) bool {
	str := func(o parley.Opt[string], cur *string) bool {
		if !o.Set {
			return true
		}
		if o.Null || cur == nil {
			return o.Null == (cur == nil)
		}
		return o.Value == *cur
	}
	if w.Title.Set && w.Title.Value != e.Title || w.Content.Set && w.Content.Value != e.Content ||
		w.Priority.Set && w.Priority.Value != e.Priority || w.IsActive.Set && w.IsActive.Value != e.IsActive {
		return false
	}
	if w.Tags.Set && strings.Join(w.Tags.Value, "\x00") != strings.Join(e.Tags, "\x00") {
		return false
	}
	return str(w.Summary, e.Summary) && str(w.Source, e.Source) && str(w.SourceURL, e.SourceURL) &&
		str(w.Locale, e.Locale) && str(w.SegmentID, e.SegmentID)
}

// UpdateCorpus applies a partial update to one of the tenant's entries.
func (d *Knowledge) UpdateCorpus(ctx context.Context, tenantID, id string, w CorpusWrite) (parley.CorpusEntry, error) {
	if !pgbase.LooksLikeUUID(id) {
		return parley.CorpusEntry{}, parley.Errorf(parley.KindNotFound, "Corpus entry not found")
	}
	var e parley.CorpusEntry
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		var err error
		if e, err = updateCorpus(ctx, tx, tenantID, id, w); err != nil {
			return err
		}
		return d.enqueueEmbed(ctx, tx, tenantID)
	})
	return e, err
}

func updateCorpus(ctx context.Context, tx pgx.Tx, tenantID, id string, w CorpusWrite) (parley.CorpusEntry, error) {
	var sets []pgbase.SetClause
	sets = pgbase.AddSet(sets, "title", w.Title)
	sets = pgbase.AddSet(sets, "content", w.Content)
	sets = pgbase.AddSet(sets, "summary", w.Summary)
	sets = pgbase.AddSet(sets, "priority", w.Priority)
	sets = pgbase.AddSet(sets, "is_active", w.IsActive)
	sets = pgbase.AddSet(sets, "external_id", w.ExternalID)
	sets = pgbase.AddSet(sets, "source", w.Source)
	sets = pgbase.AddSet(sets, "source_url", w.SourceURL)
	sets = pgbase.AddSet(sets, "locale", w.Locale)
	sets = pgbase.AddListSet(sets, "tags", w.Tags)
	sets = pgbase.AddSet(sets, "segment_id", w.SegmentID)
	err := pgbase.UpdateTenantRow(ctx, tx, "corpus_entries", "Corpus entry", tenantID, id, sets)
	if pgbase.IsUniqueViolation(err, "corpus_external_id") {
		return parley.CorpusEntry{}, &parley.Error{Kind: parley.KindConflict, Message: "Another entry already has this externalId",
			Details: map[string]string{"externalId": "already used by another entry"}}
	}
	if err != nil {
		return parley.CorpusEntry{}, fmt.Errorf("updating corpus entry: %w", err)
	}
	return corpusEntry(ctx, tx, tenantID, id)
}

// DeleteCorpus deletes one of the tenant's entries.
func (d *Knowledge) DeleteCorpus(ctx context.Context, tenantID, id string) error {
	return pgbase.DeleteTenantRow(ctx, d.pool, "corpus_entries", "Corpus entry", tenantID, id)
}
