package web_test

// Load benchmarks of POST /chat/{slug} (BENCHMARKS.md, "Chat endpoint").
// The real server runs on a real TCP listener with the managed OpenAI
// provider pointed at benchModel, a zero-latency OpenAI-compatible server in
// this process; every request comes from its own X-Forwarded-For address,
// trusted from loopback, so that the per-address limit does not apply. The
// pool is opened with 40 connections, not the test database's 20.
//
//	go test -run '^$' -bench BenchmarkChat -benchtime 2000x ./web/
//
// PARLEY_BENCH_HEAPPROFILE=<file> writes a heap profile while the 1,000
// streams of BenchmarkChatOpenStreams are open through the server.

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/web"
	"github.com/parley/parley/web/webtest"
)

// benchModel is a zero-latency OpenAI-compatible chat completions server: it
// always streams the same few chunks. A request whose body contains
// benchHoldOpen stalls after the first content chunk until the client goes
// away (or the benchmark ends).
type benchModel struct {
	URL  string // base URL, ending in /v1
	srv  *httptest.Server
	stop chan struct{}
}

const benchHoldOpen = "hold-open"

var (
	benchChunkRole = benchChunk(`{"role":"assistant","content":""}`, "null")
	benchChunks    = [][]byte{benchChunk(`{"content":"Hello, "}`, "null"),
		benchChunk(`{"content":"we sell blue "}`, "null"), benchChunk(`{"content":"widgets."}`, "null")}
	benchChunkStop = benchChunk(`{}`, `"stop"`)
	benchDone      = []byte("data: [DONE]\n\n")
)

func benchChunk(delta, finish string) []byte {
	return fmt.Appendf(nil, `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"test-model","choices":[{"index":0,"delta":%s,"logprobs":null,"finish_reason":%s}]}`+"\n\n", delta, finish)
}

func newBenchModel(tb testing.TB) *benchModel { return newBenchModelOver(tb, false) }

// newBenchModelOver is the bench model, over TLS with HTTP/2 when h2 (as
// the hosted providers serve their APIs), else plain HTTP/1.1 (as a model
// server on the operator's own network may).
func newBenchModelOver(tb testing.TB, h2 bool) *benchModel {
	m := &benchModel{stop: make(chan struct{})}
	m.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !bytes.Contains(body, []byte(`"stream":true`)) {
			http.Error(w, "benchModel streams only", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		f := w.(http.Flusher)
		_, _ = w.Write(benchChunkRole)
		for i, c := range benchChunks {
			_, _ = w.Write(c)
			f.Flush()
			if i == 0 && bytes.Contains(body, []byte(benchHoldOpen)) {
				select {
				case <-r.Context().Done():
				case <-m.stop:
				}
				return
			}
		}
		_, _ = w.Write(benchChunkStop)
		_, _ = w.Write(benchDone)
		f.Flush()
	}))
	if h2 {
		m.srv.EnableHTTP2 = true
		m.srv.StartTLS()
	} else {
		m.srv.Start()
	}
	tb.Cleanup(m.srv.Close)
	tb.Cleanup(func() { close(m.stop) })
	m.URL = m.srv.URL + "/v1"
	return m
}

// chatBench is a running server, its model and a client with a pool large
// enough for every stream.
type chatBench struct {
	ts     *httptest.Server
	model  *benchModel
	store  *db.DB
	box    *auth.Box
	pws    *auth.Passwords
	client *http.Client
	// modelClient is the straight client's to the model: client, or one
	// over TLS and HTTP/2 for a model served so.
	modelClient *http.Client
	queries     *queryCounter
}

func newChatBench(b *testing.B) *chatBench { return newChatBenchOver(b, false) }

