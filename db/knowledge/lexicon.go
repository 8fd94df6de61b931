package knowledge

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// RefreshCorpusLexicon rebuilds the tenant's lexicon (corpus_lexicon: each
// word of its active entries' search documents and how many entries hold
// it) and records the configuration version it was built at, in one
// transaction holding the tenant's lexicon lock, so that two rebuilds of
// one tenant (a scan retried while the last still runs, two instances)
// take turns. The version is read before the entries: an entry changed in
// between is in the lexicon, and the version older than it has the next
// scan build it again, never the reverse. A tenant without entries keeps an
// empty lexicon.
func (d *Knowledge) RefreshCorpusLexicon(ctx context.Context, tenantID string) error {
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		var version int64
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('corpus_lexicon'), hashtext($1))`, tenantID); err != nil {
			return fmt.Errorf("locking the corpus lexicon: %w", err)
		}
		if err := tx.QueryRow(ctx, `SELECT config_version FROM tenants WHERE id = $1`, tenantID).Scan(&version); err != nil {
			return fmt.Errorf("reading the tenant's configuration version: %w", pgbase.NotFound(err, "Tenant"))
		}
		if _, err := tx.Exec(ctx, `DELETE FROM corpus_lexicon WHERE tenant_id = $1`, tenantID); err != nil {
			return fmt.Errorf("clearing the corpus lexicon: %w", err)
		}
		// ts_stat runs the query it is given: the tenant id goes in as a
		// quoted literal of a uuid.
		if _, err := tx.Exec(ctx, `INSERT INTO corpus_lexicon (tenant_id, lexeme, ndoc)
			SELECT $1, word, ndoc FROM ts_stat(format('SELECT search FROM corpus_entries WHERE tenant_id = %L AND is_active', $1::uuid))`,
			tenantID); err != nil {
			return fmt.Errorf("building the corpus lexicon: %w", err)
		}
		_, err := tx.Exec(ctx, `INSERT INTO corpus_lexicon_state (tenant_id, config_version, entries)
			VALUES ($1, $2, (SELECT count(*) FROM corpus_entries WHERE tenant_id = $1 AND is_active))
			ON CONFLICT (tenant_id) DO UPDATE SET config_version = excluded.config_version,
				entries = excluded.entries, built_at = now()`, tenantID, version)
		if err != nil {
			return fmt.Errorf("recording the corpus lexicon: %w", err)
		}
		return nil
	})
}

// StaleCorpusLexicons returns up to limit tenants whose lexicon was built
// at another configuration version than theirs (or never, for a tenant
// with entries), the longest waiting first.
func (d *Knowledge) StaleCorpusLexicons(ctx context.Context, limit int) ([]string, error) {
	rows, _ := d.pool.Query(ctx, `SELECT t.id FROM tenants t
		LEFT JOIN corpus_lexicon_state s ON s.tenant_id = t.id
		WHERE s.tenant_id IS NOT NULL AND s.config_version <> t.config_version
			OR s.tenant_id IS NULL AND EXISTS (SELECT 1 FROM corpus_entries c WHERE c.tenant_id = t.id)
		ORDER BY s.built_at NULLS FIRST, t.id LIMIT $1`, limit)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("listing stale corpus lexicons: %w", err)
	}
	return ids, nil
}

// matchBudget is how many entries the question search may match through
// its telling words: a word's entries count against it, the rarest word
// first, and the words past it only weigh in the score (as the common
// terms of a search engine's query). Ranking an entry reads its search
// document (about 10 µs); a five-word question with a word in half of a
// 50,000-entry tenant's entries ranked 24,000 of them in 450 ms. A tenant
// of no more entries than the budget matches on every word.
const matchBudget = 500

// minLexiconEntries is the fewest entries whose lexicon says a word is in
// too many of them to match on.
const minLexiconEntries = 20

// questionTerm is a word of a question as the tenant's lexicon knows it.
type questionTerm struct {
	lexeme string
	ndoc   int // entries holding it; 0 when unknown
}

// nearLexemesSQL is the five words of tenant $1's lexicon most like the
// word %[1]s by trigrams, as rows (lexeme, ndoc), when the condition %[2]s
// (ending in AND) holds: the candidates nearestLexeme reads typos among.
const nearLexemesSQL = `SELECT n.lexeme, n.ndoc FROM corpus_lexicon n
	WHERE %[2]s n.tenant_id = $1 AND n.lexeme %% %[1]s
	ORDER BY similarity(n.lexeme, %[1]s) DESC, n.lexeme LIMIT 5`

// nearestLexeme is the word of near (nearLexemesSQL's) that one of typed
// is a typo of: the fewest edits within parley.TypoEdits, then the word
// more entries hold, then the first; false when none is that near.
func nearestLexeme(typed []string, near []questionTerm) (questionTerm, bool) {
	var best questionTerm
	bestDist := -1
	for _, n := range near {
		for _, w := range typed {
			limit := parley.TypoEdits(w)
			dist := parley.EditDistance([]rune(w), []rune(n.lexeme), limit)
			if dist <= limit && (bestDist < 0 || dist < bestDist || dist == bestDist && n.ndoc > best.ndoc) {
				best, bestDist = n, dist
			}
		}
	}
	return best, bestDist >= 0
}

// questionTerms reads the question's words (its English and French
// lexemes, as the stored documents are stemmed) against the tenant's
// lexicon, in one round trip: a word of five letters or more that no entry
// holds comes with its nearest words by trigram, and the nearest within
// one edit (two from nine letters) is kept beside it, as the turn's ranking (agent/rank's Corpus) reads
// typos. Without a lexicon yet (built in the background), every word
// counts as rare.
//
// entries is how many active entries the lexicon was built over (0
// without one).
func (d *Knowledge) questionTerms(ctx context.Context, tenantID, question string) (terms []questionTerm, entries int, err error) {
	rows, err := d.pool.Query(ctx, `WITH w AS (
			SELECT DISTINCT lexeme FROM unnest(tsvector_to_array(to_tsvector('english', $2) || to_tsvector('french', $2))) lexeme)
		SELECT w.lexeme, coalesce(l.ndoc, 0), n.lexeme, coalesce(n.ndoc, 0),
			coalesce((SELECT entries FROM corpus_lexicon_state WHERE tenant_id = $1), 0)
		FROM w
		LEFT JOIN corpus_lexicon l ON l.tenant_id = $1 AND l.lexeme = w.lexeme
		LEFT JOIN LATERAL (`+fmt.Sprintf(nearLexemesSQL, "w.lexeme", "l.lexeme IS NULL AND length(w.lexeme) >= 5 AND")+`) n ON true
		ORDER BY w.lexeme`, tenantID, question)
	if err != nil {
		return nil, 0, fmt.Errorf("reading the question's words: %w", err)
	}
	near := map[string][]questionTerm{}
	for rows.Next() {
		var word string
		var ndoc, nearNdoc int
		var nearWord *string
		if err := rows.Scan(&word, &ndoc, &nearWord, &nearNdoc, &entries); err != nil {
			return nil, 0, fmt.Errorf("reading the question's words: %w", err)
		}
		if len(terms) == 0 || terms[len(terms)-1].lexeme != word {
			terms = append(terms, questionTerm{word, ndoc})
		}
		if nearWord != nil {
			near[word] = append(near[word], questionTerm{*nearWord, nearNdoc})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("reading the question's words: %w", err)
	}
	for _, word := range slices.Sorted(maps.Keys(near)) {
		n, ok := nearestLexeme([]string{word}, near[word])
		if ok && !slices.ContainsFunc(terms, func(t questionTerm) bool { return t.lexeme == n.lexeme }) {
			terms = append(terms, n)
		}
	}
	return terms, entries, nil
}

// searchQueries is the tsquery texts of a question's terms: match, the
// entries the search ranks (its rarest words OR-ed, within matchBudget,
// words no entry holds included: they cost nothing), and score, every term
// OR-ed, which ranks them. When every word some entry holds is commoner
// than the budget, match adds the two rarest of them AND-ed. A tenant of
// no more than matchBudget entries (entries) matches on every word, but
// for a word in more than half of the entries of a tenant of at least
// minLexiconEntries: it only scores. Both are "" without terms.
func searchQueries(terms []questionTerm, entries int) (match, score string) {
	terms = slices.Clone(terms)
	slices.SortFunc(terms, func(a, b questionTerm) int {
		return cmp.Or(cmp.Compare(a.ndoc, b.ndoc), strings.Compare(a.lexeme, b.lexeme))
	})
	var matched, all, common []string
	total, held := 0, false
	for _, t := range terms {
		all = append(all, tsLexeme(t.lexeme))
		switch {
		case entries >= minLexiconEntries && 2*t.ndoc > entries:
			// in most entries: tells none apart, weighs next to nothing
			// in the rank (as a stop word), and matching on it ranked the
			// whole corpus for "what do you sell?" in a shop's.
		case entries <= matchBudget || total+t.ndoc <= matchBudget:
			total += t.ndoc
			held = held || t.ndoc > 0
			matched = append(matched, tsLexeme(t.lexeme))
		default:
			common = append(common, tsLexeme(t.lexeme))
		}
	}
	if !held && len(common) > 0 {
		matched = append(matched, strings.Join(common[:min(2, len(common))], " & "))
	}
	return strings.Join(matched, " | "), strings.Join(all, " | ")
}

// tsLexeme quotes a lexeme for a tsquery's text: quotes and backslashes
// doubled.
func tsLexeme(s string) string {
	return "'" + strings.NewReplacer(`'`, `''`, `\`, `\\`).Replace(s) + "'"
}

