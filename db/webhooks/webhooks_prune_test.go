package webhooks_test

import (
	"context"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/db/webhooks"
)

func TestPruneDeliveries(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	ctx := context.Background()
	ten := dbtest.NewTenant(t, store)
	ep := newEndpoint(t, store, ten.ID)
	// Four events, each with one delivery: old and settled, old and still
	// pending (a retry due), recent and settled, and an old event of no
	// endpoint (recorded before the endpoint existed).
	event := func(age time.Duration, status string) string {
		_, ev, err := store.CreateSubmission(ctx, parley.NewSubmission{TenantID: ten.ID, ToolType: "SUBMIT_FORM", ToolName: "contact",
			Channel: parley.ChannelForm}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.Pool().Exec(ctx, `UPDATE events SET created_at = now() - make_interval(secs => $2) WHERE id = $1`,
			ev.ID, age.Seconds()); err != nil {
			t.Fatal(err)
		}
		if _, err := store.Pool().Exec(ctx, `UPDATE webhook_deliveries SET status = $2, created_at = now() - make_interval(secs => $3)
			WHERE event_id = $1`, ev.ID, status, age.Seconds()); err != nil {
			t.Fatal(err)
		}
		return ev.ID
	}
	old := 31 * 24 * time.Hour
	oldDone := event(old, webhooks.DeliverySucceeded)
	oldFailed := event(old, webhooks.DeliveryFailed)
	oldPending := event(old, webhooks.DeliveryPending)
	recent := event(time.Hour, webhooks.DeliverySucceeded)
	if _, err := store.Pool().Exec(ctx, `DELETE FROM webhook_deliveries WHERE event_id = $1`, recent); err != nil {
		t.Fatal(err)
	}
	recentDone := event(2*time.Hour, webhooks.DeliverySucceeded)

	deliveries, events, err := store.PruneDeliveries(ctx, time.Now().Add(-webhooks.DeliveryRetention))
	if err != nil {
		t.Fatal(err)
	}
	if deliveries != 2 || events != 2 {
		t.Errorf("pruned %d deliveries and %d events, want 2 and 2", deliveries, events)
	}
	left := map[string]bool{}
	rows, _ := store.Pool().Query(ctx, `SELECT id FROM events WHERE tenant_id = $1`, ten.ID)
	for rows.Next() {
		var id string
		rows.Scan(&id)
		left[id] = true
	}
	if left[oldDone] || left[oldFailed] || !left[oldPending] || !left[recent] || !left[recentDone] {
		t.Errorf("events left %v (old done %s, old failed %s, old pending %s, recent %s, recent done %s)",
			left, oldDone, oldFailed, oldPending, recent, recentDone)
	}
	if _, total, err := store.ListWebhookDeliveries(ctx, ten.ID, ep.ID, webhooks.DeliveryFilter{Page: 1, Limit: 10}); err != nil || total != 2 {
		t.Errorf("deliveries left %d, %v; want the pending one and the recent one", total, err)
	}
}

// newEndpoint is an enabled webhook endpoint of the tenant subscribed to
// every event.
func newEndpoint(t *testing.T, store *db.DB, tenantID string) webhooks.WebhookEndpoint {
	t.Helper()
	ep, err := store.CreateWebhookEndpoint(context.Background(), tenantID, webhooks.WebhookEndpointWrite{
		URL: parley.Some("https://hooks.example.com/x"), Events: parley.Some(parley.WebhookEvents), SecretSealed: []byte("sealed")})
	if err != nil {
		t.Fatal(err)
	}
	return ep
}