// newChatBenchOver is newChatBench with its model over TLS and HTTP/2 when
// h2 (newBenchModelOver): the server trusts the model's certificate, and
// the straight client reaches the model over HTTP/2 as well.
func newChatBenchOver(b *testing.B, h2 bool) *chatBench {
	b.Helper()
	dbtest.New(b) // creates the binary's database
	// The pool db.Open would make (40 connections, as PARLEY_DB_MAX_CONNS
	// below), with a tracer counting the statements and their time.
	pcfg, err := pgxpool.ParseConfig(dbtest.URL())
	if err != nil {
		b.Fatal(err)
	}
	pcfg.MaxConns = 40
	tracer := &queryCounter{}
	pcfg.ConnConfig.Tracer = tracer
	pool, err := pgxpool.NewWithConfig(context.Background(), pcfg)
	if err != nil {
		b.Fatal(err)
	}
	store, err := db.New(pool)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(store.Close)
	model := newBenchModelOver(b, h2)
	cfg := webtest.Config(b, webtest.ChatEnv(model.URL), map[string]string{"PARLEY_DB_MAX_CONNS": "40"})
	modelClient := (*http.Client)(nil)
	if h2 {
		roots := x509.NewCertPool()
		roots.AddCert(model.srv.Certificate())
		cfg.ModelTLS = &tls.Config{RootCAs: roots}
		mtr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, ForceAttemptHTTP2: true, DisableCompression: true}
		b.Cleanup(mtr.CloseIdleConnections)
		modelClient = &http.Client{Transport: mtr}
	}
	srv, err := web.NewServer(cfg, store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv.Echo)
	b.Cleanup(ts.Close)
	key, _ := auth.ParseKey(webtest.SecretKey)
	box, _ := auth.NewBox(key)
	tr := &http.Transport{MaxIdleConns: 2000, MaxIdleConnsPerHost: 2000, DisableCompression: true}
	b.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr}
	return &chatBench{ts: ts, model: model, store: store, box: box, pws: srv.Base.Passwords, client: client,
		modelClient: cmp.Or(modelClient, client), queries: tracer}
}

// queryCounter counts the statements sent to PostgreSQL and the time until
// each answered.
// queryCounter counts statements (n), round trips to PostgreSQL (trips: a
// query, or a batch or pipeline of several) and their time.
type queryCounter struct{ n, trips, nanos atomic.Int64 }

type queryStartKey struct{}

func (q *queryCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return context.WithValue(ctx, queryStartKey{}, time.Now())
}

func (q *queryCounter) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	if start, ok := ctx.Value(queryStartKey{}).(time.Time); ok {
		q.n.Add(1)
		q.trips.Add(1)
		q.nanos.Add(int64(time.Since(start)))
	}
}

// Batches count each of their statements, and their time once: they are
// one round trip.
func (q *queryCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return context.WithValue(ctx, queryStartKey{}, time.Now())
}

func (q *queryCounter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {
	q.n.Add(1)
}

func (q *queryCounter) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchEndData) {
	if start, ok := ctx.Value(queryStartKey{}).(time.Time); ok {
		q.trips.Add(1)
		q.nanos.Add(int64(time.Since(start)))
	}
}

// tenant provisions a scale-plan tenant whose monthly conversation limit
// (25,000 plus 1,000 per bot seat) is far above what a run starts.
func (cb *chatBench) tenant(b *testing.B) (slug, id string) {
	b.Helper()
	n := webtest.TenantSeq.Add(1)
	slug = fmt.Sprintf("bench%d-%d", time.Now().UnixNano()%1_000_000_000, n)
	p, err := auth.Provision(context.Background(), cb.store, cb.box, cb.pws, parley.NewTenantInput{
		Slug: slug, Name: "Bench " + slug, Plan: "scale", OwnerEmail: "owner@" + slug + ".test", OwnerPassword: "password-" + slug,
	})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := cb.store.Pool().Exec(context.Background(), `UPDATE tenants SET bot_seats = 1000 WHERE id = $1`, p.ID); err != nil {
		b.Fatal(err)
	}
	return slug, p.ID
}

var benchAddrSeq atomic.Int64

// benchAddr is an address no other request of the binary uses.
func benchAddr() string {
	n := benchAddrSeq.Add(1)
	return fmt.Sprintf("10.%d.%d.%d", 100+n>>16%100, n>>8&255, n&255)
}

