package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/web/webtest"
)

// BenchmarkIdempotentCreate is what an Idempotency-Key costs a create of
// the management API (POST /corpus, an upsert on one externalId, so that
// the knowledge base does not grow): without a key, with a new key each
// time (the key claimed, the request run, its answer kept: two statements
// more), and the same key sent again (the answer replayed, nothing run).
func BenchmarkIdempotentCreate(b *testing.B) {
	ctx := context.Background()
	slug := fmt.Sprintf("idem-bench-%d", time.Now().UnixNano())
	store, _, ts, p := webtest.NewBench(b, parley.NewTenantInput{Slug: slug, Name: "Idempotency bench", Plan: "builder"})
	tok, nt := auth.NewToken(p.ID, "bench", []string{auth.ScopeCorpusWrite}, false)
	if _, err := store.CreateToken(ctx, nt); err != nil {
		b.Fatal(err)
	}
	const body = `{"title":"Opening hours","content":"We open at nine.","externalId":"hours"}`
	post := func(b *testing.B, key string) {
		req, _ := http.NewRequest("POST", ts.URL+"/tenants/"+slug+"/corpus", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		resp, err := ts.Client().Do(req)
		if err != nil || resp.StatusCode >= 300 {
			b.Fatal(err, resp)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	// The three kinds interleaved, so that the machine's other load falls
	// on each alike; each one's mean is reported.
	var spent [3]time.Duration
	n := 0
	for b.Loop() {
		n++
		for k, key := range []string{"", fmt.Sprintf("bench-%d", n), "bench-1"} {
			start := time.Now()
			post(b, key)
			spent[k] += time.Since(start)
		}
	}
	for k, name := range []string{"plain", "keyed", "replayed"} {
		b.ReportMetric(float64(spent[k].Microseconds())/float64(n)/1000, name+"-ms/create")
	}
}