// typedQuery is the tsquery text a list search matches besides the words
// as typed (searchCondition), when the tenant's lexicon or synonyms read
// them otherwise: every word of search (English stop words left out, as
// websearch_to_tsquery does), each as any of its English and French
// lexemes, the lexicon's nearest word when no entry holds it (a typo, as
// questionTerms reads them), and the terms of the synonym groups holding
// it, all AND-ed as the typed search is. "" when it would match nothing
// the typed words do not: no typo read, no synonym. Two statements in one
// round trip, and one more when a synonym group applies.
func (d *Knowledge) typedQuery(ctx context.Context, tenantID, search string) (string, error) {
	words := parley.Words(search)
	if len(words) == 0 || len(words) > 20 {
		return "", nil
	}
	batch := &pgx.Batch{}
	batch.Queue(`SELECT w.ord, tsvector_to_array(to_tsvector('english', w.word)),
			tsvector_to_array(to_tsvector('english', w.word) || to_tsvector('french', w.word)), n.lexeme, coalesce(n.ndoc, 0)
		FROM unnest($2::text[]) WITH ORDINALITY AS w (word, ord)
		LEFT JOIN LATERAL (`+fmt.Sprintf(nearLexemesSQL, "w.word", `length(w.word) >= 5 AND NOT EXISTS (SELECT 1 FROM corpus_lexicon k WHERE k.tenant_id = $1
				AND k.lexeme = ANY (tsvector_to_array(to_tsvector('english', w.word) || to_tsvector('french', w.word)))) AND`)+`) n ON true
		ORDER BY w.ord`, tenantID, words)
	batch.Queue(`SELECT `+SynonymGroupsSQL, tenantID)
	br := d.pool.SendBatch(ctx, batch)
	defer br.Close()
	rows, _ := br.Query()
	type word struct {
		english, lexemes []string
		near             []questionTerm
	}
	read := make([]word, len(words))
	for rows.Next() {
		var ord, nearNdoc int
		var w word
		var nearWord *string
		if err := rows.Scan(&ord, &w.english, &w.lexemes, &nearWord, &nearNdoc); err != nil {
			return "", fmt.Errorf("reading the search's words: %w", err)
		}
		r := &read[ord-1]
		r.english, r.lexemes = w.english, w.lexemes
		if nearWord != nil {
			r.near = append(r.near, questionTerm{*nearWord, nearNdoc})
		}
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("reading the search's words: %w", err)
	}
	var groups [][]string
	if err := br.QueryRow().Scan(&groups); err != nil {
		return "", fmt.Errorf("reading synonyms: %w", err)
	}
	// the synonym terms of every word, read as tsquery phrases at once
	var terms []string
	for _, w := range words {
		terms = append(terms, parley.SynonymsOf(w, groups)...)
	}
	phrases, err := d.synonymPhrases(ctx, terms)
	if err != nil {
		return "", err
	}
	changed := false
	var and []string
	for i, w := range read {
		if len(w.english) == 0 {
			continue // an English stop word
		}
		alts := map[string]bool{}
		var or []string
		add := func(q string) {
			if !alts[q] {
				alts[q] = true
				or = append(or, q)
			}
		}
		for _, l := range w.lexemes {
			add(tsLexeme(l))
		}
		if n, ok := nearestLexeme(append([]string{words[i]}, w.lexemes...), w.near); ok {
			add(tsLexeme(n.lexeme))
			changed = true
		}
		for _, term := range parley.SynonymsOf(words[i], groups) {
			if p := phrases[term]; p != "" {
				add("(" + p + ")")
				changed = true
			}
		}
		and = append(and, "("+strings.Join(or, " | ")+")")
	}
	if !changed || len(and) == 0 {
		return "", nil
	}
	return strings.Join(and, " & "), nil
}

// synonymPhrases is the tsquery texts of synonym terms, by term: each a
// phrase of its English stems or of its words as written (the two ways
// entries are indexed); a term of stop words only has none. One statement,
// none without terms.
func (d *Knowledge) synonymPhrases(ctx context.Context, terms []string) (map[string]string, error) {
	if len(terms) == 0 {
		return nil, nil
	}
	rows, _ := d.pool.Query(ctx, `SELECT DISTINCT t, (phraseto_tsquery('english', t) || phraseto_tsquery('simple', t))::text
		FROM unnest($1::text[]) t WHERE phraseto_tsquery('english', t)::text <> ''`, terms)
	phrases := map[string]string{}
	for rows.Next() {
		var term, phrase string
		if err := rows.Scan(&term, &phrase); err != nil {
			return nil, fmt.Errorf("reading synonym terms: %w", err)
		}
		phrases[term] = phrase
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading synonym terms: %w", err)
	}
	return phrases, nil
}