var benchSessionSeq atomic.Int64

// timing is one answered request: time to the first SSE data byte after the
// request was written, and to the end of the answer.
type timing struct{ ttfb, total time.Duration }

// streamRequest posts body to url and reads the SSE answer. With hold, it
// returns after the first data event and leaves the body open (the caller
// closes it).
func (cb *chatBench) streamRequest(ctx context.Context, url, body string, hdr map[string]string, hold bool) (timing, *http.Response, error) {
	return cb.streamRequestWith(ctx, cb.client, url, body, hdr, hold)
}

// streamRequestWith is streamRequest through client.
func (cb *chatBench) streamRequestWith(ctx context.Context, client *http.Client, url, body string, hdr map[string]string, hold bool) (timing, *http.Response, error) {
	var wrote time.Time
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) { wrote = time.Now() },
	})
	req, err := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
	if err != nil {
		return timing{}, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return timing{}, nil, err
	}
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return timing{}, nil, fmt.Errorf("status %d: %s", resp.StatusCode, raw)
	}
	r := bufio.NewReader(resp.Body)
	var tm timing
	var last []byte
	for {
		line, err := r.ReadSlice('\n')
		if len(line) > 0 && bytes.HasPrefix(line, []byte("data:")) {
			if tm.ttfb == 0 {
				tm.ttfb = time.Since(wrote)
				if hold {
					return tm, resp, nil
				}
			}
			last = append(last[:0], line...)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			resp.Body.Close()
			return tm, nil, err
		}
	}
	resp.Body.Close()
	tm.total = time.Since(start)
	if tm.ttfb == 0 {
		return tm, nil, fmt.Errorf("no data event")
	}
	if !bytes.Contains(last, []byte(`"done":true`)) && !bytes.Contains(last, []byte("[DONE]")) {
		return tm, nil, fmt.Errorf("last event is not the end: %s", last)
	}
	return tm, nil, nil
}

// chatTurn sends one visitor message (a new session, from a new address) and
// reads the streamed answer to its done event.
func (cb *chatBench) chatTurn(ctx context.Context, slug string, hold bool) (timing, *http.Response, error) {
	return cb.sessionTurn(ctx, slug, fmt.Sprintf("bench-%d", benchSessionSeq.Add(1)), hold)
}

// sessionTurn sends one visitor message in session (from a new address).
func (cb *chatBench) sessionTurn(ctx context.Context, slug, session string, hold bool) (timing, *http.Response, error) {
	return cb.anonTurn(ctx, slug, session, "", hold)
}

// anonTurn is sessionTurn carrying the widget's anonymous id, when anon is
// not empty, as the widget sends every message.
func (cb *chatBench) anonTurn(ctx context.Context, slug, session, anon string, hold bool) (timing, *http.Response, error) {
	msg := "Hello, what do you sell?"
	if hold {
		msg += " " + benchHoldOpen
	}
	body := fmt.Sprintf(`{"message":%q,"sessionId":%q}`, msg, session)
	if anon != "" {
		body = fmt.Sprintf(`{"message":%q,"sessionId":%q,"anonymousId":%q}`, msg, session, anon)
	}
	return cb.streamRequest(ctx, cb.ts.URL+"/chat/"+slug, body, map[string]string{"X-Forwarded-For": benchAddr()}, hold)
}

// modelTurn is the same exchange straight with the model, the baseline the
// server's added time is measured against.
func (cb *chatBench) modelTurn(ctx context.Context, hold bool) (timing, *http.Response, error) {
	msg := "Hello, what do you sell?"
	if hold {
		msg += " " + benchHoldOpen
	}
	body := fmt.Sprintf(`{"model":"test-model","stream":true,"messages":[{"role":"user","content":%q}]}`, msg)
	return cb.streamRequestWith(ctx, cb.modelClient, cb.model.URL+"/chat/completions", body, nil, hold)
}

