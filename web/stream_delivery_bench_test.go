package web_test

// How fast a person's reply reaches the visitor's screen (BENCHMARKS.md,
// "Live streams: delivery of a person's reply"). Two Parley instances run
// on the test binary's database, each with its own pool and its own live
// hub (its own LISTEN), as two servers behind a load balancer would: the
// visitors' streams (GET /chat/{slug}/stream) are held on instance A by raw
// TCP sockets, and the replies are posted through instance B's REST API
// (POST /tenants/{slug}/conversations/{id}/messages, an ak_ token with
// conversations:write) over real HTTP. The latency of a reply is from just
// before its POST is sent to its `message` event read on the visitor's
// socket (post-p50-ms and post-p95-ms are the POST's own round trip, to
// its 201, for comparison); a reply not seen within 5 s, a duplicate or a
// failed POST counts as an error.
//
//	go test -run '^$' -bench BenchmarkStreamDelivery -benchtime 1x ./web/
//
// TwoInstances: PARLEY_BENCH_REPLIES replies (default 200), one after the
// other (each waits for its delivery), round robin over 50 streams.
// OpenStreams: PARLEY_BENCH_STREAMS streams open at once (default 500; the
// issue's target is 5,000), then one reply a second to a random one for
// PARLEY_BENCH_SECONDS seconds (default 10). It also reports the server's
// memory per open stream as BenchmarkIdleStreams measures it.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/handlers/public"
	"github.com/parley/parley/web"
	"github.com/parley/parley/web/webtest"
)

// deliveryTimeout is how long a reply may take before it counts as lost.
const deliveryTimeout = 5 * time.Second

