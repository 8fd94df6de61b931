package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/parley/parley/web"
	"github.com/parley/parley/web/webtest"
)

// BenchmarkChatMetrics measures what metrics cost a chat message
// (BENCHMARKS.md, "Metrics"): two servers on the same database and model,
// one with metrics off and one with them on (PARLEY_METRICS_TOKEN), take
// visitors' first messages at concurrency 50 in 20 interleaved rounds (their
// order swapped every round); the ratio of their rates is reported, over
// the whole run and as the median of the rounds' ratios.
//
//	go test -run '^$' -bench BenchmarkChatMetrics -benchtime 10000x ./web/
func BenchmarkChatMetrics(b *testing.B) {
	const conc, rounds = 50, 20
	off := newChatBench(b)
	cfg := webtest.Config(b, webtest.ChatEnv(off.model.URL),
		map[string]string{"PARLEY_DB_MAX_CONNS": "40", "PARLEY_METRICS_TOKEN": metricsToken})
	srv, err := web.NewServer(cfg, off.store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	on := *off
	on.ts = httptest.NewServer(srv.Echo)
	b.Cleanup(on.ts.Close)
	slug, _ := off.tenant(b)
	ctx := context.Background()
	turn := func(cb *chatBench) func(int) (timing, error) {
		return func(int) (timing, error) { t, _, err := cb.chatTurn(ctx, slug, false); return t, err }
	}
	// Warm connections and caches outside the measurement.
	runLoad(b, 4*conc, conc, turn(off))
	runLoad(b, 4*conc, conc, turn(&on))

	per := max(b.N/rounds, conc)
	var tookOff, tookOn time.Duration
	ratios := make([]float64, rounds) // each round's on/off: a load that drifts between rounds cancels out
	b.ResetTimer()
	for r := range rounds {
		first, second := off, &on
		if r%2 == 1 {
			first, second = second, first
		}
		var roundOff, roundOn time.Duration
		for _, cb := range []*chatBench{first, second} {
			_, took := runLoad(b, per, conc, turn(cb))
			if cb == off {
				roundOff = took
			} else {
				roundOn = took
			}
		}
		tookOff, tookOn = tookOff+roundOff, tookOn+roundOn
		ratios[r] = roundOff.Seconds() / roundOn.Seconds()
	}
	b.StopTimer()
	slices.Sort(ratios)
	_, got := scrape(b, on.client, on.ts.URL+"/metrics", metricsToken)
	key := `parley_chat_turns_total{channel="web",outcome="answered"}`
	if n := int(got[key]); n != per*rounds+4*conc {
		b.Errorf("%s = %d, want %d", key, n, per*rounds+4*conc)
	}
	b.ReportMetric(float64(per*rounds)/tookOff.Seconds(), "off-first-messages/s")
	b.ReportMetric(float64(per*rounds)/tookOn.Seconds(), "on-first-messages/s")
	b.ReportMetric(tookOff.Seconds()/tookOn.Seconds(), "on/off")
	b.ReportMetric((ratios[rounds/2-1]+ratios[rounds/2])/2, "on/off-median-round")
}