// runLoad runs n calls of turn over conc workers and returns their timings
// and the wall time.
func runLoad(b *testing.B, n, conc int, turn func(worker int) (timing, error)) ([]timing, time.Duration) {
	b.Helper()
	out := make([]timing, n)
	var next atomic.Int64
	var failed atomic.Pointer[error]
	var wg sync.WaitGroup
	start := time.Now()
	for w := range conc {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n || failed.Load() != nil {
					return
				}
				tm, err := turn(w)
				if err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
				out[i] = tm
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if e := failed.Load(); e != nil {
		b.Fatal(*e)
	}
	return out, elapsed
}

// quantile is the q-quantile (nearest rank) of ds, in milliseconds.
func quantile(ds []time.Duration, q float64) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := max(int(math.Ceil(q*float64(len(s))))-1, 0)
	return float64(s[i]) / float64(time.Millisecond)
}

func pick(ts []timing, f func(timing) time.Duration) []time.Duration {
	out := make([]time.Duration, len(ts))
	for i, t := range ts {
		out[i] = f(t)
	}
	return out
}

// BenchmarkChatTurn sends b.N streamed turns, from a new address each, at
// concurrency 1 and 100, and reports time to the first SSE data byte (raw,
// and added to the same exchange straight with the model), whole-turn
// latency and persisted turns per second. In the session1/ runs every turn
// is a visitor's first message (a new session, so a new conversation); in
// the session10/ runs each worker sends 10 turns per session, so that nine
// turns in ten continue a conversation.
func BenchmarkChatTurn(b *testing.B) {
	cb := newChatBench(b)
	for _, perSession := range []int{1, 10} {
		for _, conc := range []int{1, 100} {
			b.Run(fmt.Sprintf("session%d/c%d", perSession, conc), func(b *testing.B) { cb.benchTurns(b, conc, perSession, false) })
		}
	}
	// The widget's traffic: every message carries the browser's anonymous
	// id, which resolves (or creates) its visitor before the turn.
	for _, conc := range []int{1, 100} {
		b.Run(fmt.Sprintf("session10/c%d/anon", conc), func(b *testing.B) { cb.benchTurns(b, conc, 10, true) })
	}
}

func (cb *chatBench) benchTurns(b *testing.B, conc, perSession int, anon bool) {
	ctx := context.Background()
	slug, tenantID := cb.tenant(b)
	sent := make([]int, conc) // turns sent by each worker, which only touches its own
	session := make([]string, conc)
	anonID := make([]string, conc)
	turn := func(w int) (timing, error) {
		if sent[w]%perSession == 0 {
			session[w] = fmt.Sprintf("bench-%d", benchSessionSeq.Add(1))
			if anon {
				anonID[w] = fmt.Sprintf("anon_%032x", benchSessionSeq.Add(1))
			}
		}
		sent[w]++
		t, _, err := cb.anonTurn(ctx, slug, session[w], anonID[w], false)
		return t, err
	}
	// Warm connections and caches outside the measurement.
	_, _ = runLoad(b, min(2*conc, 200), conc, turn)
	warm := 0
	_ = cb.store.Pool().QueryRow(ctx, `SELECT count(*) FROM messages m JOIN conversations c ON c.id = m.conversation_id
		WHERE c.tenant_id = $1 AND m.role = 'assistant'`, tenantID).Scan(&warm)

	direct, _ := runLoad(b, min(b.N, 2000), conc, func(int) (timing, error) { t, _, err := cb.modelTurn(ctx, false); return t, err })

	q0, r0, qt0 := cb.queries.n.Load(), cb.queries.trips.Load(), cb.queries.nanos.Load()
	b.ResetTimer()
	got, elapsed := runLoad(b, b.N, conc, turn)
	b.StopTimer()
	q, r, qt := cb.queries.n.Load()-q0, cb.queries.trips.Load()-r0, cb.queries.nanos.Load()-qt0

	var stored int
	if err := cb.store.Pool().QueryRow(ctx, `SELECT count(*) FROM messages m JOIN conversations c ON c.id = m.conversation_id
		WHERE c.tenant_id = $1 AND m.role = 'assistant' AND m.content = 'Hello, we sell blue widgets.'`, tenantID).Scan(&stored); err != nil {
		b.Fatal(err)
	}
	stored -= warm
	if stored != b.N {
		b.Errorf("%d assistant messages stored for %d turns", stored, b.N)
	}
	ttfb, dttfb := pick(got, func(t timing) time.Duration { return t.ttfb }), pick(direct, func(t timing) time.Duration { return t.ttfb })
	total, dtotal := pick(got, func(t timing) time.Duration { return t.total }), pick(direct, func(t timing) time.Duration { return t.total })
	b.ReportMetric(quantile(ttfb, 0.50), "ttfb-p50-ms")
	b.ReportMetric(quantile(ttfb, 0.99), "ttfb-p99-ms")
	b.ReportMetric(quantile(ttfb, 0.50)-quantile(dttfb, 0.50), "added-ttfb-p50-ms")
	b.ReportMetric(quantile(ttfb, 0.99)-quantile(dttfb, 0.99), "added-ttfb-p99-ms")
	b.ReportMetric(quantile(dttfb, 0.99), "model-ttfb-p99-ms")
	b.ReportMetric(quantile(total, 0.50), "turn-p50-ms")
	b.ReportMetric(quantile(total, 0.99), "turn-p99-ms")
	b.ReportMetric(quantile(dtotal, 0.99), "model-turn-p99-ms")
	b.ReportMetric(float64(stored)/elapsed.Seconds(), "persisted-turns/s")
	b.ReportMetric(float64(q)/float64(b.N), "db-statements/turn")
	b.ReportMetric(float64(r)/float64(b.N), "db-round-trips/turn")
	b.ReportMetric(float64(qt)/float64(b.N)/float64(time.Millisecond), "db-ms/turn")
}

