package listing_test

// BenchmarkConversationStatsResolution compares, in one run on the same
// data, the conversation stats with the resolution (what the API and the
// analytics page compute) and without it (the stats as they were before
// it), against the database scripts/bench-conversations.sh seeds (100,000
// conversations, 1,000,000 messages): BENCHMARKS.md, "Conversations list,
// stats and export".
//
//	PARLEY_BENCH_STATS_DATABASE_URL=postgres://.../parley_bench PARLEY_BENCH_STATS_TENANT=bench \
//	go test -run '^$' -bench BenchmarkConversationStatsResolution -benchtime 30x ./db/listing/
//
// Each iteration runs every query both ways, in alternating order, so that
// the machine's drift hits both alike; each case reports both sides' p50
// and p95 in ms and the ratio of the p50s (after over before).

import (
	"cmp"
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/parley/parley/db/listing"
)

func BenchmarkConversationStatsResolution(b *testing.B) {
	url, slug := os.Getenv("PARLEY_BENCH_STATS_DATABASE_URL"), cmp.Or(os.Getenv("PARLEY_BENCH_STATS_TENANT"), "bench")
	if url == "" {
		b.Skip("PARLEY_BENCH_STATS_DATABASE_URL names a database seeded by scripts/bench-conversations.sh")
	}
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	var tenantID string
	if err := pool.QueryRow(ctx, `SELECT id FROM tenants WHERE slug = $1`, slug).Scan(&tenantID); err != nil {
		b.Fatal(err)
	}
	l := listing.New(pool)
	today := time.Now().UTC().Truncate(24 * time.Hour)
	window := func(days int, granularity, channel string) listing.StatsQuery {
		return listing.StatsQuery{Filter: listing.ConversationFilter{From: today.AddDate(0, 0, -days+1), To: today.AddDate(0, 0, 1), Channel: channel},
			Granularity: granularity, Location: "UTC"}
	}
	cases := []struct {
		name    string
		queries []listing.StatsQuery
	}{
		// the API benchmark's cases (web/conversations_load_bench_test.go)
		{"30d", []listing.StatsQuery{window(30, "day", ""), window(30, "day", "web"), window(30, "week", "")}},
		{"365d", []listing.StatsQuery{window(365, "month", ""), window(365, "week", "")}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			run := func(q listing.StatsQuery) time.Duration {
				start := time.Now()
				if _, err := l.ConversationStats(ctx, tenantID, q); err != nil {
					b.Fatal(err)
				}
				return time.Since(start)
			}
			for _, q := range tc.queries { // warm the caches and the connections
				run(q)
				run(listing.WithoutResolution(q))
			}
			var before, after []time.Duration
			b.ResetTimer()
			for i := range b.N {
				for j, q := range tc.queries {
					if (i+j)%2 == 0 {
						before = append(before, run(listing.WithoutResolution(q)))
						after = append(after, run(q))
					} else {
						after = append(after, run(q))
						before = append(before, run(listing.WithoutResolution(q)))
					}
				}
			}
			b.StopTimer()
			ms := func(d []time.Duration, p float64) float64 {
				slices.Sort(d)
				return float64(d[min(len(d)-1, int(p*float64(len(d))))].Microseconds()) / 1000
			}
			b.ReportMetric(ms(before, 0.5), "before-p50-ms")
			b.ReportMetric(ms(before, 0.95), "before-p95-ms")
			b.ReportMetric(ms(after, 0.5), "after-p50-ms")
			b.ReportMetric(ms(after, 0.95), "after-p95-ms")
			b.ReportMetric(ms(after, 0.5)/ms(before, 0.5), "ratio-p50")
			b.ReportMetric(0, "ns/op")
		})
	}
}
