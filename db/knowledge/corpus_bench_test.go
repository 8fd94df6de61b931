package knowledge_test

import (
	"context"
	"crypto/md5"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/db/knowledge"
)

var (
	benchOnce   sync.Once
	benchTenant string
	benchSeg    string
)

// seedCorpus gives one tenant 50,000 entries of varied English text (about
// 600 characters each) in two segments; other tenants' rows are untouched.
func seedCorpus(b *testing.B, store *db.DB) {
	benchOnce.Do(func() {
		ctx := context.Background()
		slug := fmt.Sprintf("bench-%d", time.Now().UnixNano())
		err := store.Pool().QueryRow(ctx, `INSERT INTO tenants (slug, name, plan, visitor_signing_key)
			VALUES ($1, 'Bench', 'scale', '\x00') RETURNING id`, slug).Scan(&benchTenant)
		if err != nil {
			b.Fatal(err)
		}
		if err := store.Pool().QueryRow(ctx, `INSERT INTO segments (tenant_id, slug, name, system_prompt, is_default)
			VALUES ($1, 'default', 'Default', 'p', true) RETURNING id`, benchTenant).Scan(&benchSeg); err != nil {
			b.Fatal(err)
		}
		// A vocabulary of 3,000 pseudo-words drawn with a Zipf-like skew (word
		// k about as frequent as 1/k), so that common words match thousands of
		// entries and rare ones a handful, as in real knowledge bases.
		conn, err := store.Pool().Acquire(ctx) // temporary tables live on one connection
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Release()
		for _, stmt := range []string{
			`CREATE TEMP TABLE vocab AS
				SELECT i, translate(substr(md5(i::text), 1, 4 + i % 5), '0123456789', 'ghijklmnop') AS w
				FROM generate_series(0, 2999) i`,
			`CREATE TEMP TABLE picks AS
				SELECT g, n, floor(exp(ln(3000) * ((g * 7919 + n * 104729) % 10007) / 10007.0))::int - 1 AS i
				FROM generate_series(1, 50000) g, generate_series(1, 90) n`,
		} {
			if _, err := conn.Exec(ctx, stmt); err != nil {
				b.Fatal(err)
			}
		}
		_, err = conn.Exec(ctx, `INSERT INTO corpus_entries (tenant_id, segment_id, title, content, summary, priority, tags)
			SELECT $1, CASE WHEN g % 2 = 0 THEN $2::uuid END,
				initcap(string_agg(v.w, ' ' ORDER BY n) FILTER (WHERE n <= 4)),
				string_agg(v.w, ' ' ORDER BY n),
				CASE WHEN g % 3 = 0 THEN string_agg(v.w, ' ' ORDER BY n) FILTER (WHERE n > 80) END,
				g % 101, ARRAY[min(v.w)]
			FROM picks p JOIN vocab v ON v.i = p.i
			GROUP BY g`, benchTenant, benchSeg)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := conn.Exec(ctx, `DROP TABLE picks, vocab`); err != nil {
			b.Fatal(err)
		}
		// The lexicon the question search reads, as the background job
		// builds it.
		if err := store.RefreshCorpusLexicon(ctx, benchTenant); err != nil {
			b.Fatal(err)
		}
		if _, err := store.Pool().Exec(ctx, `VACUUM ANALYZE corpus_entries, corpus_lexicon`); err != nil {
			b.Fatal(err)
		}
	})
}

// vocabWord is word i of the seeded vocabulary (same formula as the SQL).
func vocabWord(i int) string {
	sum := fmt.Sprintf("%x", md5.Sum([]byte(strconv.Itoa(i))))[:4+i%5]
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return 'g' + (r - '0')
		}
		return r
	}, sum)
}

