package jobs

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/db/deliveryargs"
	"github.com/parley/parley/db/webhooks"
)

// verifySignature checks a delivery the way the spec tells receivers to,
// written from its text and not from the signing code: the header is
// "t=<unix-seconds>,v1=<hex>", v1 is the hex HMAC-SHA256 with the signing
// secret over "<t>.<raw body>", and a t more than 300 seconds from now is
// rejected.
func verifySignature(secret, header string, body []byte, now time.Time) error {
	var ts, sig string
	for _, part := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return fmt.Errorf("malformed part %q", part)
		}
		switch k {
		case "t":
			ts = v
		case "v1":
			sig = v
		}
	}
	if ts == "" || sig == "" {
		return errors.New("missing t or v1")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("bad t: %v", err)
	}
	if d := now.Unix() - sec; d > 300 || d < -300 {
		return fmt.Errorf("timestamp %d s away", d)
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts))
	mac.Write([]byte("."))
	mac.Write(body)
	want := mac.Sum(nil)
	got, err := hex.DecodeString(sig)
	if err != nil || !hmac.Equal(got, want) {
		return errors.New("signature mismatch")
	}
	return nil
}

// received is one request a test receiver got.
type received struct {
	header http.Header
	body   []byte
}

// receiver is a webhook endpoint whose answer to the nth request (0-based)
// is answer(n).
type receiver struct {
	mu     sync.Mutex
	got    []received
	answer func(n int) int
	srv    *httptest.Server
}

func newReceiver(t *testing.T, answer func(n int) int) *receiver {
	r := &receiver{answer: answer}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		n := len(r.got)
		r.got = append(r.got, received{header: req.Header.Clone(), body: body})
		r.mu.Unlock()
		status := r.answer(n)
		if status == 0 { // hang past the delivery timeout
			select {
			case <-req.Context().Done():
			case <-time.After(fixtureDeliveryTimeout + 2*time.Second):
			}
			return
		}
		w.WriteHeader(status)
		fmt.Fprintf(w, "answer %d", n)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// clock is a settable clock for the worker.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// deliveryFixture is a tenant of the test database with a running River
// client that runs deliveries only, on the fixture's clock.
type deliveryFixture struct {
	store    *db.DB
	box      *auth.Box
	clock    *clock
	client   *river.Client[pgx.Tx]
	tenantID string
	// outcomes counts the attempts' outcomes the worker observed.
	outcomes *outcomeCounter
}

// outcomeCounter is a DeliveryObserver that counts each outcome.
type outcomeCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (o *outcomeCounter) DeliveryAttempt(outcome string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.n[outcome]++
}

// since is the count of each outcome now less before's (a snapshot).
func (o *outcomeCounter) since(before map[string]int) map[string]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := map[string]int{}
	for k, v := range o.n {
		if v-before[k] != 0 {
			out[k] = v - before[k]
		}
	}
	return out
}

// fixtureDeliveryTimeout bounds the fixture's attempts: shorter than
// production's DeliveryTimeout, so that the timeout test waits less, and
// long enough for a receiver that answers at once on a loaded machine.
const fixtureDeliveryTimeout = 2 * time.Second

func newDeliveryFixture(t *testing.T) *deliveryFixture {
	t.Helper()
	store := dbtest.New(t)
	ctx := context.Background()
	key := make([]byte, 32)
	rand.Read(key)
	box, err := auth.NewBox(key)
	if err != nil {
		t.Fatal(err)
	}
	f := &deliveryFixture{store: store, box: box, clock: &clock{t: time.Now().Truncate(time.Second)},
		outcomes: &outcomeCounter{n: map[string]int{}}}
	slug := fmt.Sprintf("hooks-%d-%d", time.Now().UnixNano()%1_000_000_000, slugSeq.Add(1))
	if err := store.Pool().QueryRow(ctx, `INSERT INTO tenants (slug, name, plan, visitor_signing_key)
		VALUES ($1, 'Hooks test', 'scale', '\x00') RETURNING id`, slug).Scan(&f.tenantID); err != nil {
		t.Fatal(err)
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &WebhookDeliveryWorker{DB: store, Box: box,
		Client:          DeliveryClient(outbound.New([]netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, nil), fixtureDeliveryTimeout),
		DeliveryTimeout: fixtureDeliveryTimeout,
		Now:             f.clock.Now,
		Observer:        f.outcomes})
	f.client, err = river.NewClient(riverpgxv5.New(store.Pool()), &river.Config{
		Logger:            slog.New(slog.NewTextHandler(io.Discard, nil)),
		Queues:            map[string]river.QueueConfig{deliveryargs.Queue: {MaxWorkers: 10}},
		Workers:           workers,
		FetchCooldown:     10 * time.Millisecond,
		FetchPollInterval: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = f.client.Stop(stop)
	})
	return f
}

