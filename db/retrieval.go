package db

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
)

// promptScope is the WHERE clause shared by the prompt queries: the tenant's
// active entries for one segment ($2; NULL means only the entries of every
// segment) plus the entries that apply to every segment.
const promptScope = ` WHERE c.tenant_id = $1 AND c.is_active AND (c.segment_id IS NULL OR c.segment_id = $2::uuid)`

// promptSegment turns a segment id into the $2 of promptScope.
func promptSegment(segmentID string) (*string, error) {
	if segmentID == "" {
		return nil, nil
	}
	if !looksLikeUUID(segmentID) {
		return nil, parley.Errorf(parley.KindNotFound, "Segment not found")
	}
	return &segmentID, nil
}

// PromptCorpus returns the entries a conversation's system prompt draws
// from: the tenant's active entries for the segment (or for every segment),
// in the visitor's language, highest priority first, then most recently
// updated, at most limit.
//
// An entry matches the locale when it has none, or when its language part
// equals the locale's: "fr" matches "fr-CA" and "fr-CA" matches "fr" and
// "fr-FR", since a French visitor reads any French entry. An empty locale
// (language unknown) applies no locale filter.
func (d *DB) PromptCorpus(ctx context.Context, tenantID, segmentID, locale string, limit int) ([]parley.CorpusEntry, error) {
	if limit <= 0 {
		return nil, nil
	}
	seg, err := promptSegment(segmentID)
	if err != nil {
		return nil, err
	}
	rows, _ := d.pool.Query(ctx, `SELECT `+corpusColumns+corpusFrom+promptScope+fmt.Sprintf(localeCondition, 3)+`
		ORDER BY c.priority DESC, c.updated_at DESC, c.id LIMIT $4`,
		tenantID, seg, parley.LocaleLanguage(locale), limit)
	entries, err := pgx.CollectRows(rows, pgx.RowToStructByName[parley.CorpusEntry])
	if err != nil {
		return nil, fmt.Errorf("loading prompt corpus: %w", err)
	}
	return entries, nil
}

// localeCondition keeps the entries in the language of the locale in
// parameter $%[1]d (see PromptCorpus).
const localeCondition = `
		AND ($%[1]d = '' OR c.locale IS NULL OR lower(split_part(c.locale, '-', 1)) = $%[1]d)`

// HasCorpusSummaries reports whether any active entry applying to the
// segment and the locale (as PromptCorpus) has a summary: its content is
// then only reachable through the explore_corpus tool, which the chat must
// inject (EXPLORE_CORPUS). A blank summary counts as none, as in the prompt.
func (d *DB) HasCorpusSummaries(ctx context.Context, tenantID, segmentID, locale string) (bool, error) {
	seg, err := promptSegment(segmentID)
	if err != nil {
		return false, err
	}
	var found bool
	err = d.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM corpus_entries c`+promptScope+fmt.Sprintf(localeCondition, 3)+`
		AND btrim(c.summary) <> '')`, tenantID, seg, parley.LocaleLanguage(locale)).Scan(&found)
	if err != nil {
		return false, fmt.Errorf("checking corpus summaries: %w", err)
	}
	return found, nil
}

// anyWordQuery is the tsquery matching an entry that holds any of the
// meaningful words of the text in $%[1]d: the words of each language's
// stemmer OR-ed (stop words dropped by each), English and French (the
// languages the stored documents are stemmed in most; an entry without a
// locale is English plus the words as written). websearch_to_tsquery's AND
// of every word missed "Puncture repair" for "How much does a puncture
// repair cost?" on "much"; ranking (ts_rank_cd) then puts the entries
// holding most of the words, nearest together, first.
const anyWordQuery = `(coalesce(nullif(replace(plainto_tsquery('english', $%[1]d)::text, ' & ', ' | '), '')::tsquery, ''::tsquery) ||
	coalesce(nullif(replace(plainto_tsquery('french', $%[1]d)::text, ' & ', ' | '), '')::tsquery, ''::tsquery))`

// ExploreCorpus returns the full entries applying to the segment and the
// locale (as PromptCorpus) that match query (an entry's title, or any of
// the meaningful words of the query: anyWordQuery), an exact title first,
// then by cover-density rank of the words (titles weigh most), priority,
// and last by id, at most limit: what the explore_corpus tool reads.
func (d *DB) ExploreCorpus(ctx context.Context, tenantID, segmentID, locale, query string, limit int) ([]parley.CorpusEntry, error) {
	query = strings.TrimSpace(query)
	if limit <= 0 || query == "" {
		return nil, nil
	}
	seg, err := promptSegment(segmentID)
	if err != nil {
		return nil, err
	}
	words := fmt.Sprintf(anyWordQuery, 3)
	rows, _ := d.pool.Query(ctx, `SELECT `+corpusColumns+corpusFrom+promptScope+`
			AND (c.search @@ `+words+` OR c.title ILIKE '%' || $4 || '%')`+
		fmt.Sprintf(localeCondition, 6)+`
		ORDER BY lower(c.title) = lower($3) DESC,
			ts_rank_cd('{0.1, 0.2, 0.4, 1.0}', c.search, `+words+`) DESC,
			c.priority DESC, c.id
		LIMIT $5`, tenantID, seg, query, escapeLike(query), limit, parley.LocaleLanguage(locale))
	entries, err := pgx.CollectRows(rows, pgx.RowToStructByName[parley.CorpusEntry])
	if err != nil {
		return nil, fmt.Errorf("exploring corpus: %w", err)
	}
	return entries, nil
}