// runTimed runs fn b.N times and reports p50 and p95 latencies.
func runTimed(b *testing.B, fn func(i int) error) {
	b.Helper()
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if err := fn(i); err != nil {
			b.Fatal(err)
		}
		durations = append(durations, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(durations)
	b.ReportMetric(float64(durations[len(durations)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(durations[len(durations)*95/100].Microseconds())/1000, "p95-ms")
}

// BenchmarkCorpusSearch: full-text and title search over a 50,000-entry
// tenant corpus, first page of 20. Target: p95 under 10 ms.
func BenchmarkCorpusSearch(b *testing.B) {
	store := dbtest.New(b)
	seedCorpus(b, store)
	// Words from frequent (in about 5% of entries) to rare, single and
	// two-word queries, and a title substring. The few top-ranked words that
	// sit in most entries behave like stop words; BenchmarkCorpusSearchCommonWord
	// measures that worst case apart.
	queries := []string{vocabWord(20), vocabWord(40), vocabWord(150), vocabWord(400), vocabWord(1200), vocabWord(2500),
		vocabWord(30) + " " + vocabWord(90), vocabWord(1200) + " " + vocabWord(2200), vocabWord(150)[:3]}
	runTimed(b, func(i int) error {
		_, err := store.ListCorpus(context.Background(), benchTenant, knowledge.CorpusQuery{Search: queries[i%len(queries)], Page: 1, Limit: 20})
		return err
	})
}

// BenchmarkCorpusSearchCommonWord searches for the commonest word, present in
// every entry: the worst case, where every entry matches and is counted.
func BenchmarkCorpusSearchCommonWord(b *testing.B) {
	store := dbtest.New(b)
	seedCorpus(b, store)
	runTimed(b, func(i int) error {
		_, err := store.ListCorpus(context.Background(), benchTenant, knowledge.CorpusQuery{Search: vocabWord(0), Page: 1, Limit: 20})
		return err
	})
}

// BenchmarkCorpusList: unfiltered and segment-filtered pages of 20, by priority.
func BenchmarkCorpusList(b *testing.B) {
	store := dbtest.New(b)
	seedCorpus(b, store)
	runTimed(b, func(i int) error {
		q := knowledge.CorpusQuery{Page: 1 + i%50, Limit: 20}
		if i%2 == 1 {
			q.SegmentID = benchSeg
		}
		_, err := store.ListCorpus(context.Background(), benchTenant, q)
		return err
	})
}

// BenchmarkExploreCorpus: the question search that explore_corpus and a
// large tenant's turn run (ExploreCorpus: any word, ranked), over the
// 50,000-entry tenant, the best 20 in the visitor's language. Questions of
// five words, from common to rare, as visitors type them. Target (issue 34):
// p95 under 10 ms.
func BenchmarkExploreCorpus(b *testing.B) {
	store := dbtest.New(b)
	seedCorpus(b, store)
	var questions []string
	for q := range 50 {
		var words []string
		for k := range 5 {
			words = append(words, vocabWord((q*131+k*977)%3000))
		}
		questions = append(questions, strings.Join(words, " "))
	}
	runTimed(b, func(i int) error {
		_, err := store.ExploreCorpus(context.Background(), benchTenant, "", "en", questions[i%len(questions)], nil, 20)
		return err
	})
}

// BenchmarkPromptCorpus: the prompt's candidates of a 50,000-entry tenant
// (PromptCorpus, 200 by priority, title and content), for the default
// segment.
func BenchmarkPromptCorpus(b *testing.B) {
	store := dbtest.New(b)
	seedCorpus(b, store)
	runTimed(b, func(i int) error {
		_, err := store.PromptCorpus(context.Background(), benchTenant, benchSeg, "", 200)
		return err
	})
}

// BenchmarkRefreshCorpusLexicon rebuilds the lexicon of the 50,000-entry
// tenant after one entry changed: what the background scan does after an
// owner's edit.
func BenchmarkRefreshCorpusLexicon(b *testing.B) {
	store := dbtest.New(b)
	seedCorpus(b, store)
	ctx := context.Background()
	runTimed(b, func(i int) error {
		if _, err := store.Pool().Exec(ctx, `UPDATE corpus_entries SET content = content || ' ' || $2
			WHERE id = (SELECT id FROM corpus_entries WHERE tenant_id = $1 ORDER BY id LIMIT 1)`, benchTenant, fmt.Sprintf("edit%d", i)); err != nil {
			return err
		}
		return store.RefreshCorpusLexicon(ctx, benchTenant)
	})
}
