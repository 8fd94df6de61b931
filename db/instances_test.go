package db_test

import (
	"context"
	"testing"
	"time"

	"github.com/parley/parley/db/dbtest"
)

// A session lease whose instance died (its heartbeat went stale, or its
// row is gone) is free at once, though busy_until lies minutes ahead; a
// live instance's lease still blocks. The steps run in order: a stale
// instance is reaped by the next RegisterInstance.
func TestSessionLeaseOfDeadInstance(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := dbtest.SetupConversations(t)
	store, tenant := f.Store, f.Tenant.ID
	const stale = 15 * time.Second
	register := func() string {
		t.Helper()
		id, err := store.RegisterInstance(ctx, stale)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	take := func(session, holder, instance string) bool {
		t.Helper()
		ok, _, err := store.TakeSessionLease(ctx, tenant, session, holder, instance, 2*time.Minute, 3, nil)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	// makeStale sets the instance's last heartbeat further back than its
	// stale_after, as if it had died that long ago.
	makeStale := func(id string) {
		t.Helper()
		if _, err := store.Pool().Exec(ctx, `UPDATE instances SET heartbeat_at = now() - interval '16 seconds' WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
	}
	x, y := register(), register()

	// Live: x's lease blocks y's turn, and a lease of no instance blocks.
	if !take("dead-1", "hx", x) {
		t.Fatal("x could not take a free lease")
	}
	if take("dead-1", "hy", y) {
		t.Fatal("a live instance's lease was taken")
	}
	if !take("dead-none", "hn", "") || take("dead-none", "hy", y) {
		t.Fatal("a lease of no instance: not taken, or taken over before it expired")
	}

	// x dies: its lease goes to y at once, and x no longer holds it.
	makeStale(x)
	if !take("dead-1", "hy", y) {
		t.Fatal("the lease of an instance whose heartbeat is stale was not taken over")
	}
	if held, err := store.RenewSessionLease(ctx, tenant, "dead-1", "hx", time.Minute); err != nil || held {
		t.Errorf("the dead holder still renews its lease: %v %v", held, err)
	}
	var instance string
	if err := store.Pool().QueryRow(ctx, `SELECT instance_id::text FROM session_leases WHERE tenant_id = $1 AND session_id = 'dead-1'`,
		tenant).Scan(&instance); err != nil || instance != y {
		t.Errorf("lease's instance %q (%v), want y %q", instance, err, y)
	}

	// A heartbeat brings a stale instance back, its row too when a peer
	// deleted it: its leases block again.
	z := register()
	if !take("dead-2", "hz", z) {
		t.Fatal("z could not take a free lease")
	}
	makeStale(z)
	if err := store.BeatInstance(ctx, z, stale); err != nil {
		t.Fatal(err)
	}
	if take("dead-2", "hy", y) {
		t.Error("the lease of an instance that beat again was taken")
	}
	if err := store.RemoveInstance(ctx, z); err != nil {
		t.Fatal(err)
	}
	if err := store.BeatInstance(ctx, z, stale); err != nil {
		t.Fatal(err)
	}
	if take("dead-2", "hy", y) {
		t.Error("the lease of an instance whose row came back was taken")
	}

	// A clean shutdown (the row deleted) frees the instance's leases.
	if err := store.RemoveInstance(ctx, z); err != nil {
		t.Fatal(err)
	}
	if !take("dead-2", "hy", y) {
		t.Error("the lease of a removed instance was not taken over")
	}

	// A starting instance deletes the stale instances and their leases,
	// and leaves the live ones.
	w := register()
	if !take("dead-3", "hw", w) {
		t.Fatal("w could not take a free lease")
	}
	makeStale(w)
	register()
	var rows, leases int
	if err := store.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM instances WHERE id = $1),
		(SELECT count(*) FROM session_leases WHERE tenant_id = $2 AND session_id = 'dead-3')`, w, tenant).Scan(&rows, &leases); err != nil {
		t.Fatal(err)
	}
	if rows != 0 || leases != 0 {
		t.Errorf("after a start, the stale instance has %d rows and %d leases, want none", rows, leases)
	}
	if err := store.Pool().QueryRow(ctx, `SELECT count(*) FROM session_leases WHERE tenant_id = $1 AND session_id IN ('dead-1', 'dead-none')`,
		tenant).Scan(&leases); err != nil || leases != 2 {
		t.Errorf("a start deleted live leases: %d left (%v), want 2", leases, err)
	}
}
