package db_test

import (
	"context"
	"testing"
	"time"

	"github.com/parley/parley/db/dbtest"
)

// LockCalendar runs one booking of a tenant at a time, and never holds up
// another tenant's.
func TestLockCalendar(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	ctx := context.Background()
	tenant, other := "5d1f8a7e-0000-4000-8000-00000000c001", "5d1f8a7e-0000-4000-8000-00000000c002"
	inside, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- store.LockCalendar(ctx, tenant, func(context.Context) error {
			close(inside)
			<-release
			return nil
		})
	}()
	<-inside
	if err := store.LockCalendar(ctx, other, func(context.Context) error { return nil }); err != nil {
		t.Fatalf("another tenant: %v", err)
	}
	second := make(chan time.Time, 1)
	go func() {
		_ = store.LockCalendar(ctx, tenant, func(context.Context) error {
			second <- time.Now()
			return nil
		})
	}()
	// The second waits on the lock (PostgreSQL shows it waiting) and has not run.
	for deadline := time.Now().Add(60 * time.Second); ; { // a bound only: the loop ends once the second waits
		var waiting int
		if err := store.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the second booking never waited for the lock")
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case <-second:
		t.Fatal("a second booking of the tenant ran while the first held the lock")
	default:
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	select {
	case <-second:
	case <-time.After(5 * time.Second):
		t.Fatal("the second booking never ran")
	}
}