// BenchmarkChatOpenStreams holds 1,000 SSE streams open at once (the model
// sends its first chunk, then stalls) and reports the in-use heap plus
// goroutine stacks per stream, after a GC, against the same with no stream
// open. Client and server share the process, so the same 1,000 streams are
// first held straight on the model (client end and model end of one
// connection each); what the server adds per stream is the difference.
// It measures once per call, whatever -benchtime asks.
func BenchmarkChatOpenStreams(b *testing.B) {
	b.Run("model=http1", func(b *testing.B) { benchOpenStreams(b, false) })
	b.Run("model=http2", func(b *testing.B) { benchOpenStreams(b, true) })
}

// benchOpenStreams is BenchmarkChatOpenStreams with the model over HTTP/2
// and TLS when h2 (as the hosted providers serve it), else over HTTP/1.1.
// With HTTP/2 the straight streams are over HTTP/2 too, one connection
// shared by many, while the client's streams through the server are each
// on a connection of their own: the difference then counts the client's
// side of those connections as the server's, an overstatement of about
// what an HTTP/1.1 connection's client side holds.
func benchOpenStreams(b *testing.B, h2 bool) {
	const streams = 1000
	if os.Getenv("PARLEY_BENCH_HEAPPROFILE") != "" {
		runtime.MemProfileRate = 512 // every allocation of a stream's state
	}
	cb := newChatBenchOver(b, h2)
	slug, _ := cb.tenant(b)
	ctx := context.Background()
	// Warm up: pools, caches, the first goroutines.
	_, _ = runLoad(b, 200, 100, func(int) (timing, error) { t, _, err := cb.chatTurn(ctx, slug, false); return t, err })
	_, _ = runLoad(b, 200, 100, func(int) (timing, error) { t, _, err := cb.modelTurn(ctx, false); return t, err })

	// One measurement whatever b.N (-benchtime), as it is one state held.
	b.ResetTimer()
	direct, _ := holdStreams(b, cb, streams, func(ctx context.Context) (timing, *http.Response, error) { return cb.modelTurn(ctx, true) })
	through, ttfb99 := holdStreams(b, cb, streams, func(ctx context.Context) (timing, *http.Response, error) { return cb.chatTurn(ctx, slug, true) })
	b.ReportMetric(float64(through.heap+through.stack)/streams/1024, "KiB/stream-total")
	b.ReportMetric(float64(direct.heap+direct.stack)/streams/1024, "KiB/stream-model-only")
	b.ReportMetric(float64(through.heap-direct.heap)/streams/1024, "KiB/stream-server-heap")
	b.ReportMetric(float64(through.stack-direct.stack)/streams/1024, "KiB/stream-server-stack")
	b.ReportMetric(float64(through.heap+through.stack-direct.heap-direct.stack)/streams/1024, "KiB/stream-server")
	b.ReportMetric(float64(through.goroutines-direct.goroutines)/streams, "server-goroutines/stream")
	b.ReportMetric(ttfb99, "ttfb-p99-ms")
	b.Logf("direct: heap %.1f stack %.1f goroutines %.2f per stream; through: heap %.1f stack %.1f goroutines %.2f",
		float64(direct.heap)/streams/1024, float64(direct.stack)/streams/1024, float64(direct.goroutines)/streams,
		float64(through.heap)/streams/1024, float64(through.stack)/streams/1024, float64(through.goroutines)/streams)
}