// endpoint registers url for every event and returns its id and secret.
func (f *deliveryFixture) endpoint(t *testing.T, url string, pii ...string) (string, string) {
	t.Helper()
	secret := "whsec_" + strconv.FormatInt(time.Now().UnixNano(), 16)
	ep, err := f.store.CreateWebhookEndpoint(context.Background(), f.tenantID, webhooks.WebhookEndpointWrite{
		URL: parley.Some(url), Events: parley.Some(parley.WebhookEvents), PIIFields: parley.Some(pii), SecretSealed: f.box.Seal([]byte(secret))})
	if err != nil {
		t.Fatal(err)
	}
	return ep.ID, secret
}

// submit records a submission (and so its deliveries) and returns the
// delivery made for endpointID.
func (f *deliveryFixture) submit(t *testing.T, endpointID string, input string, turns []parley.Turn) webhooks.WebhookDelivery {
	t.Helper()
	ctx := context.Background()
	_, ev, err := f.store.CreateSubmission(ctx, parley.NewSubmission{TenantID: f.tenantID, ToolType: "SUBMIT_FORM",
		ToolName: "contact", Channel: parley.ChannelWeb, Input: json.RawMessage(input)}, turns)
	if err != nil {
		t.Fatal(err)
	}
	var id string
	if err := f.store.Pool().QueryRow(ctx, `SELECT id FROM webhook_deliveries WHERE event_id = $1 AND endpoint_id = $2`,
		ev.ID, endpointID).Scan(&id); err != nil {
		t.Fatalf("delivery of the event: %v", err)
	}
	return f.delivery(t, endpointID, id)
}

