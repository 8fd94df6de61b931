package jobs

// Load benchmarks of webhook deliveries (BENCHMARKS.md, "Webhook
// deliveries"). The production River client (NewClient: queue webhooks with
// WebhookWorkers workers, the test database's pool of 20 connections,
// PARLEY_DB_MAX_CONNS's default on a host of 5 cores or more, or a pool of
// PARLEY_BENCH_DB_CONNS connections when set) delivers to a receiver in this process
// that answers 204 at once. Deliveries are enqueued the way the service
// enqueues them: one CreateSubmission per event, one endpoint subscribed.
//
//	go test ./jobs -run '^$' -bench Webhook -benchtime 1x -count 3

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/db/webhooks"
)

// benchReceiver answers every delivery 204 at once and notes when each
// delivery id first arrived.
type benchReceiver struct {
	srv     *httptest.Server
	count   atomic.Int64
	conns   atomic.Int64 // connections accepted
	mu      sync.Mutex
	arrived map[string]time.Time
}

func newBenchReceiver(b *testing.B) *benchReceiver {
	r := &benchReceiver{arrived: make(map[string]time.Time)}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		at := time.Now()
		_, _ = io.Copy(io.Discard, req.Body)
		id := req.Header.Get("X-Service-Delivery-Id")
		if req.Header.Get("X-Service-Signature") == "" || id == "" {
			http.Error(w, "unsigned", http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		if _, ok := r.arrived[id]; !ok {
			r.arrived[id] = at
		}
		r.mu.Unlock()
		r.count.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	r.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			r.conns.Add(1)
		}
	}
	r.srv.Start()
	b.Cleanup(r.srv.Close)
	return r
}

// webhookBench is a fresh tenant with one endpoint on a receiver, and the
// production River client (not started).
type webhookBench struct {
	store      *db.DB
	client     *river.Client[pgx.Tx]
	recv       *benchReceiver
	tenantID   string
	endpointID string
	started    bool
}

var benchInput = json.RawMessage(`{"name":"Ada Lovelace","email":"ada@example.com","phone":"+44 20 7946 0000",` +
	`"company":"Analytical Engines","message":"Please call me back about the enterprise plan."}`)

var benchTurns = []parley.Turn{
	{Role: "user", Content: "Hello, I would like a quote for 40 seats."},
	{Role: "assistant", Content: "Happy to help. May I have your name and email?"},
	{Role: "user", Content: "Ada Lovelace, ada@example.com"},
}

func newWebhookBench(b *testing.B) *webhookBench {
	b.Helper()
	ctx := context.Background()
	store := dbtest.New(b)
	if n, _ := strconv.Atoi(os.Getenv("PARLEY_BENCH_DB_CONNS")); n > 0 {
		var err error
		if store, err = db.Open(ctx, dbtest.URL(), int32(n)); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(store.Close)
	}
	key := make([]byte, 32)
	rand.Read(key)
	box, err := auth.NewBox(key)
	if err != nil {
		b.Fatal(err)
	}
	w := &webhookBench{store: store, recv: newBenchReceiver(b)}
	slug := fmt.Sprintf("bench-hooks-%d-%d", time.Now().UnixNano()%1_000_000_000, slugSeq.Add(1))
	if err := store.Pool().QueryRow(ctx, `INSERT INTO tenants (slug, name, plan, visitor_signing_key)
		VALUES ($1, 'Hooks bench', 'scale', '\x00') RETURNING id`, slug).Scan(&w.tenantID); err != nil {
		b.Fatal(err)
	}
	ep, err := store.CreateWebhookEndpoint(ctx, w.tenantID, webhooks.WebhookEndpointWrite{URL: parley.Some(w.recv.srv.URL + "/hook"),
		Events: parley.Some(parley.WebhookEvents), SecretSealed: box.Seal([]byte("whsec_bench"))})
	if err != nil {
		b.Fatal(err)
	}
	w.endpointID = ep.ID
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	guard := outbound.New([]netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, nil)
	if w.client, err = NewClient(store, box, guard, Mail{}, Embeddings{}, nil, logger, Timing{}, Observers{}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if !w.started {
			return
		}
		stop, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := w.client.Stop(stop); err != nil {
			b.Errorf("stopping river: %v", err)
		}
	})
	return w
}

func (w *webhookBench) start(b *testing.B) {
	if err := w.client.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	w.started = true
}

// submit records one submission, and so one delivery; it returns the event
// id and the time just after the transaction committed.
func (w *webhookBench) submit(ctx context.Context) (string, time.Time, error) {
	_, ev, err := w.store.CreateSubmission(ctx, parley.NewSubmission{TenantID: w.tenantID, ToolType: "SUBMIT_FORM",
		ToolName: "contact", Channel: parley.ChannelWeb, Input: benchInput}, benchTurns)
	return ev.ID, time.Now(), err
}

// submitConcurrently records n submissions from workers goroutines.
func (w *webhookBench) submitConcurrently(b *testing.B, n, workers int) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				if _, _, err := w.submit(context.Background()); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
}

