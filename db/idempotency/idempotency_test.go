package idempotency_test

import (
	"crypto/sha256"
	"testing"
	"time"

	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/db/idempotency"
)

// A key is claimed once: sent again while running it is in use, with
// another fingerprint it is reused, once its answer is kept it is
// replayed, and released it is claimed again. Another tenant's or another
// credential's key of the same text is its own.
func TestIdempotencyKeyClaims(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	ctx := t.Context()
	ten, other := dbtest.NewTenant(t, store), dbtest.NewTenant(t, store)
	now := time.Date(2030, 1, 2, 3, 0, 0, 0, time.UTC)
	r := idempotency.Request{TenantID: ten.ID, Scope: "token:a", Key: "k-1", Fingerprint: sha256.Sum256([]byte("POST /x {}")), Now: now}

	claim := func(name string, r idempotency.Request, want idempotency.Outcome) idempotency.Answer {
		t.Helper()
		got, a, err := store.ClaimIdempotencyKey(ctx, r)
		if err != nil || got != want {
			t.Fatalf("%s: %v, %v; want %v", name, got, err, want)
		}
		return a
	}
	claim("first", r, idempotency.Claimed)
	claim("while running", r, idempotency.InUse)
	changed := r
	changed.Fingerprint = sha256.Sum256([]byte("POST /x {\"a\":1}"))
	claim("another body", changed, idempotency.Reused)
	claim("another tenant", idempotency.Request{TenantID: other.ID, Scope: r.Scope, Key: r.Key, Fingerprint: r.Fingerprint, Now: now}, idempotency.Claimed)
	otherToken := r
	otherToken.Scope = "token:b"
	claim("another token", otherToken, idempotency.Claimed)

	if err := store.KeepIdempotentAnswer(ctx, r, idempotency.Answer{Status: 201, Headers: map[string]string{"Content-Type": "application/json"}, Body: []byte(`{"id":"1"}`)}); err != nil {
		t.Fatal(err)
	}
	later := r
	later.Now = now.Add(time.Hour)
	a := claim("answered", later, idempotency.Replay)
	if a.Status != 201 || string(a.Body) != `{"id":"1"}` || a.Headers["Content-Type"] != "application/json" {
		t.Errorf("replayed %+v", a)
	}
	claim("answered, another body", idempotency.Request{TenantID: ten.ID, Scope: r.Scope, Key: r.Key, Fingerprint: changed.Fingerprint, Now: later.Now}, idempotency.Reused)

	if err := store.ReleaseIdempotencyKey(ctx, otherToken); err != nil {
		t.Fatal(err)
	}
	claim("released", otherToken, idempotency.Claimed)
	// A claim left running past Abandoned (its instance stopped) is claimed afresh;
	// the first claimant can then neither keep nor release it.
	stale := otherToken
	stale.Now = now.Add(idempotency.Abandoned + time.Second)
	claim("abandoned", stale, idempotency.Claimed)
	if err := store.KeepIdempotentAnswer(ctx, otherToken, idempotency.Answer{Status: 201}); err == nil {
		t.Error("the abandoned claim kept its answer over the new claim's")
	}
}

// A key is kept Kept: after it, the same key runs again, and the tenant's
// expired keys are deleted by the next claims (no job); another tenant's
// are left to its own claims.
func TestIdempotencyKeysExpire(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	ctx := t.Context()
	ten, other := dbtest.NewTenant(t, store), dbtest.NewTenant(t, store)
	now := time.Date(2030, 1, 2, 3, 0, 0, 0, time.UTC)
	fp := sha256.Sum256([]byte("body"))
	for _, tenant := range []string{ten.ID, other.ID} {
		for _, key := range []string{"a", "b", "c"} {
			r := idempotency.Request{TenantID: tenant, Scope: "token:a", Key: key, Fingerprint: fp, Now: now}
			if _, _, err := store.ClaimIdempotencyKey(ctx, r); err != nil {
				t.Fatal(err)
			}
			if err := store.KeepIdempotentAnswer(ctx, r, idempotency.Answer{Status: 201, Body: []byte(key)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	count := func(tenant string) int {
		t.Helper()
		var n int
		if err := store.Pool().QueryRow(ctx, `SELECT count(*) FROM idempotency_keys WHERE tenant_id = $1`, tenant).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	within := idempotency.Request{TenantID: ten.ID, Scope: "token:a", Key: "a", Fingerprint: fp, Now: now.Add(idempotency.Kept - time.Second)}
	if got, _, err := store.ClaimIdempotencyKey(ctx, within); err != nil || got != idempotency.Replay {
		t.Fatalf("a key within its day: %v, %v", got, err)
	}
	if n := count(ten.ID); n != 3 {
		t.Fatalf("%d keys before they expire, want 3", n)
	}
	past := idempotency.Request{TenantID: ten.ID, Scope: "token:a", Key: "a", Fingerprint: fp, Now: now.Add(idempotency.Kept + time.Second)}
	if got, _, err := store.ClaimIdempotencyKey(ctx, past); err != nil || got != idempotency.Claimed {
		t.Fatalf("a key past its day: %v, %v; want claimed afresh", got, err)
	}
	if n, m := count(ten.ID), count(other.ID); n != 1 || m != 3 {
		t.Errorf("%d keys left (want the new claim only), the other tenant's %d (want 3)", n, m)
	}
}