// memUse is the in-use heap and goroutine stacks, after a GC.
type memUse struct{ heap, stack, goroutines int64 }

func inUse() memUse {
	var m runtime.MemStats
	runtime.GC() // a parked goroutine's stack is halved at most once per cycle
	runtime.GC()
	runtime.ReadMemStats(&m)
	return memUse{int64(m.HeapInuse), int64(m.StackInuse), int64(runtime.NumGoroutine())}
}

// holdStreams opens n streams with open, all held at once, and returns the
// growth of memory in use while they are open and the p99 time to first
// byte of the opening.
func holdStreams(b *testing.B, cb *chatBench, n int,
	open func(ctx context.Context) (timing, *http.Response, error)) (growth memUse, ttfb99 float64) {
	b.Helper()
	settle()
	before := inUse()
	if os.Getenv("PARLEY_BENCH_HEAPPROFILE") != "" {
		// The profile of what was in use before the streams: pprof's
		// -diff_base, so that the profile below shows what they hold.
		if f, err := os.Create(os.Getenv("PARLEY_BENCH_HEAPPROFILE") + ".before"); err == nil {
			_ = pprof.WriteHeapProfile(f)
			f.Close()
		}
	}
	hctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var resps []*http.Response
	tms, _ := runLoad(b, n, 50, func(int) (timing, error) {
		t, resp, err := open(hctx)
		if err == nil {
			mu.Lock()
			resps = append(resps, resp)
			mu.Unlock()
		}
		return t, err
	})
	during := inUse()
	if os.Getenv("PARLEY_BENCH_HEAPPROFILE") != "" && len(resps) > 0 && strings.Contains(resps[0].Request.URL.Path, "/chat/") {
		if f, err := os.Create(os.Getenv("PARLEY_BENCH_HEAPPROFILE")); err == nil {
			_ = pprof.WriteHeapProfile(f)
			f.Close()
		}
		// Where each goroutine waits: its frames size its stack.
		if f, err := os.Create(os.Getenv("PARLEY_BENCH_HEAPPROFILE") + ".goroutines"); err == nil {
			_ = pprof.Lookup("goroutine").WriteTo(f, 1)
			f.Close()
		}
	}
	cancel()
	for _, r := range resps {
		r.Body.Close()
	}
	cb.client.CloseIdleConnections()
	growth = memUse{during.heap - before.heap, during.stack - before.stack, during.goroutines - before.goroutines}
	return growth, quantile(pick(tms, func(t timing) time.Duration { return t.ttfb }), 0.99)
}

// settle waits for the goroutines of closed streams to finish.
func settle() {
	prev := -1
	for range 50 {
		n := runtime.NumGoroutine()
		if n == prev {
			return
		}
		prev = n
		time.Sleep(100 * time.Millisecond)
	}
}
