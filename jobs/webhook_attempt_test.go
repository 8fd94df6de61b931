package jobs

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound"
	"github.com/parley/parley/db/deliveryargs"
	"github.com/parley/parley/db/webhooks"
)

// TestDeliveryAttemptCountedWhenItStarts: an attempt cut short while the
// request is out (a crash, a shutdown: here the worker's context ends as
// the receiver reads it) is counted, so the log never shows fewer attempts
// than the receiver saw; a finished attempt is counted once.
func TestDeliveryAttemptCountedWhenItStarts(t *testing.T) {
	f := newDeliveryFixture(t)
	ctx := context.Background()
	// The fixture's River client would work the delivery's job: stop it,
	// and run the worker by hand.
	stop, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := f.client.Stop(stop); err != nil {
		t.Fatal(err)
	}
	arrived := make(chan struct{}, 4)
	release := make(chan struct{})
	var hold atomic.Bool
	hold.Store(true)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		arrived <- struct{}{}
		if hold.Load() {
			<-release
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer recv.Close()
	defer close(release)
	endpointID, _ := f.endpoint(t, recv.URL+"/hook")
	d := f.submit(t, endpointID, `{"email":"ada@example.com"}`, []parley.Turn{{Role: "user", Content: "hi"}})

	w := &WebhookDeliveryWorker{DB: f.store, Box: f.box,
		Client:          DeliveryClient(outbound.New([]netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, nil), fixtureDeliveryTimeout),
		DeliveryTimeout: fixtureDeliveryTimeout, Now: f.clock.Now}
	job := func(attempt int) *river.Job[deliveryargs.Args] {
		args := deliveryargs.Args{DeliveryID: d.ID}
		raw, _ := json.Marshal(args)
		return &river.Job[deliveryargs.Args]{JobRow: &rivertype.JobRow{ID: 1, Attempt: attempt, MaxAttempts: 6, EncodedArgs: raw}, Args: args}
	}

	// The first attempt is cut short while the receiver holds it.
	cut, cutNow := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Work(cut, job(1)) }()
	select {
	case <-arrived:
	case err := <-done:
		t.Fatalf("the first attempt ended before reaching the receiver: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the first attempt never reached the receiver")
	}
	cutNow()
	if err := <-done; err == nil {
		t.Fatal("an attempt cut short reported success")
	}
	if got := f.delivery(t, endpointID, d.ID); got.Attempts != 1 || got.Status != webhooks.DeliveryPending {
		t.Errorf("after an attempt cut short: attempts %d, status %s; want 1, pending", got.Attempts, got.Status)
	}

	// The next one goes through: two attempts in all, each counted once.
	hold.Store(false)
	if err := w.Work(ctx, job(2)); err != nil {
		t.Fatalf("second attempt: %v", err)
	}
	if got := f.delivery(t, endpointID, d.ID); got.Attempts != 2 || got.Status != webhooks.DeliverySucceeded {
		t.Errorf("after the second attempt: attempts %d, status %s; want 2, succeeded", got.Attempts, got.Status)
	}
}
