package jobs

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"

	"github.com/parley/parley/db/audit"
	"github.com/parley/parley/db/dbtest"
)

// The audit log keeps 90 days: the prune, on the clock the test sets,
// deletes every tenant's older entries and keeps the rest.
func TestAuditPruneWorker(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.New(t)
	a, b := dbtest.NewTenant(t, store), dbtest.NewTenant(t, store)
	now := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	ages := map[string]time.Duration{"old": audit.Keep + time.Second, "edge": audit.Keep - time.Second, "new": time.Hour}
	for _, tenantID := range []string{a.ID, b.ID} {
		for name, age := range ages {
			if err := store.RecordAudit(ctx, audit.Entry{TenantID: tenantID, At: now.Add(-age), Actor: audit.Actor{Kind: audit.ActorSystem},
				Action: audit.ActionExported, Target: name}); err != nil {
				t.Fatal(err)
			}
		}
	}
	tw := rivertest.NewWorker(t, riverpgxv5.New(store.Pool()), &river.Config{}, &AuditPruneWorker{DB: store, Now: func() time.Time { return now }})
	tx, err := store.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tw.Work(ctx, t, tx, AuditPruneArgs{}, nil); err != nil {
		t.Fatal(err)
	}
	for _, tenantID := range []string{a.ID, b.ID} {
		page, err := store.ListAudit(ctx, tenantID, audit.Filter{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var kept []string
		for _, e := range page.Entries {
			kept = append(kept, e.Target)
		}
		if len(kept) != 2 || kept[0] != "new" || kept[1] != "edge" {
			t.Errorf("kept %v, want [new edge]", kept)
		}
	}
}
