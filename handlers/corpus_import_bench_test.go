package handlers

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/manage"
)

// importBenchRows is the size of the benchmarked file: the scale plan's
// whole corpus limit, in one file under the 5 MiB cap.
const importBenchRows = 50000

// importBenchCSV is a file of n rows (title, content, segment, priority and,
// with withID, externalId) of varied English-like words, about 100 bytes a
// row. Every title is different.
func importBenchCSV(n int, withID bool) []byte {
	words := strings.Fields(`opening hours refund policy shipping delivery invoice account password
		warranty return order payment card transfer support contact address holiday weekend
		price discount student business plan upgrade cancel subscription bike repair service`)
	var sb strings.Builder
	sb.WriteString("title,content,segment,priority")
	if withID {
		sb.WriteString(",externalId")
	}
	sb.WriteString("\n")
	for i := range n {
		w := func(k int) string { return words[(i*7+k*13+i/k)%len(words)] }
		seg := ""
		if i%2 == 0 {
			seg = "default"
		}
		fmt.Fprintf(&sb, "%s %s %d,\"%s %s, %s %s %s %s %s.\",%s,%d",
			w(1), w(2), i, w(3), w(4), w(5), w(6), w(7), w(8), w(9), seg, i%101)
		if withID {
			fmt.Fprintf(&sb, ",row-%d", i)
		}
		sb.WriteString("\n")
	}
	return []byte(sb.String())
}

// BenchmarkCorpusImport imports a 50,000-row CSV file into an empty corpus
// through the endpoint's own code (importCorpusCSV: parse, check every row,
// then db.ImportCorpus), a new tenant per iteration: with an externalId
// column, and without (where every row is compared with the corpus, empty
// here, for the rule on equal titles and contents).
func BenchmarkCorpusImport(b *testing.B) {
	for _, tc := range []struct {
		name   string
		withID bool
	}{{"externalId", true}, {"titleContent", false}} {
		b.Run(tc.name, func(b *testing.B) {
			store := dbtest.New(b)
			h := &Base{DB: store, Manage: &manage.Service{DB: store}}
			data := importBenchCSV(importBenchRows, tc.withID)
			if len(data) > maxCSVBytes {
				b.Fatalf("the file is %d bytes, over the %d-byte cap", len(data), maxCSVBytes)
			}
			ctx := context.Background()
			b.SetBytes(int64(len(data)))
			var took time.Duration
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				t := benchTenant(b, store, ctx, i)
				b.StartTimer()
				start := time.Now()
				rep, err := h.ImportCorpusCSV(ctx, t, data)
				took += time.Since(start)
				if err != nil || rep.Imported != importBenchRows || rep.Skipped != 0 || len(rep.Errors) != 0 {
					b.Fatalf("import: %v imported %d, skipped %d, %+v", err, rep.Imported, rep.Skipped, rep.Errors)
				}
			}
			b.ReportMetric(float64(importBenchRows*b.N)/took.Seconds(), "rows/s")
		})
	}
}

// BenchmarkCorpusReimport imports the same 50,000-row file into a corpus
// that already holds it: every row skipped. With externalId every row is an
// upsert that would change nothing; without, every row's title and content
// are those of an entry (compared with the tenant's whole corpus).
func BenchmarkCorpusReimport(b *testing.B) {
	for _, tc := range []struct {
		name   string
		withID bool
	}{{"externalId", true}, {"titleContent", false}} {
		b.Run(tc.name, func(b *testing.B) {
			store := dbtest.New(b)
			h := &Base{DB: store, Manage: &manage.Service{DB: store}}
			data := importBenchCSV(importBenchRows, tc.withID)
			ctx := context.Background()
			t := benchTenant(b, store, ctx, 0)
			if rep, err := h.ImportCorpusCSV(ctx, t, data); err != nil || rep.Imported != importBenchRows {
				b.Fatalf("first import: %v %+v", err, rep)
			}
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				rep, err := h.ImportCorpusCSV(ctx, t, data)
				if err != nil || rep.Imported != 0 || rep.Skipped != importBenchRows {
					b.Fatalf("re-import: %v imported %d, skipped %d, %+v", err, rep.Imported, rep.Skipped, rep.Errors)
				}
			}
			b.ReportMetric(float64(importBenchRows*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// benchTenant creates a tenant on the scale plan (50,000 entries) with its
// default segment.
func benchTenant(b *testing.B, store *db.DB, ctx context.Context, i int) parley.Tenant {
	b.Helper()
	t := parley.Tenant{Slug: fmt.Sprintf("import-bench-%d-%d", time.Now().UnixNano(), i), Plan: "scale"}
	err := store.Pool().QueryRow(ctx, `INSERT INTO tenants (slug, name, plan, visitor_signing_key)
		VALUES ($1, 'Bench', 'scale', '\x00') RETURNING id`, t.Slug).Scan(&t.ID)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := store.Pool().Exec(ctx, `INSERT INTO segments (tenant_id, slug, name, system_prompt, is_default)
		VALUES ($1, 'default', 'Default', 'p', true)`, t.ID); err != nil {
		b.Fatal(err)
	}
	return t
}
