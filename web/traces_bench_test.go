package web_test

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/web"
	"github.com/parley/parley/web/tracing"
	"github.com/parley/parley/web/webtest"
)

// BenchmarkChatTraces measures what traces cost a chat's first messages:
// two servers in this process on the test database, alike but that one
// traces every request (sampled always) through the SDK's batching
// processor to its in-memory exporter, as it would to a collector, and
// the other traces nothing (no OTEL_* variable). Both log JSON (to
// nowhere), and the collector runs at serve's GOGC (400). b.N first messages go to each at c50, interleaved in blocks of
// 100 (off then on, then on then off, and so on), so that a busy moment of
// the host falls on both alike. Reported: the ratio of their rates over
// the whole run (the bar: >= 0.97), and the median, minimum and
// maximum of the blocks' ratios.
//
//	go test -run '^$' -bench BenchmarkChatTraces -benchtime 3000x ./web/
func BenchmarkChatTraces(b *testing.B) { benchObserved(b, false) }

// BenchmarkChatObserved is BenchmarkChatTraces with the metrics on too
// (PARLEY_METRICS_TOKEN) in the server that traces: what an operator who
// turns both on pays, against neither (the bar: >= 0.97), in one
// run. The run ends by scraping its /metrics, which must count every turn.
//
//	go test -run '^$' -bench BenchmarkChatObserved -benchtime 3000x ./web/
func BenchmarkChatObserved(b *testing.B) { benchObserved(b, true) }

func benchObserved(b *testing.B, metrics bool) {
	const block, conc = 100, 50
	// The collector's target of parley serve (cmd/parley's serveGCPercent):
	// what traces allocate costs what it costs there.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	off := newTracesBench(b, nil, nil)
	var env map[string]string
	if metrics {
		env = map[string]string{"PARLEY_METRICS_TOKEN": metricsToken}
	}
	on := newTracesBench(b, tp, env)
	ctx := context.Background()
	slugOff, _ := off.tenant(b)
	slugOn, _ := on.tenant(b)
	run := func(cb *chatBench, slug string, n int) time.Duration {
		_, elapsed := runLoad(b, n, conc, func(int) (timing, error) { t, _, err := cb.chatTurn(ctx, slug, false); return t, err })
		return elapsed
	}
	run(off, slugOff, 200)
	run(on, slugOn, 200)
	_ = tp.ForceFlush(ctx)
	exp.Reset()

	b.ResetTimer()
	var ratios []float64
	var tOff, tOn time.Duration
	spans := 0
	blocks := max(b.N/block, 1)
	for i := range blocks {
		var a, t time.Duration
		if i%2 == 0 {
			a, t = run(off, slugOff, block), run(on, slugOn, block)
		} else {
			t, a = run(on, slugOn, block), run(off, slugOff, block)
		}
		tOff, tOn = tOff+a, tOn+t
		ratios = append(ratios, a.Seconds()/t.Seconds())
		_ = tp.ForceFlush(ctx)
		spans += len(exp.GetSpans())
		exp.Reset()
	}
	b.StopTimer()
	if metrics {
		_, got := scrape(b, on.client, on.ts.URL+"/metrics", metricsToken)
		key := `parley_chat_turns_total{channel="web",outcome="answered"}`
		if n := int(got[key]); n != blocks*block+200 {
			b.Errorf("%s = %d, want %d", key, n, blocks*block+200)
		}
	}
	s := slices.Clone(ratios)
	slices.Sort(s)
	b.ReportMetric(tOff.Seconds()/tOn.Seconds(), "on/off")
	b.ReportMetric((s[(len(s)-1)/2]+s[len(s)/2])/2, "on/off-block-median")
	b.ReportMetric(s[0], "on/off-block-min")
	b.ReportMetric(s[len(s)-1], "on/off-block-max")
	b.ReportMetric(float64(blocks*block)/tOff.Seconds(), "off-turns/s")
	b.ReportMetric(float64(blocks*block)/tOn.Seconds(), "on-turns/s")
	b.ReportMetric(float64(spans)/float64(blocks*block), "spans/turn")
}

// newTracesBench is newChatBench's server with traces to tp (nil: off),
// its pool's statements traced as db.Open's would be, and env's variables
// set on top of the bench's own.
func newTracesBench(b *testing.B, tp *sdktrace.TracerProvider, env map[string]string) *chatBench {
	b.Helper()
	dbtest.New(b)
	model := newBenchModel(b)
	vars := map[string]string{"PARLEY_DB_MAX_CONNS": "40"}
	maps.Copy(vars, env)
	cfg := webtest.Config(b, webtest.ChatEnv(model.URL), vars)
	if tp != nil {
		cfg.Traces = tp
	}
	pcfg, err := pgxpool.ParseConfig(dbtest.URL())
	if err != nil {
		b.Fatal(err)
	}
	pcfg.MaxConns = 40
	if t := tracing.QueryTracer(cfg.Traces); t != nil {
		pcfg.ConnConfig.Tracer = t
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), pcfg)
	if err != nil {
		b.Fatal(err)
	}
	store, err := db.New(pool, cfg.DBOptions()...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(store.Close)
	srv, err := web.NewServer(cfg, store, slog.New(cfg.LogHandler(slog.NewJSONHandler(io.Discard, nil))))
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv.Echo)
	b.Cleanup(ts.Close)
	key, _ := auth.ParseKey(webtest.SecretKey)
	box, _ := auth.NewBox(key)
	tr := &http.Transport{MaxIdleConns: 2000, MaxIdleConnsPerHost: 2000, DisableCompression: true}
	b.Cleanup(tr.CloseIdleConnections)
	return &chatBench{ts: ts, model: model, store: store, box: box, pws: srv.Base.Passwords,
		client: &http.Client{Transport: tr}, queries: &queryCounter{}}
}
