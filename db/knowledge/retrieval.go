package knowledge

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// PromptScope is the WHERE clause shared by the prompt queries: the tenant's
// active entries for one segment ($2; NULL means only the entries of every
// segment) plus the entries that apply to every segment.
const PromptScope = ` WHERE c.tenant_id = $1 AND c.is_active AND (c.segment_id IS NULL OR c.segment_id = $2::uuid)`

// PromptSegment turns a segment id into the $2 of PromptScope.
func PromptSegment(segmentID string) (*string, error) {
	if segmentID == "" {
		return nil, nil
	}
	if !pgbase.LooksLikeUUID(segmentID) {
		return nil, parley.Errorf(parley.KindNotFound, "Segment not found")
	}
	return &segmentID, nil
}

// PromptCorpus returns the entries a conversation's system prompt draws
// from: the tenant's active entries for the segment (or for every segment),
// in the visitor's language, highest priority first, then by title and
// content (promptOrder), at most limit.
//
// An entry matches the locale when it has none, or when its language part
// equals the locale's: "fr" matches "fr-CA" and "fr-CA" matches "fr" and
// "fr-FR", since a French visitor reads any French entry. An empty locale
// (language unknown) applies no locale filter.
func (d *Knowledge) PromptCorpus(ctx context.Context, tenantID, segmentID, locale string, limit int) ([]parley.CorpusEntry, error) {
	if limit <= 0 {
		return nil, nil
	}
	seg, err := PromptSegment(segmentID)
	if err != nil {
		return nil, err
	}
	rows, _ := d.pool.Query(ctx, PromptCorpusSQL, tenantID, seg, parley.LocaleLanguage(locale), limit)
	entries, err := pgx.CollectRows(rows, pgx.RowToStructByName[parley.CorpusEntry])
	if err != nil {
		return nil, fmt.Errorf("loading prompt corpus: %w", err)
	}
	return entries, nil
}

// promptOrder is the order of the prompt's candidates and of equal search
// ranks: one that depends on the entries alone (the index
// corpus_prompt_order), so that the same knowledge base loaded in another
// order, or at another time, gives the same prompt. Titles compare byte by
// byte, as the turn's ranking (agent/rank's Corpus) breaks its ties.
const promptOrder = `c.priority DESC, c.title COLLATE "C", md5(c.content), c.id`

// titleQueryWords is the most words of a query matched as a part of
// titles by ExploreCorpus.
const titleQueryWords = 4

// PromptCorpusSQL reads the prompt's candidates: the entries of tenant $1
// for segment $2 in language $3, at most $4, in promptOrder (PromptCorpus,
// PromptData).
var PromptCorpusSQL = `SELECT ` + corpusColumns + corpusFrom + PromptScope + fmt.Sprintf(LocaleCondition, 3) + `
		ORDER BY ` + promptOrder + ` LIMIT $4`

// LocaleCondition keeps the entries in the language of the locale in
// parameter $%[1]d (see PromptCorpus).
const LocaleCondition = `
		AND ($%[1]d = '' OR c.locale IS NULL OR lower(split_part(c.locale, '-', 1)) = $%[1]d)`

// ExploreCorpus returns the full entries applying to the segment and the
// locale (as PromptCorpus) that match query, at most limit: what the
// explore_corpus tool reads, and what a large tenant's turn adds to the
// prompt's candidates. An entry matches on its title holding the query, or
// on any of the query's telling words (questionTerms, searchQueries: the
// rarest, typos read as the nearest word of the tenant's entries); an
// exact title comes first, then the cover-density rank of every word of
// the query (titles weigh most), then priority, title and content. The
// query's words include the other terms of the synonym groups (the
// tenant's, parley.SynonymsOf) one of whose terms it holds. Any word, not every
// word: websearch_to_tsquery's AND missed "Puncture repair" for "How much
// does a puncture repair cost?" on "much". Two round trips.
func (d *Knowledge) ExploreCorpus(ctx context.Context, tenantID, segmentID, locale, query string, synonyms [][]string, limit int) ([]parley.CorpusEntry, error) {
	query = strings.TrimSpace(query)
	if limit <= 0 || query == "" {
		return nil, nil
	}
	seg, err := PromptSegment(segmentID)
	if err != nil {
		return nil, err
	}
	words := query
	if extra := parley.SynonymsOf(query, synonyms); len(extra) > 0 {
		words += "\n" + strings.Join(extra, "\n")
	}
	terms, size, err := d.questionTerms(ctx, tenantID, words)
	if err != nil {
		return nil, err
	}
	match, score := searchQueries(terms, size)
	// A title holding the query matters for a query of a few words (the
	// model's "puncture repair", "punct"); a visitor's whole question is
	// no title's part, and its trigrams cost 2 ms at 50,000 entries.
	args := []any{tenantID, seg, match, score, limit, parley.LocaleLanguage(locale), query}
	titleMatch := ""
	if len(strings.Fields(query)) <= titleQueryWords {
		titleMatch = ` OR c.title ILIKE '%' || $8 || '%'`
		args = append(args, pgbase.EscapeLike(query))
	}
	// Equal ranks fall to priority, title and content as in promptOrder;
	// the content itself rather than its hash, which would be computed for
	// every entry matched, and is compared only on a tie.
	rows, _ := d.pool.Query(ctx, `SELECT `+corpusColumns+corpusFrom+PromptScope+`
			AND (c.search @@ $3::tsquery`+titleMatch+`)`+
		fmt.Sprintf(LocaleCondition, 6)+`
		ORDER BY lower(c.title) = lower($7) DESC,
			ts_rank_cd('{0.1, 0.2, 0.4, 1.0}', c.search, $4::tsquery) DESC,
			c.priority DESC, c.title COLLATE "C", c.content COLLATE "C", c.id
		LIMIT $5`, args...)
	entries, err := pgx.CollectRows(rows, pgx.RowToStructByName[parley.CorpusEntry])
	if err != nil {
		return nil, fmt.Errorf("exploring corpus: %w", err)
	}
	return entries, nil
}
