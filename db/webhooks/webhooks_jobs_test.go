package webhooks_test

import (
	"context"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/db/dbtest"
)

// TestDeliveryJobs checks that each delivery records its River job, and that
// a redelivery cancels the stale job through River when it still waits, and
// leaves a running one alone.
func TestDeliveryJobs(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	ctx := context.Background()
	ten := dbtest.NewTenant(t, store)
	ep := newEndpoint(t, store, ten.ID)
	type job struct {
		id                int64
		state, kind, args string
	}
	jobOf := func(t *testing.T, deliveryID string) job {
		t.Helper()
		var j job
		if err := store.Pool().QueryRow(ctx, `SELECT j.id, j.state, j.kind, j.args->>'deliveryId' FROM webhook_deliveries d
			JOIN river_job j ON j.id = d.job_id WHERE d.id = $1`, deliveryID).Scan(&j.id, &j.state, &j.kind, &j.args); err != nil {
			t.Fatalf("the delivery's job: %v", err)
		}
		return j
	}
	stateOf := func(t *testing.T, jobID int64) string {
		t.Helper()
		var s string
		if err := store.Pool().QueryRow(ctx, `SELECT state FROM river_job WHERE id = $1`, jobID).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	newDelivery := func(t *testing.T) string {
		t.Helper()
		_, ev, err := store.CreateSubmission(ctx, parley.NewSubmission{TenantID: ten.ID, ToolType: "SUBMIT_FORM", ToolName: "contact",
			Channel: parley.ChannelForm}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var id string
		if err := store.Pool().QueryRow(ctx, `SELECT id FROM webhook_deliveries WHERE event_id = $1`, ev.ID).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	fail := func(t *testing.T, deliveryID string) {
		t.Helper()
		if _, err := store.Pool().Exec(ctx, `UPDATE webhook_deliveries SET status = 'failed' WHERE id = $1`, deliveryID); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("Recorded", func(t *testing.T) {
		id := newDelivery(t)
		if j := jobOf(t, id); j.kind != "webhook_delivery" || j.args != id || j.state != "available" {
			t.Errorf("job %+v for delivery %s", j, id)
		}
	})

	t.Run("RedeliverCancelsQueued", func(t *testing.T) {
		id := newDelivery(t)
		stale := jobOf(t, id)
		fail(t, id) // its job still waits, as a retry would
		if _, err := store.Redeliver(ctx, ten.ID, ep.ID, id); err != nil {
			t.Fatal(err)
		}
		if s := stateOf(t, stale.id); s != "cancelled" {
			t.Errorf("stale job %s, want cancelled", s)
		}
		if j := jobOf(t, id); j.id == stale.id || j.args != id || j.state != "available" {
			t.Errorf("new job %+v, stale %d", j, stale.id)
		}
	})

	t.Run("RedeliverLeavesRunning", func(t *testing.T) {
		id := newDelivery(t)
		running := jobOf(t, id)
		if _, err := store.Pool().Exec(ctx, `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now()
			WHERE id = $1`, running.id); err != nil {
			t.Fatal(err)
		}
		fail(t, id)
		if _, err := store.Redeliver(ctx, ten.ID, ep.ID, id); err != nil {
			t.Fatal(err)
		}
		if s := stateOf(t, running.id); s != "running" {
			t.Errorf("running job %s, want running", s)
		}
		if j := jobOf(t, id); j.id == running.id {
			t.Error("no new job recorded")
		}
	})

	t.Run("RedeliverAfterJobCleanedUp", func(t *testing.T) {
		id := newDelivery(t)
		gone := jobOf(t, id)
		if _, err := store.Pool().Exec(ctx, `DELETE FROM river_job WHERE id = $1`, gone.id); err != nil {
			t.Fatal(err)
		}
		fail(t, id)
		if _, err := store.Redeliver(ctx, ten.ID, ep.ID, id); err != nil {
			t.Fatal(err)
		}
		if j := jobOf(t, id); j.state != "available" {
			t.Errorf("new job %+v", j)
		}
	})
}