// waitSettled waits until the receiver has had want requests and no delivery
// of the endpoint is pending, then checks that every one succeeded.
func (w *webhookBench) waitSettled(b *testing.B, want int) {
	ctx := context.Background()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if w.recv.count.Load() >= int64(want) {
			var pending int
			if err := w.store.Pool().QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries
				WHERE endpoint_id = $1 AND status = 'pending'`, w.endpointID).Scan(&pending); err != nil {
				b.Fatal(err)
			}
			if pending == 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("after 60 s: %d of %d deliveries received", w.recv.count.Load(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
	var succeeded int
	if err := w.store.Pool().QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries
		WHERE endpoint_id = $1 AND status = 'succeeded'`, w.endpointID).Scan(&succeeded); err != nil {
		b.Fatal(err)
	}
	if succeeded != want || w.recv.count.Load() != int64(want) {
		b.Fatalf("%d deliveries succeeded and %d requests received, want %d", succeeded, w.recv.count.Load(), want)
	}
}

// BenchmarkWebhookThroughput measures how fast deliveries are sent and
// recorded succeeded: burst enqueues 5,000 from 4 goroutines while the client
// runs and times from the first enqueue to the last delivery marked
// succeeded; backlog queues 5,000 first and times from starting the client,
// which isolates the delivery side.
func BenchmarkWebhookThroughput(b *testing.B) {
	const n, enqueuers = 5000, 4
	b.Run("burst", func(b *testing.B) {
		var total, enqueue time.Duration
		var conns int64
		for range b.N {
			b.StopTimer()
			w := newWebhookBench(b)
			w.start(b)
			b.StartTimer()
			t0 := time.Now()
			w.submitConcurrently(b, n, enqueuers)
			enqueue += time.Since(t0)
			w.waitSettled(b, n)
			total += time.Since(t0)
			conns += w.recv.conns.Load()
		}
		b.ReportMetric(float64(n*b.N)/total.Seconds(), "deliveries/s")
		b.ReportMetric(float64(n*b.N)/enqueue.Seconds(), "enqueued/s")
		b.ReportMetric(float64(conns)/float64(b.N), "conns")
	})
	b.Run("backlog", func(b *testing.B) {
		var total time.Duration
		var conns int64
		for range b.N {
			b.StopTimer()
			w := newWebhookBench(b)
			w.submitConcurrently(b, n, enqueuers)
			b.StartTimer()
			t0 := time.Now()
			w.start(b)
			w.waitSettled(b, n)
			total += time.Since(t0)
			conns += w.recv.conns.Load()
		}
		b.ReportMetric(float64(n*b.N)/total.Seconds(), "deliveries/s")
		b.ReportMetric(float64(conns)/float64(b.N), "conns")
	})
}

// BenchmarkWebhookLatency offers a steady load of submissions, each paced
// to its own slot, for 5 seconds, and reports quantiles of enqueue to first
// attempt: the receiver's arrival time minus the time CreateSubmission
// returned, that is after the commit that made the delivery visible.
func BenchmarkWebhookLatency(b *testing.B) {
	const seconds, enqueuers = 5, 16
	for _, rate := range []int{500, 1000} {
		b.Run(fmt.Sprintf("rate%d", rate), func(b *testing.B) {
			var lat []time.Duration
			var offered time.Duration
			var conns int64
			n := rate * seconds
			for range b.N {
				b.StopTimer()
				w := newWebhookBench(b)
				w.start(b)
				b.StartTimer()
				committed := make(map[string]time.Time, n)
				var mu sync.Mutex
				slots := make(chan time.Time, n)
				var wg sync.WaitGroup
				for range enqueuers {
					wg.Go(func() {
						for due := range slots {
							time.Sleep(time.Until(due))
							id, at, err := w.submit(context.Background())
							if err != nil {
								b.Error(err)
								continue
							}
							mu.Lock()
							committed[id] = at
							mu.Unlock()
						}
					})
				}
				t0 := time.Now()
				interval := time.Second / time.Duration(rate)
				for i := range n {
					slots <- t0.Add(time.Duration(i) * interval)
				}
				close(slots)
				wg.Wait()
				offered += time.Since(t0)
				if b.Failed() {
					b.FailNow()
				}
				w.waitSettled(b, n)
				conns += w.recv.conns.Load()
				rows, _ := w.store.Pool().Query(context.Background(), `SELECT id, event_id FROM webhook_deliveries
					WHERE endpoint_id = $1`, w.endpointID)
				pairs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct{ ID, EventID string }])
				if err != nil {
					b.Fatal(err)
				}
				for _, p := range pairs {
					lat = append(lat, w.recv.arrived[p.ID].Sub(committed[p.EventID]))
				}
			}
			slices.Sort(lat)
			q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
			b.ReportMetric(q(0.50), "p50-ms")
			b.ReportMetric(q(0.95), "p95-ms")
			b.ReportMetric(q(0.99), "p99-ms")
			b.ReportMetric(q(1), "max-ms")
			b.ReportMetric(float64(n*b.N)/offered.Seconds(), "enqueued/s")
			b.ReportMetric(float64(conns)/float64(b.N), "conns")
		})
	}
}
