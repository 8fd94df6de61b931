package jobs

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/db/webhooks"
)

// Environment of the child process TestWebhookDurability kills.
const (
	childEnv    = "PARLEY_DURABILITY_CHILD_DB"
	childKeyEnv = "PARLEY_DURABILITY_CHILD_KEY"
	// childRescueEnv set makes the child run with rescueTiming.
	childRescueEnv = "PARLEY_DURABILITY_CHILD_RESCUE"
)

// rescueTiming is the restarted runner's. With production's timing it would
// rescue the dead runner's jobs 35 s after they started, at a rescuer run
// (every 30 s), and retry them 30 s later. Here any job running for 7 s is
// rescued, and retried a second later. The test sets the clock rather than
// waiting on it: once the runner is dead, it expires the dead runner's
// leadership (River's leader TTL is 15 s) and moves its running jobs' start
// back past RescueAfter, so the new runner is elected at once and its
// rescuer's first run, as it takes the lead, finds them stuck. The receiver
// answers at once by then, so a 2 s attempt bound is ample.
func rescueTiming() Timing {
	return Timing{
		JobTimeout:      6 * time.Second,
		DeliveryTimeout: 2 * time.Second, // the delivery job: 6 s
		RescueAfter:     7 * time.Second,
		RetryDelays:     []time.Duration{time.Second},
	}
}

// TestDurabilityChild is the job runner TestWebhookDurability starts and
// kills: the production River client on the parent's database, with
// production's timing or rescueTiming. It does nothing when run by itself.
func TestDurabilityChild(t *testing.T) {
	url := os.Getenv(childEnv)
	if url == "" {
		return // only meaningful as the child of TestWebhookDurability
	}
	ctx := context.Background()
	store, err := db.Open(ctx, url, 20)
	if err != nil {
		t.Fatal(err)
	}
	key, err := hex.DecodeString(os.Getenv(childKeyEnv))
	if err != nil {
		t.Fatal(err)
	}
	box, err := auth.NewBox(key)
	if err != nil {
		t.Fatal(err)
	}
	var timing Timing
	if os.Getenv(childRescueEnv) != "" {
		timing = rescueTiming()
	}
	client, err := NewClient(store, box, outbound.New([]netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, nil),
		Mail{}, Embeddings{}, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), timing, Observers{})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM)
	<-stop // the parent kills it with SIGKILL: no clean stop
}