func (f *deliveryFixture) delivery(t *testing.T, endpointID, id string) webhooks.WebhookDelivery {
	t.Helper()
	ds, _, err := f.store.ListWebhookDeliveries(context.Background(), f.tenantID, endpointID, webhooks.DeliveryFilter{Page: 1, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.ID == id {
			return d
		}
	}
	t.Fatalf("delivery %s not listed", id)
	return webhooks.WebhookDelivery{}
}

// job returns the River job of a delivery.
type jobRow struct {
	ID          int64
	State       string
	Attempt     int
	ScheduledAt time.Time
}

func (f *deliveryFixture) job(t *testing.T, deliveryID string) jobRow {
	t.Helper()
	var j jobRow
	if err := f.store.Pool().QueryRow(context.Background(), `SELECT id, state, attempt, scheduled_at FROM river_job
		WHERE kind = 'webhook_delivery' AND args->>'deliveryId' = $1 ORDER BY id DESC LIMIT 1`, deliveryID).
		Scan(&j.ID, &j.State, &j.Attempt, &j.ScheduledAt); err != nil {
		t.Fatal(err)
	}
	return j
}

// waitFor polls cond until it holds, for up to 15 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// runRetries drives a delivery through its attempts on the fixture's clock:
// after each failed attempt it checks that River scheduled the next one at
// the schedule's offset, moves the clock there and lets River run it at
// once. It returns the clock time of each attempt.
func (f *deliveryFixture) runRetries(t *testing.T, endpointID, deliveryID string, r *receiver, attempts int) []time.Time {
	t.Helper()
	ctx := context.Background()
	at := []time.Time{f.clock.Now()}
	for n := 1; n <= attempts; n++ {
		// An attempt is counted as it starts: wait for the receiver too.
		waitFor(t, fmt.Sprintf("attempt %d", n), func() bool {
			return f.delivery(t, endpointID, deliveryID).Attempts == n && len(r.requests()) >= n
		})
		if len(r.requests()) != n {
			t.Fatalf("after attempt %d the receiver got %d requests", n, len(r.requests()))
		}
		if n == attempts {
			break
		}
		var j jobRow
		waitFor(t, "the retry to be scheduled", func() bool { j = f.job(t, deliveryID); return j.State == "retryable" })
		want := at[n-1].Add(RetryDelays[n-1])
		if !j.ScheduledAt.Equal(want) {
			t.Fatalf("retry %d scheduled at +%s, want +%s", n, j.ScheduledAt.Sub(at[0]), want.Sub(at[0]))
		}
		if d := f.delivery(t, endpointID, deliveryID); d.NextAttemptAt == nil || !d.NextAttemptAt.Equal(want) {
			t.Fatalf("delivery nextAttemptAt %v, want %v", d.NextAttemptAt, want)
		}
		f.clock.Set(want)
		at = append(at, want)
		if _, err := f.client.JobRetry(ctx, j.ID); err != nil {
			t.Fatal(err)
		}
	}
	return at
}

func TestWebhookDelivery(t *testing.T) {
	// Not parallel: the fixture's River client runs every delivery job of
	// the test database, so no other test may make deliveries meanwhile.
	f := newDeliveryFixture(t)
	ctx := context.Background()

	t.Run("SignedRedactedOnce", func(t *testing.T) {
		r := newReceiver(t, func(int) int { return 204 })
		epID, secret := f.endpoint(t, r.srv.URL+"/hook?src=parley", "email", "phone")
		turns := []parley.Turn{{Role: "user", Content: "I am ada@example.com"}, {Role: "assistant", Content: "Thanks"}}
		d := f.submit(t, epID, `{"email":"ada@example.com","phone":"+331","company":"Analytical"}`, turns)
		waitFor(t, "delivery", func() bool { return f.delivery(t, epID, d.ID).Status == webhooks.DeliverySucceeded })
		got := r.requests()
		if len(got) != 1 {
			t.Fatalf("%d requests", len(got))
		}
		req := got[0]
		if req.header.Get("X-Service-Event") != webhooks.EventSubmissionCreated || req.header.Get("X-Service-Delivery-Id") != d.ID ||
			req.header.Get("Content-Type") != "application/json" {
			t.Fatalf("headers %v", req.header)
		}
		sig := req.header.Get("X-Service-Signature")
		now := f.clock.Now()
		if err := verifySignature(secret, sig, req.body, now); err != nil {
			t.Fatalf("genuine delivery refused: %v", err)
		}
		tampered := []byte(strings.Replace(string(req.body), "Analytical", "Analytica1", 1))
		if err := verifySignature(secret, sig, tampered, now); err == nil {
			t.Error("tampered body accepted")
		}
		if err := verifySignature(secret+"x", sig, req.body, now); err == nil {
			t.Error("wrong secret accepted")
		}
		if err := verifySignature(secret, sig, req.body, now.Add(301*time.Second)); err == nil {
			t.Error("timestamp 301 s old accepted")
		}
		if err := verifySignature(secret, sig, req.body, now.Add(300*time.Second)); err != nil {
			t.Errorf("timestamp 300 s old refused: %v", err)
		}
		var body struct {
			Event string                     `json:"event"`
			Data  map[string]json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(req.body, &body); err != nil {
			t.Fatal(err)
		}
		var input map[string]string
		json.Unmarshal(body.Data["input"], &input)
		if body.Event != webhooks.EventSubmissionCreated || input["company"] != "Analytical" || input["email"] != "" || input["phone"] != "" {
			t.Errorf("sent %s", req.body)
		}
		if _, ok := body.Data["messages"]; ok {
			t.Errorf("messages sent despite piiFields: %s", req.body)
		}
		var stored string
		f.store.Pool().QueryRow(ctx, `SELECT e.payload::text FROM events e JOIN webhook_deliveries d ON d.event_id = e.id
			WHERE d.id = $1`, d.ID).Scan(&stored)
		if !strings.Contains(stored, "ada@example.com") || !strings.Contains(stored, `"messages"`) {
			t.Errorf("stored payload was redacted: %s", stored)
		}
		d = f.delivery(t, epID, d.ID)
		if d.Attempts != 1 || d.HTTPStatus == nil || *d.HTTPStatus != 204 || d.DeliveredAt == nil || d.LastError != nil || d.NextAttemptAt != nil {
			t.Errorf("delivery %+v", d)
		}
	})

	t.Run("RetryScheduleThenSuccess", func(t *testing.T) {
		r := newReceiver(t, func(n int) int {
			if n < 5 {
				return 500
			}
			return 200
		})
		epID, secret := f.endpoint(t, r.srv.URL)
		before := f.outcomes.since(nil)
		start := time.Now().Truncate(time.Second)
		f.clock.Set(start)
		d := f.submit(t, epID, `{"email":"b@example.com"}`, nil)
		at := f.runRetries(t, epID, d.ID, r, 6)
		waitFor(t, "success", func() bool { return f.delivery(t, epID, d.ID).Status == webhooks.DeliverySucceeded })
		offsets := []time.Duration{0, 30 * time.Second, 150 * time.Second, 750 * time.Second, 4350 * time.Second, 25950 * time.Second}
		for i, req := range r.requests() {
			if got := at[i].Sub(start); got != offsets[i] {
				t.Errorf("attempt %d at +%s, want +%s", i+1, got, offsets[i])
			}
			if req.header.Get("X-Service-Delivery-Id") != d.ID {
				t.Errorf("attempt %d delivery id %q", i+1, req.header.Get("X-Service-Delivery-Id"))
			}
			// Each attempt is signed afresh at its own time.
			if err := verifySignature(secret, req.header.Get("X-Service-Signature"), req.body, at[i]); err != nil {
				t.Errorf("attempt %d: %v", i+1, err)
			}
			if i > 0 && verifySignature(secret, req.header.Get("X-Service-Signature"), req.body, at[0]) == nil && offsets[i] > 300*time.Second {
				t.Errorf("attempt %d reused an old timestamp", i+1)
			}
		}
		if got := f.delivery(t, epID, d.ID); got.Attempts != 6 || *got.HTTPStatus != 200 || got.LastError != nil {
			t.Errorf("final delivery %+v", got)
		}
		// The tenant's earlier endpoints get the submission too (and are
		// observed alike): at least this delivery's attempts, none failed.
		if got := f.outcomes.since(before); got[DeliveryRetrying] < 5 || got[DeliveryDelivered] < 1 || got[DeliveryFailed] != 0 {
			t.Errorf("observed %v, want at least 5 retrying and 1 delivered, none failed", got)
		}
		time.Sleep(200 * time.Millisecond)
		if len(r.requests()) != 6 {
			t.Errorf("%d requests, want exactly 6", len(r.requests()))
		}
	})

	t.Run("FailedAfterSixAttempts", func(t *testing.T) {
		r := newReceiver(t, func(int) int { return 503 })
		epID, _ := f.endpoint(t, r.srv.URL)
		before := f.outcomes.since(nil)
		f.clock.Set(time.Now().Truncate(time.Second))
		d := f.submit(t, epID, `{"email":"c@example.com"}`, nil)
		f.runRetries(t, epID, d.ID, r, 6)
		waitFor(t, "failed", func() bool { return f.delivery(t, epID, d.ID).Status == webhooks.DeliveryFailed })
		got := f.delivery(t, epID, d.ID)
		if got.Attempts != 6 || got.HTTPStatus == nil || *got.HTTPStatus != 503 || got.LastError == nil ||
			*got.LastError != "HTTP 503: answer 5" || got.NextAttemptAt != nil || got.DeliveredAt != nil {
			t.Errorf("failed delivery %+v (error %v)", got, strOr(got.LastError))
		}
		waitFor(t, "the job to finish", func() bool { return f.job(t, d.ID).State == "completed" })
		if got := f.outcomes.since(before); got[DeliveryRetrying] < 5 || got[DeliveryFailed] != 1 {
			t.Errorf("observed %v, want at least 5 retrying and exactly 1 failed", got)
		}
		time.Sleep(200 * time.Millisecond)
		if len(r.requests()) != 6 {
			t.Errorf("%d requests, want 6", len(r.requests()))
		}
		// Redelivery: same delivery id and payload, a fresh round of attempts.
		ok := newReceiver(t, func(int) int { return 200 })
		if _, err := f.store.Pool().Exec(ctx, `UPDATE webhook_endpoints SET url = $1 WHERE id = $2`, ok.srv.URL, epID); err != nil {
			t.Fatal(err)
		}
		if _, err := f.store.Redeliver(ctx, f.tenantID, epID, d.ID); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "redelivery", func() bool { return f.delivery(t, epID, d.ID).Status == webhooks.DeliverySucceeded })
		again := ok.requests()
		if len(again) != 1 || again[0].header.Get("X-Service-Delivery-Id") != d.ID || string(again[0].body) != string(r.requests()[0].body) {
			t.Errorf("redelivery %d requests", len(again))
		}
		if got := f.delivery(t, epID, d.ID); got.Attempts != 1 { // a redelivery counts its own round
			t.Errorf("attempts after redelivery %d", got.Attempts)
		}
	})

	t.Run("TimeoutAndConnectionErrorsAreFailures", func(t *testing.T) {
		slow := newReceiver(t, func(int) int { return 0 })
		epSlow, _ := f.endpoint(t, slow.srv.URL)
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed := "http://" + l.Addr().String()
		l.Close()
		epClosed, _ := f.endpoint(t, closed)
		f.clock.Set(time.Now().Truncate(time.Second))
		_, ev, err := f.store.CreateSubmission(ctx, parley.NewSubmission{TenantID: f.tenantID, ToolType: "SUBMIT_FORM",
			ToolName: "contact", Channel: parley.ChannelWeb}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct{ ep, want string }{{epSlow, "timed out after 2s"}, {epClosed, "refused"}} {
			var id string
			if err := f.store.Pool().QueryRow(ctx, `SELECT id FROM webhook_deliveries WHERE event_id = $1 AND endpoint_id = $2`,
				ev.ID, c.ep).Scan(&id); err != nil {
				t.Fatal(err)
			}
			var d webhooks.WebhookDelivery
			waitFor(t, "a failed attempt", func() bool { d = f.delivery(t, c.ep, id); return d.Attempts == 1 && d.LastError != nil })
			if d.Status != webhooks.DeliveryPending || d.LastError == nil || !strings.Contains(*d.LastError, c.want) ||
				d.HTTPStatus != nil || d.NextAttemptAt == nil || !d.NextAttemptAt.Equal(f.clock.Now().Add(30*time.Second)) {
				t.Errorf("after one attempt: %+v (error %q)", d, strOr(d.LastError))
			}
		}
	})

	t.Run("RedirectIsAFailure", func(t *testing.T) {
		target := newReceiver(t, func(int) int { return 200 })
		moved := httptest.NewServer(http.RedirectHandler(target.srv.URL, http.StatusMovedPermanently))
		defer moved.Close()
		epID, _ := f.endpoint(t, moved.URL)
		f.clock.Set(time.Now().Truncate(time.Second))
		d := f.submit(t, epID, `{}`, nil)
		waitFor(t, "a failed attempt", func() bool { d = f.delivery(t, epID, d.ID); return d.Attempts == 1 && d.LastError != nil })
		if d.Status != webhooks.DeliveryPending || d.HTTPStatus == nil || *d.HTTPStatus != 301 || len(target.requests()) != 0 {
			t.Errorf("after a redirect: %+v, target got %d requests", d, len(target.requests()))
		}
	})

	t.Run("DisabledOrDeletedEndpointSendsNothing", func(t *testing.T) {
		r := newReceiver(t, func(int) int { return 200 })
		epID, _ := f.endpoint(t, r.srv.URL)
		// A delivery enqueued while the endpoint was enabled, whose endpoint
		// was disabled before the job ran (the drop in UpdateWebhookEndpoint
		// can miss a delivery still uncommitted): the worker drops it.
		if err := f.client.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		d := f.submit(t, epID, `{}`, nil)
		if _, err := f.store.Pool().Exec(ctx, `UPDATE webhook_endpoints SET enabled = false WHERE id = $1`, epID); err != nil {
			t.Fatal(err)
		}
		if err := f.client.Start(ctx); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "drop", func() bool { return f.delivery(t, epID, d.ID).Status == webhooks.DeliveryDropped })
		waitFor(t, "the job to finish", func() bool { return f.job(t, d.ID).State == "completed" })
		if n := len(r.requests()); n != 0 {
			t.Errorf("disabled endpoint got %d requests", n)
		}
	})
}

func strOr(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// TestDeliveryTiming pins production's attempt bound and retry schedule
// (the zero worker's), which tests shorten through the worker's fields.
func TestDeliveryTiming(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, w *WebhookDeliveryWorker, timeout time.Duration, delays []time.Duration) {
		t.Helper()
		if got := w.deliveryTimeout(); got != timeout {
			t.Errorf("attempt bound %s, want %s", got, timeout)
		}
		if got := w.Timeout(nil); got != 3*timeout {
			t.Errorf("job timeout %s, want %s", got, 3*timeout)
		}
		for i, want := range delays {
			if got := w.retryDelay(i + 1); got != want {
				t.Errorf("delay after attempt %d: %s, want %s", i+1, got, want)
			}
		}
	}
	t.Run("Production", func(t *testing.T) {
		check(t, &WebhookDeliveryWorker{}, 5*time.Second,
			[]time.Duration{30 * time.Second, 2 * time.Minute, 10 * time.Minute, time.Hour, 6 * time.Hour, 6 * time.Hour})
	})
	t.Run("Set", func(t *testing.T) {
		check(t, &WebhookDeliveryWorker{DeliveryTimeout: time.Second, RetryDelays: []time.Duration{time.Second, 2 * time.Second}},
			time.Second, []time.Duration{time.Second, 2 * time.Second, 2 * time.Second})
	})
}

func TestRedactPayload(t *testing.T) {
	t.Parallel()
	payload := []byte(`{"event":"submission.created","createdAt":"2026-11-22T00:00:00Z","data":{"id":"x","input":{"email":"a@b.co","name":"Ada"},"messages":[{"role":"user","content":"hi"}]}}`)
	same, err := RedactPayload(payload, nil)
	if err != nil || string(same) != string(payload) {
		t.Fatalf("no piiFields changed the payload: %s %v", same, err)
	}
	out, err := RedactPayload(payload, []string{"email", "absent"})
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Event string
		Data  map[string]json.RawMessage
	}
	if err := json.Unmarshal(out, &p); err != nil {
		t.Fatal(err)
	}
	if p.Event != "submission.created" || string(p.Data["input"]) != `{"name":"Ada"}` || p.Data["messages"] != nil || string(p.Data["id"]) != `"x"` {
		t.Errorf("redacted %s", out)
	}
	// A message's text is what was said: an endpoint with piiFields gets the
	// message without it; a conversation's event keeps its fields.
	msg := []byte(`{"event":"message.created","createdAt":"2026-11-22T00:00:00Z","data":{"id":"m","role":"user","content":"call me on 555","authorName":null,"conversation":{"id":"c","status":"HUMAN"}}}`)
	if out, err := RedactPayload(msg, nil); err != nil || string(out) != string(msg) {
		t.Errorf("message.created without piiFields: %s %v", out, err)
	}
	out, err = RedactPayload(msg, []string{"phone"})
	if err != nil || strings.Contains(string(out), "555") || strings.Contains(string(out), `"content"`) || !strings.Contains(string(out), `"role":"user"`) ||
		!strings.Contains(string(out), `"conversation":{"id":"c","status":"HUMAN"}`) {
		t.Errorf("message.created with piiFields: %s %v", out, err)
	}
	taken := []byte(`{"event":"conversation.taken","createdAt":"2026-11-22T00:00:00Z","data":{"id":"c","status":"HUMAN","assignee":"Ana","pageUrl":null}}`)
	if out, err := RedactPayload(taken, []string{"phone"}); err != nil || !strings.Contains(string(out), `"assignee":"Ana"`) {
		t.Errorf("conversation.taken with piiFields: %s %v", out, err)
	}
	if _, err := RedactPayload([]byte(`{"data":`), []string{"email"}); err == nil {
		t.Error("invalid payload accepted")
	}
	if _, err := RedactPayload([]byte(`{"data":`), nil); err == nil {
		t.Error("invalid payload accepted without piiFields")
	}
}