func BenchmarkStreamDelivery(b *testing.B) {
	b.Run("TwoInstances", func(b *testing.B) {
		replies := envInt("PARLEY_BENCH_REPLIES", 200)
		r := newDeliveryRig(b, 50, replies)
		r.openAll(b)
		r.follow()
		b.ResetTimer()
		for seq := range replies {
			r.post(b, seq, seq%len(r.convs))
			select {
			case <-r.arrived[seq]:
			case <-time.After(deliveryTimeout):
			}
		}
		b.StopTimer()
		r.report(b)
	})
	b.Run("OpenStreams", func(b *testing.B) {
		n, secs := envInt("PARLEY_BENCH_STREAMS", 500), envInt("PARLEY_BENCH_SECONDS", 10)
		r := newDeliveryRig(b, n, secs)
		settle()
		before := inUse()
		r.openAll(b)
		during := inUse()
		r.follow()
		b.ResetTimer()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for seq := range secs {
			r.post(b, seq, mrand.IntN(n))
			if seq < secs-1 {
				<-tick.C
			}
		}
		deadline := time.After(deliveryTimeout)
		for seq := range secs {
			select {
			case <-r.arrived[seq]:
			case <-deadline:
			}
		}
		b.StopTimer()
		r.report(b)
		// After report: ResetTimer drops the metrics reported before it.
		per := func(v int64) float64 { return float64(v) / float64(n) / 1024 }
		b.ReportMetric(per(during.heap-before.heap)+per(during.stack-before.stack), "KiB/stream")
	})
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// deliveryRig is the two instances, a tenant with one conversation per
// stream (held by a person, Maya), the visitors' sockets on A and what was
// sent and seen of each reply (by its sequence number, in its content).
type deliveryRig struct {
	a, b      *httptest.Server
	srvA      *web.Server
	client    *http.Client
	slug, tok string
	tenantID  string
	streamKey []byte
	convs     []string // conversation ids; session "s<i>" is convs[i]
	conns     []net.Conn

	mu      sync.Mutex
	sent    []time.Time
	lat     []time.Duration // by sequence number; 0: not seen
	rtt     []time.Duration // the POST's round trip, by sequence number
	arrived []chan struct{}
	errors  int
}

func newDeliveryRig(b *testing.B, n, replies int) *deliveryRig {
	b.Helper()
	ctx := context.Background()
	discard := slog.New(slog.NewTextHandler(io.Discard, nil))
	storeA := dbtest.New(b)
	srvA, err := web.NewServer(webtest.Config(b), storeA, discard)
	if err != nil {
		b.Fatal(err)
	}
	storeB, err := db.Open(ctx, dbtest.URL(), 10)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(storeB.Close)
	srvB, err := web.NewServer(srvA.Config, storeB, discard)
	if err != nil {
		b.Fatal(err)
	}
	r := &deliveryRig{srvA: srvA, a: httptest.NewServer(srvA.Echo), b: httptest.NewServer(srvB.Echo),
		sent: make([]time.Time, replies), lat: make([]time.Duration, replies), rtt: make([]time.Duration, replies), arrived: make([]chan struct{}, replies)}
	for i := range r.arrived {
		r.arrived[i] = make(chan struct{})
	}
	b.Cleanup(r.a.Close)
	b.Cleanup(r.b.Close)
	b.Cleanup(srvA.Live.Close) // before the listeners close: the streams end
	b.Cleanup(srvB.Live.Close)
	b.Cleanup(func() {
		for _, c := range r.conns {
			if c != nil {
				c.Close()
			}
		}
	})
	r.client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	b.Cleanup(r.client.CloseIdleConnections)

	key, _ := auth.ParseKey(webtest.SecretKey)
	box, _ := auth.NewBox(key)
	r.streamKey = public.StreamKey(key)
	r.slug = fmt.Sprintf("delivery%d-%d", time.Now().UnixNano()%1_000_000_000, webtest.TenantSeq.Add(1))
	ten, err := auth.Provision(ctx, storeA, box, srvA.Base.Passwords, parley.NewTenantInput{Slug: r.slug, Name: "Delivery", Plan: "scale"})
	if err != nil {
		b.Fatal(err)
	}
	r.tenantID = ten.ID
	tok, nt := auth.NewToken(ten.ID, "bench", []string{auth.ScopeConversationsWrite}, false)
	if _, err := storeA.CreateToken(ctx, nt); err != nil {
		b.Fatal(err)
	}
	r.tok = tok
	// One conversation per stream, seeded in bulk, then held by Maya.
	seeds := make([]db.SeedConversation, n)
	r.convs = make([]string, n)
	for i := range seeds {
		seeds[i] = db.SeedConversation{SessionID: "s" + strconv.Itoa(i), Channel: "web", Status: parley.StatusEscalated,
			VisitorType: "human", FirstUserMessage: "Can a person help?", Locale: "en", CreatedAt: time.Now(),
			Messages: []db.SeedMessage{{Role: "user", Content: "Can a person help?"}}}
		seeds[i].ID = db.NewSeedID()
		id := seeds[i].ID
		r.convs[i] = fmt.Sprintf("%x-%x-%x-%x-%x", id[0:4], id[4:6], id[6:8], id[8:10], id[10:16])
	}
	if _, err := storeA.CopySeedConversations(ctx, ten.ID, seeds); err != nil {
		b.Fatal(err)
	}
	if _, err := storeA.Pool().Exec(ctx, `UPDATE conversations SET status = 'HUMAN', assignee = 'Maya', taken_at = now()
		WHERE tenant_id = $1`, ten.ID); err != nil {
		b.Fatal(err)
	}
	return r
}

// open opens stream i on A and reads up to its first status event (the
// server sends nothing more until something happens).
func (r *deliveryRig) open(i int) (net.Conn, error) {
	session := "s" + strconv.Itoa(i)
	mac := hmac.New(sha256.New, r.streamKey)
	mac.Write([]byte(r.tenantID + ":" + session))
	token := base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
	addr := r.a.Listener.Addr().String()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(c, "GET /chat/%s/stream?sessionId=%s&token=%s HTTP/1.1\r\nHost: %s\r\n\r\n", r.slug, session, url.QueryEscape(token), addr)
	var got []byte
	buf := make([]byte, 512)
	for !bytes.Contains(got, []byte("event: status")) || !bytes.HasSuffix(got, []byte("\n\n")) {
		k, err := c.Read(buf)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("stream %d: %w (%q)", i, err, got)
		}
		got = append(got, buf[:k]...)
	}
	return c, nil
}