// TestWebhookDurability kills the job runner while deliveries are both
// pending and in flight, records more events while it is down, restarts it,
// and checks that every delivery then reaches the receiver and ends
// succeeded: none is lost. In-flight deliveries come back once River
// rescues their jobs; the restarted runner does that with rescueTiming, on
// a clock the test moves on (rescueTiming), so the test takes a few seconds.
func TestWebhookDurability(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and restarts a job runner; up to 30 s")
	}
	// Not parallel: the child runs every delivery job of the test database.
	store := dbtest.New(t)
	ctx := context.Background()
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(i * 7)
	}
	box, _ := auth.NewBox(key)

	var slow atomic.Bool
	slow.Store(true)
	var mu sync.Mutex
	seen := map[string]int{}
	var requests atomic.Int64
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		seen[r.Header.Get("X-Service-Delivery-Id")]++
		mu.Unlock()
		requests.Add(1)
		if slow.Load() {
			// Answer late, so that the runner dies with these in flight.
			select {
			case <-r.Context().Done():
			case <-time.After(4 * time.Second):
			}
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rcv.Close()

	var tenantID string
	if err := store.Pool().QueryRow(ctx, `INSERT INTO tenants (slug, name, plan, visitor_signing_key)
		VALUES ($1, 'Durability', 'scale', '\x00') RETURNING id`, fmt.Sprintf("durable-%d", time.Now().UnixNano())).Scan(&tenantID); err != nil {
		t.Fatal(err)
	}
	if _, err := store.CreateWebhookEndpoint(ctx, tenantID, webhooks.WebhookEndpointWrite{URL: parley.Some(rcv.URL),
		Events: parley.Some(parley.WebhookEvents), SecretSealed: box.Seal([]byte("whsec_durable"))}); err != nil {
		t.Fatal(err)
	}
	submit := func(n int) {
		for i := 0; i < n; i++ {
			if _, _, err := store.CreateSubmission(ctx, parley.NewSubmission{TenantID: tenantID, ToolType: "SUBMIT_FORM",
				ToolName: "contact", Channel: parley.ChannelForm}, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	// More deliveries than the runner's workers, so that some wait while
	// others are in flight when it dies.
	submit(WebhookWorkers + 50)

	start := func(env ...string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestDurabilityChild$", "-test.count", "1")
		cmd.Env = append(os.Environ(), childEnv+"="+dbtest.URL(), childKeyEnv+"="+hex.EncodeToString(key))
		cmd.Env = append(cmd.Env, env...)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	count := func(status string) int {
		var n int
		if err := store.Pool().QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries WHERE tenant_id = $1 AND status = $2`,
			tenantID, status).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	child := start()
	deadline := time.Now().Add(30 * time.Second)
	for requests.Load() < 40 {
		if time.Now().After(deadline) {
			t.Fatalf("the runner made %d requests in 30 s", requests.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	inFlight := int(requests.Load())
	var running int
	// This tenant's jobs: a run before this one (go test -count) may have
	// left its own running rows, killed before River recorded their end.
	const ours = `kind = 'webhook_delivery' AND state = 'running'
		AND args->>'deliveryId' IN (SELECT id::text FROM webhook_deliveries WHERE tenant_id = $1)`
	store.Pool().QueryRow(ctx, `SELECT count(*) FROM river_job WHERE `+ours, tenantID).Scan(&running)
	if pending := count(webhooks.DeliveryPending); running == 0 || pending <= running {
		t.Fatalf("at the crash: %d jobs running, %d deliveries pending; want some of each", running, pending)
	}
	t.Logf("killed the runner with %d requests made, %d jobs running", inFlight, running)
	// The time a crashed runner's jobs wait, passed at once: its leadership
	// expires, and its running jobs started longer ago than RescueAfter.
	if _, err := store.Pool().Exec(ctx, `DELETE FROM river_leader`); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Pool().Exec(ctx, `UPDATE river_job SET attempted_at = attempted_at - $2::interval WHERE `+ours,
		tenantID, (2 * rescueTiming().RescueAfter).String()); err != nil {
		t.Fatal(err)
	}

	submit(20) // events recorded while no runner is up
	slow.Store(false)
	start(childRescueEnv + "=1")
	total := WebhookWorkers + 50 + 20
	// The election, the rescuer's first run, the retry delay, and a wide
	// margin for a loaded machine: a run that needed the leadership's TTL
	// or a second rescuer run (30 s) still passes.
	deadline = time.Now().Add(90 * time.Second)
	for count(webhooks.DeliverySucceeded) < total {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d deliveries succeeded after the restart (%d pending, %d failed)",
				count(webhooks.DeliverySucceeded), total, count(webhooks.DeliveryPending), count(webhooks.DeliveryFailed))
		}
		time.Sleep(100 * time.Millisecond)
	}
	rows, err := store.Pool().Query(ctx, `SELECT id FROM webhook_deliveries WHERE tenant_id = $1`, tenantID)
	if err != nil {
		t.Fatal(err)
	}
	ids := 0
	mu.Lock()
	defer mu.Unlock()
	for rows.Next() {
		var id string
		rows.Scan(&id)
		ids++
		if seen[id] == 0 {
			t.Errorf("delivery %s marked succeeded but never received", id)
		}
	}
	if ids != total {
		t.Errorf("%d deliveries for %d events", ids, total)
	}
}
