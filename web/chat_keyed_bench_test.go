package web_test

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkChatTurnKeyed is what the widget's Idempotency-Key costs a turn:
// rounds of first messages at c1 with and without the key, interleaved in
// one run, reporting each kind's time to the first byte (p50) and
// PostgreSQL's time and statements a turn. With a key, the session's state
// read in the lease's round trip also reads the session's message of that
// key, and the message's insert checks it: no statement more.
func BenchmarkChatTurnKeyed(b *testing.B) {
	cb := newChatBench(b)
	ctx := context.Background()
	slug, _ := cb.tenant(b)
	const rounds = 4
	var ttfb [2][]time.Duration
	var stmts, dbNanos [2]int64
	var turns [2]int
	for r := range 2 * rounds {
		keyed := r%2 == 1
		k := 0
		if keyed {
			k = 1
		}
		n := max(b.N/rounds, 50)
		got, _ := runLoad(b, n, 1, func(int) (timing, error) {
			seq := benchSessionSeq.Add(1)
			h := map[string]string{"X-Forwarded-For": benchAddr()}
			if keyed {
				h["Idempotency-Key"] = fmt.Sprintf("key-%d", seq)
			}
			q0, t0 := cb.queries.n.Load(), cb.queries.nanos.Load()
			tm, _, err := cb.streamRequest(ctx, cb.ts.URL+"/chat/"+slug,
				fmt.Sprintf(`{"message":"Hello, what do you sell?","sessionId":"keyed-%d"}`, seq), h, false)
			stmts[k] += cb.queries.n.Load() - q0
			dbNanos[k] += cb.queries.nanos.Load() - t0
			return tm, err
		})
		if r < 2 {
			continue // the first pair warms connections and caches
		}
		ttfb[k] = append(ttfb[k], pick(got, func(t timing) time.Duration { return t.ttfb })...)
		turns[k] += n
	}
	for k, name := range []string{"plain", "keyed"} {
		b.ReportMetric(quantile(ttfb[k], 0.50), name+"-ttfb-p50-ms")
		b.ReportMetric(float64(stmts[k])/float64(turns[k]), name+"-db-statements/turn")
		b.ReportMetric(float64(dbNanos[k])/float64(turns[k])/float64(time.Millisecond), name+"-db-ms/turn")
	}
}