// openAll opens every stream, 50 at a time, and checks A holds them all.
func (r *deliveryRig) openAll(b *testing.B) {
	b.Helper()
	r.conns = make([]net.Conn, len(r.convs))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed error
	next := make(chan int)
	for range 50 {
		wg.Go(func() {
			for i := range next {
				c, err := r.open(i)
				mu.Lock()
				r.conns[i] = c
				if err != nil && failed == nil {
					failed = err
				}
				mu.Unlock()
			}
		})
	}
	for i := range r.convs {
		next <- i
	}
	close(next)
	wg.Wait()
	if failed != nil {
		b.Fatal(failed)
	}
	if got := r.srvA.Live.Subscribers(); got != len(r.convs) {
		b.Fatalf("%d subscribers on A, want %d", got, len(r.convs))
	}
}

// follow reads every stream from now on: each `message` event is a reply,
// whose sequence number its content carries.
func (r *deliveryRig) follow() {
	for _, c := range r.conns {
		go func() {
			br := bufio.NewReaderSize(c, 1024)
			event := ""
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				line = strings.TrimRight(line, "\r\n")
				switch {
				case strings.HasPrefix(line, "event: "):
					event = strings.TrimPrefix(line, "event: ")
				case strings.HasPrefix(line, "data: ") && event == "message":
					now := time.Now()
					var m struct{ Content string }
					_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &m)
					r.seen(strings.TrimPrefix(m.Content, "reply "), now)
				case line == "":
					event = ""
				}
			}
		}()
	}
}

// seen notes reply seq arriving at t.
func (r *deliveryRig) seen(seq string, t time.Time) {
	i, err := strconv.Atoi(seq)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil || i < 0 || i >= len(r.lat) || r.sent[i].IsZero() || r.lat[i] != 0 {
		r.errors++ // unknown or duplicate
		return
	}
	r.lat[i] = t.Sub(r.sent[i])
	close(r.arrived[i])
}

// post sends reply seq to conversation i through B's REST API.
func (r *deliveryRig) post(b *testing.B, seq, i int) {
	body := fmt.Sprintf(`{"content":"reply %d","authorName":"Maya"}`, seq)
	req, _ := http.NewRequest(http.MethodPost, r.b.URL+"/tenants/"+r.slug+"/conversations/"+r.convs[i]+"/messages", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+r.tok)
	req.Header.Set("Content-Type", "application/json")
	r.mu.Lock()
	r.sent[seq] = time.Now()
	r.mu.Unlock()
	resp, err := r.client.Do(req)
	if err != nil {
		b.Logf("reply %d: %v", seq, err) // counted as lost
		return
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	r.mu.Lock()
	r.rtt[seq] = time.Since(r.sent[seq])
	r.mu.Unlock()
	if resp.StatusCode != http.StatusCreated {
		b.Logf("reply %d: %d %s", seq, resp.StatusCode, raw) // counted as lost
	}
}

// report gives the percentiles of the replies seen; errors counts the
// replies lost (a failed POST, or no event within deliveryTimeout) and the
// events that were no reply in flight (unknown or duplicate).
func (r *deliveryRig) report(b *testing.B) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var seen []time.Duration
	lost := 0
	for _, d := range r.lat {
		if d == 0 {
			lost++
			continue
		}
		seen = append(seen, d)
	}
	slices.Sort(seen)
	pctOf := func(ds []time.Duration, p float64) float64 {
		if len(ds) == 0 {
			return 0
		}
		k := int(p*float64(len(ds))+0.999999) - 1
		return float64(ds[max(k, 0)].Microseconds()) / 1000
	}
	pct := func(p float64) float64 { return pctOf(seen, p) }
	rtt := slices.DeleteFunc(slices.Clone(r.rtt), func(d time.Duration) bool { return d == 0 })
	slices.Sort(rtt)
	b.ReportMetric(pctOf(rtt, 0.50), "post-p50-ms")
	b.ReportMetric(pctOf(rtt, 0.95), "post-p95-ms")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.95), "p95-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(pct(1), "max-ms")
	b.ReportMetric(float64(r.errors+lost), "errors")
	avg, _ := os.ReadFile("/proc/loadavg")
	b.Logf("load average at the end: %s", strings.TrimSpace(string(avg)))
	b.Logf("%d streams, %d replies: %d delivered, %d lost, %d other errors; p50 %.1f ms, p95 %.1f ms, p99 %.1f ms, max %.1f ms",
		len(r.convs), len(r.lat), len(seen), lost, r.errors, pct(0.5), pct(0.95), pct(0.99), pct(1))
}
