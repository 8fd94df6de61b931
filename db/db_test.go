package db_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/accounts"
	"github.com/parley/parley/db/dbtest"
)

func TestRateCounters(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	ctx := context.Background()
	// A fixed instant in the middle of a minute, far from every other test's windows.
	base := time.Date(2011, 3, 4, 5, 6, 30, 0, time.UTC)

	t.Run("hits within a window count up", func(t *testing.T) {
		t.Parallel()
		key := dbtest.UniqueKey(t)
		for i := 1; i <= 5; i++ {
			n, err := store.Hit(ctx, key, time.Minute, base.Add(time.Duration(i)*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if n != i {
				t.Errorf("hit %d returned %d", i, n)
			}
		}
		n, err := store.Count(ctx, key, time.Minute, base)
		if err != nil || n != 5 {
			t.Errorf("Count = %d, %v; want 5", n, err)
		}
	})
	t.Run("a new window starts at 1", func(t *testing.T) {
		t.Parallel()
		key := dbtest.UniqueKey(t)
		for range 3 {
			if _, err := store.Hit(ctx, key, time.Minute, base); err != nil {
				t.Fatal(err)
			}
		}
		n, err := store.Hit(ctx, key, time.Minute, base.Add(time.Minute))
		if err != nil || n != 1 {
			t.Errorf("first hit of the next window = %d, %v", n, err)
		}
		// the window boundary is the truncation: 05:06:59.999 is still the first window
		n, err = store.Hit(ctx, key, time.Minute, time.Date(2011, 3, 4, 5, 6, 59, 999_000_000, time.UTC))
		if err != nil || n != 4 {
			t.Errorf("last instant of the first window = %d, %v; want 4", n, err)
		}
		if n, _ := store.Count(ctx, key, time.Minute, base.Add(time.Minute)); n != 1 {
			t.Errorf("Count of the second window = %d", n)
		}
	})
	t.Run("windows of different lengths are separate", func(t *testing.T) {
		t.Parallel()
		key := dbtest.UniqueKey(t)
		if _, err := store.Hit(ctx, key, time.Hour, base); err != nil {
			t.Fatal(err)
		}
		if n, _ := store.Count(ctx, key, time.Hour, base.Add(20*time.Minute)); n != 1 {
			t.Errorf("hour window count = %d", n)
		}
		if n, _ := store.Count(ctx, key, time.Minute, base.Add(20*time.Minute)); n != 0 {
			t.Errorf("minute window 20 minutes later = %d", n)
		}
	})
	t.Run("keys are separate", func(t *testing.T) {
		t.Parallel()
		a, b := dbtest.UniqueKey(t), dbtest.UniqueKey(t)
		_, _ = store.Hit(ctx, a, time.Minute, base)
		_, _ = store.Hit(ctx, a, time.Minute, base)
		if n, _ := store.Count(ctx, b, time.Minute, base); n != 0 {
			t.Errorf("untouched key counts %d", n)
		}
	})
	t.Run("keys PostgreSQL cannot store still count", func(t *testing.T) {
		t.Parallel()
		for _, key := range []string{dbtest.UniqueKey(t) + "\x00nul", dbtest.UniqueKey(t) + "\xff\xfe"} {
			for i := 1; i <= 2; i++ {
				n, err := store.Hit(ctx, key, time.Minute, base)
				if err != nil || n != i {
					t.Fatalf("Hit(%q) = %d, %v; want %d", key, n, err, i)
				}
			}
			if n, err := store.Count(ctx, key, time.Minute, base); err != nil || n != 2 {
				t.Errorf("Count(%q) = %d, %v", key, n, err)
			}
		}
	})
	t.Run("Count of an unknown key is 0", func(t *testing.T) {
		t.Parallel()
		n, err := store.Count(ctx, dbtest.UniqueKey(t), time.Minute, base)
		if err != nil || n != 0 {
			t.Errorf("Count = %d, %v", n, err)
		}
	})
	t.Run("concurrent hits are all counted", func(t *testing.T) {
		t.Parallel()
		key := dbtest.UniqueKey(t)
		const hits = 20
		var wg sync.WaitGroup
		seen := make(chan int, hits)
		for range hits {
			wg.Go(func() {
				n, err := store.Hit(ctx, key, time.Minute, base)
				if err != nil {
					t.Error(err)
				}
				seen <- n
			})
		}
		wg.Wait()
		close(seen)
		got := map[int]bool{}
		for n := range seen {
			got[n] = true
		}
		if len(got) != hits {
			t.Errorf("concurrent hits returned %d distinct counts, want %d", len(got), hits)
		}
		if n, _ := store.Count(ctx, key, time.Minute, base); n != hits {
			t.Errorf("Count = %d, want %d", n, hits)
		}
	})
	t.Run("DeleteExpiredCounters", func(t *testing.T) {
		t.Parallel()
		// an instant of its own, before every window the other subtests use
		old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
		expired, live := dbtest.UniqueKey(t), dbtest.UniqueKey(t)
		_, _ = store.Hit(ctx, expired, time.Minute, old)
		_, _ = store.Hit(ctx, live, time.Minute, old.Add(2*time.Minute))
		now := old.Add(2*time.Minute + 10*time.Second)
		n, err := store.DeleteExpiredCounters(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		if n < 1 {
			t.Errorf("deleted %d counters, want at least the expired one", n)
		}
		if c, _ := store.Count(ctx, expired, time.Minute, old); c != 0 {
			t.Errorf("expired counter still counts %d", c)
		}
		if c, _ := store.Count(ctx, live, time.Minute, now); c != 1 {
			t.Errorf("live counter counts %d, want 1", c)
		}
		// a counter that ends exactly now is not expired yet
		edge := dbtest.UniqueKey(t)
		_, _ = store.Hit(ctx, edge, time.Minute, old.Add(time.Minute))
		if _, err := store.DeleteExpiredCounters(ctx, old.Add(2*time.Minute)); err != nil {
			t.Fatal(err)
		}
		if c, _ := store.Count(ctx, edge, time.Minute, old.Add(time.Minute)); c != 1 {
			t.Errorf("counter ending now was deleted")
		}
	})
}

func TestOneDefaultSegment(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	ctx := context.Background()
	insert := func(tenantID, slug string, isDefault bool) error {
		_, err := store.Pool().Exec(ctx, `INSERT INTO segments (tenant_id, slug, name, system_prompt, is_default)
			VALUES ($1, $2, $2, 'prompt', $3)`, tenantID, slug, isDefault)
		return err
	}
	uniqueViolation := func(t *testing.T, err error, constraint string) {
		t.Helper()
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "23505" || pgErr.ConstraintName != constraint {
			t.Errorf("err = %v, want a unique violation of %s", err, constraint)
		}
	}
	countDefaults := func(t *testing.T, tenantID string) int {
		t.Helper()
		var n int
		if err := store.Pool().QueryRow(ctx, `SELECT count(*) FROM segments WHERE tenant_id = $1 AND is_default`, tenantID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	t.Run("a new tenant has exactly one default segment", func(t *testing.T) {
		t.Parallel()
		ten := dbtest.NewTenant(t, store)
		if n := countDefaults(t, ten.ID); n != 1 {
			t.Errorf("%d default segments", n)
		}
		usage, err := store.TenantUsage(ctx, ten.ID, time.Now())
		if err != nil || usage.Segments != 1 || usage.APITokens != 1 {
			t.Errorf("usage %+v, %v", usage, err)
		}
	})
	t.Run("a second default is refused", func(t *testing.T) {
		t.Parallel()
		ten := dbtest.NewTenant(t, store)
		uniqueViolation(t, insert(ten.ID, "second-default", true), "segments_one_default")
		if n := countDefaults(t, ten.ID); n != 1 {
			t.Errorf("%d default segments", n)
		}
	})
	t.Run("turning another segment into a default is refused", func(t *testing.T) {
		t.Parallel()
		ten := dbtest.NewTenant(t, store)
		if err := insert(ten.ID, "other", false); err != nil {
			t.Fatal(err)
		}
		_, err := store.Pool().Exec(ctx, `UPDATE segments SET is_default = true WHERE tenant_id = $1 AND slug = 'other'`, ten.ID)
		uniqueViolation(t, err, "segments_one_default")
	})
	t.Run("non-default segments are not limited by the index", func(t *testing.T) {
		t.Parallel()
		ten := dbtest.NewTenant(t, store)
		for i := range 3 {
			if err := insert(ten.ID, fmt.Sprintf("extra-%d", i), false); err != nil {
				t.Fatal(err)
			}
		}
		if n := countDefaults(t, ten.ID); n != 1 {
			t.Errorf("%d default segments", n)
		}
	})
	t.Run("each tenant has its own default", func(t *testing.T) {
		t.Parallel()
		a, b := dbtest.NewTenant(t, store), dbtest.NewTenant(t, store)
		if countDefaults(t, a.ID) != 1 || countDefaults(t, b.ID) != 1 {
			t.Error("defaults per tenant")
		}
	})
	t.Run("the default can move in one transaction", func(t *testing.T) {
		t.Parallel()
		ten := dbtest.NewTenant(t, store)
		if err := insert(ten.ID, "next", false); err != nil {
			t.Fatal(err)
		}
		// As the store does it: the old default is unset first. One UPDATE
		// flipping both rows may meet the partial unique index between them
		// (its check is not deferred), depending on the order it visits them.
		err := db.InTx(store, ctx, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `UPDATE segments SET is_default = false WHERE tenant_id = $1 AND is_default`, ten.ID); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `UPDATE segments SET is_default = true WHERE tenant_id = $1 AND slug = 'next'`, ten.ID)
			return err
		})
		if err != nil {
			t.Fatalf("moving the default: %v", err)
		}
		var slug string
		if err := store.Pool().QueryRow(ctx, `SELECT slug FROM segments WHERE tenant_id = $1 AND is_default`, ten.ID).Scan(&slug); err != nil || slug != "next" {
			t.Errorf("default is %q (%v)", slug, err)
		}
	})
	t.Run("segment slugs are unique per tenant", func(t *testing.T) {
		t.Parallel()
		ten := dbtest.NewTenant(t, store)
		uniqueViolation(t, insert(ten.ID, "default", false), "segments_tenant_id_slug_key")
	})
}

func TestTenantBySlugOddInput(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	for _, slug := range []string{"", "no-such-tenant", "a\x00b", "\xff\xfe", "UPPER", "x' OR '1'='1"} {
		t.Run(fmt.Sprintf("%q", slug), func(t *testing.T) {
			t.Parallel()
			_, err := store.TenantBySlug(context.Background(), slug)
			if parley.ErrorKind(err) != parley.KindNotFound {
				t.Errorf("err = %v, want not found", err)
			}
		})
	}
}

func TestCreateTenantDuplicateSlug(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	ten := dbtest.NewTenant(t, store)
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	_, err := store.CreateTenant(context.Background(), db.NewTenant{Slug: ten.Slug, Name: "dup", Plan: "free",
		SealedSigningKey: []byte("k"), Token: accounts.NewToken{Name: "t", Hash: b, DisplayPrefix: "ak_", Scopes: []string{"stats:read"}}})
	if parley.ErrorKind(err) != parley.KindConflict {
		t.Fatalf("err = %v, want a conflict", err)
	}
	// the transaction rolled back: the token of the refused tenant was not stored
	if _, err := store.TokenByHash(context.Background(), b); parley.ErrorKind(err) != parley.KindNotFound {
		t.Errorf("token of the refused tenant: %v", err)
	}
}

// TestHitWithinPlansByIndex: the rate windows' statement reads its counters
// through the primary key even when it was planned while rate_counters was
// empty, where PostgreSQL would otherwise keep a plan that scans the whole
// table on every call, however large it has grown since (byIndex).
func TestHitWithinPlansByIndex(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	ctx := context.Background()
	k := dbtest.UniqueKey(t)
	windows := []db.Window{{Key: k + ":min", Length: time.Minute, Limit: 3}, {Key: k + ":hour", Length: time.Hour, Limit: 5}}
	now := time.Date(2012, 5, 6, 7, 8, 30, 0, time.UTC)
	plain, err := store.RateWindowsPlan(ctx, windows, now, false)
	if err != nil {
		t.Fatal(err)
	}
	// The case byIndex is for: without it, the empty table is scanned.
	if !strings.Contains(plain, "Seq Scan on rate_counters") {
		t.Fatalf("without byIndex, the plan no longer scans the empty table (then byIndex may be needless):\n%s", plain)
	}
	plan, err := store.RateWindowsPlan(ctx, windows, now, true)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plan, "Seq Scan on rate_counters") || !strings.Contains(plan, "Index Scan using rate_counters_pkey") {
		t.Errorf("with byIndex, the counters are not read through their primary key:\n%s", plan)
	}
}

func TestHitWithin(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	ctx := context.Background()
	base := time.Date(2012, 5, 6, 7, 8, 30, 0, time.UTC)

	t.Run("counts every window until one is full, then none", func(t *testing.T) {
		t.Parallel()
		k := dbtest.UniqueKey(t)
		windows := []db.Window{{Key: k + ":min", Length: time.Minute, Limit: 3}, {Key: k + ":hour", Length: time.Hour, Limit: 5}}
		for i := 1; i <= 3; i++ {
			counts, counted, err := store.HitWithin(ctx, windows, base)
			if err != nil || !counted || counts[0] != i || counts[1] != i {
				t.Fatalf("hit %d: %v %v %v", i, counts, counted, err)
			}
		}
		// The minute is full: refused, and the hour is not counted either.
		counts, counted, err := store.HitWithin(ctx, windows, base)
		if err != nil || counted || counts[0] != 3 || counts[1] != 3 {
			t.Fatalf("refused hit: %v %v %v", counts, counted, err)
		}
		// Next minute: counted again, the hour goes on from 3.
		counts, counted, err = store.HitWithin(ctx, windows, base.Add(time.Minute))
		if err != nil || !counted || counts[0] != 1 || counts[1] != 4 {
			t.Fatalf("next minute: %v %v %v", counts, counted, err)
		}
		n, err := store.Count(ctx, k+":hour", time.Hour, base)
		if err != nil || n != 4 {
			t.Fatalf("hour count %d %v", n, err)
		}
	})

	t.Run("concurrent hits never count past the limit unseen", func(t *testing.T) {
		t.Parallel()
		k := dbtest.UniqueKey(t)
		windows := []db.Window{{Key: k, Length: time.Minute, Limit: 10}}
		var wg sync.WaitGroup
		var mu sync.Mutex
		allowed := 0
		for i := 0; i < 40; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				counts, counted, err := store.HitWithin(ctx, windows, base)
				if err != nil {
					t.Error(err)
					return
				}
				if counted && counts[0] <= 10 {
					mu.Lock()
					allowed++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if allowed != 10 {
			t.Errorf("%d hits allowed, want 10", allowed)
		}
	})
}
