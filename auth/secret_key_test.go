package auth_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db/dbtest"
)

func TestRotatingBox(t *testing.T) {
	t.Parallel()
	oldKey, newKey := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	if _, err := auth.NewRotatingBox(oldKey, oldKey); err == nil {
		t.Error("a previous key equal to the current one was taken")
	}
	old, _ := auth.NewBox(oldKey)
	rot, err := auth.NewRotatingBox(newKey, oldKey)
	if err != nil || !rot.Rotating() {
		t.Fatalf("NewRotatingBox: %v", err)
	}
	sealedOld := old.Seal([]byte("s"))
	if got, err := rot.Open(sealedOld); err != nil || string(got) != "s" {
		t.Errorf("the rotating box does not open the previous key's value: %q, %v", got, err)
	}
	sealedNew := rot.Seal([]byte("n"))
	if _, err := old.Open(sealedNew); err == nil {
		t.Error("the rotating box sealed with the previous key")
	}
	out, changed, err := rot.Reseal(sealedOld)
	if err != nil || !changed {
		t.Fatalf("Reseal of the previous key's value: changed %v, %v", changed, err)
	}
	if _, err := old.Open(out); err == nil {
		t.Error("a re-sealed value still opens with the previous key")
	}
	if out2, changed, err := rot.Reseal(out); err != nil || changed || !bytes.Equal(out2, out) {
		t.Errorf("Reseal of a current value: changed %v, %v", changed, err)
	}
	third, _ := auth.NewBox(bytes.Repeat([]byte{3}, 32))
	if _, _, err := rot.Reseal(third.Seal([]byte("x"))); !errors.Is(err, auth.ErrWrongKey) {
		t.Errorf("Reseal of a third key's value: %v, want ErrWrongKey", err)
	}
}

// A rotation of the secret key: the database's secrets, sealed with the old
// key, open during the rotation with the new key and the previous one; the
// rotation re-seals them all (in several batches), a second run has
// nothing to do, and then the new key alone opens everything while the old
// key alone is refused.
func TestRotateSecrets(t *testing.T) {
	t.Parallel()
	store, _ := dbtest.Fresh(t, false)
	ctx := context.Background()
	pool := store.Pool()
	oldHex, newHex := strings.Repeat("a1", 32), strings.Repeat("b2", 32)
	old, newOnly := newBox(t, oldHex), newBox(t, newHex)
	oldKey, _ := auth.ParseKey(oldHex)
	newKey, _ := auth.ParseKey(newHex)
	rot, err := auth.NewRotatingBox(newKey, oldKey)
	if err != nil {
		t.Fatal(err)
	}

	p, err := auth.Provision(ctx, store, old, auth.NewPasswords(bcrypt.MinCost),
		parley.NewTenantInput{Slug: "rotation", Name: "Rotation", Plan: "scale"})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&auth.SigningKeys{DB: store, Box: old}).Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	// Retired OAuth keys, enough for several batches of the rotation.
	const retired = 2*auth.RotationBatch + 50
	if _, err := pool.Exec(ctx, `INSERT INTO oauth_keys (kid, private_key, retired_at)
		SELECT 'retired-' || i, $1, now() FROM generate_series(1, $2) i`, old.Seal([]byte("retired key")), retired); err != nil {
		t.Fatal(err)
	}
	if err := auth.CheckKey(ctx, pool, old); err != nil {
		t.Fatalf("the old key's check: %v", err)
	}
	if err := auth.CheckKey(ctx, pool, newOnly); !errors.Is(err, auth.ErrKeyMismatch) {
		t.Fatalf("the new key alone before the rotation: %v, want ErrKeyMismatch", err)
	}
	visitorKey := func(b *auth.Box) ([]byte, error) {
		ten, err := store.TenantBySlug(ctx, p.Slug)
		if err != nil {
			t.Fatal(err)
		}
		return b.Open(ten.VisitorSigningKey)
	}
	want, err := visitorKey(old)
	if err != nil {
		t.Fatal(err)
	}

	// During the rotation: old values open, new ones are sealed with the new key.
	if err := auth.CheckKey(ctx, pool, rot); err != nil {
		t.Fatalf("the rotating box's check: %v", err)
	}
	if got, err := visitorKey(rot); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("during the rotation the tenant's key opens as %x, %v", got, err)
	}
	if _, err := pool.Exec(ctx, `UPDATE tenants SET captcha_secret_key = $2 WHERE id = $1`, p.ID, rot.Seal([]byte("captcha"))); err != nil {
		t.Fatal(err)
	}

	done := map[string]auth.ColumnRotation{}
	if err := auth.RotateSecrets(ctx, pool, rot, func(r auth.ColumnRotation) {
		if r.Done {
			done[r.Column.String()] = r
		}
	}); err != nil {
		t.Fatalf("rotation: %v", err)
	}
	for col, want := range map[string][2]int{
		"tenants.visitor_signing_key": {1, 0}, "tenants.captcha_secret_key": {0, 1},
		"oauth_keys.private_key": {retired + 1, 0}, "secret_key_check.sealed": {1, 0},
	} {
		if r := done[col]; r.Resealed != want[0] || r.Current != want[1] || r.Failed != 0 {
			t.Errorf("%s: %d re-sealed, %d current, %d failed; want %d, %d, 0", col, r.Resealed, r.Current, r.Failed, want[0], want[1])
		}
	}
	again := 0
	if err := auth.RotateSecrets(ctx, pool, rot, func(r auth.ColumnRotation) {
		if r.Done {
			again += r.Resealed
		}
	}); err != nil || again != 0 {
		t.Errorf("a second rotation re-sealed %d values (%v), want none", again, err)
	}

	// After: the new key alone opens everything, the old one nothing.
	if err := auth.CheckKey(ctx, pool, newOnly); err != nil {
		t.Errorf("the new key's check after the rotation: %v", err)
	}
	if got, err := visitorKey(newOnly); err != nil || !bytes.Equal(got, want) {
		t.Errorf("after the rotation the tenant's key opens as %x, %v", got, err)
	}
	if err := (&auth.SigningKeys{DB: store, Box: newOnly}).Ensure(ctx); err != nil {
		t.Errorf("the OAuth signing key with the new key: %v", err)
	}
	if err := auth.CheckKey(ctx, pool, old); !errors.Is(err, auth.ErrKeyMismatch) {
		t.Errorf("the old key alone after the rotation: %v, want ErrKeyMismatch", err)
	}
	if _, err := visitorKey(old); err == nil {
		t.Error("the old key still opens the tenant's key after the rotation")
	}

	// A value sealed with neither key is reported and left alone.
	third := newBox(t, strings.Repeat("c3", 32))
	if _, err := pool.Exec(ctx, `UPDATE tenants SET voice_secret = $2 WHERE id = $1`, p.ID, third.Seal([]byte("v"))); err != nil {
		t.Fatal(err)
	}
	var failed []string
	err = auth.RotateSecrets(ctx, pool, rot, func(r auth.ColumnRotation) { failed = append(failed, r.FailedKeys...) })
	if err == nil || !strings.Contains(err.Error(), "neither key") || len(failed) != 1 || failed[0] != p.ID {
		t.Errorf("a third key's value: %v, rows %v", err, failed)
	}
	if err := auth.RotateSecrets(ctx, pool, newOnly, nil); err == nil {
		t.Error("a rotation without the previous key ran")
	}
}

// A database whose check was never written (written before migration
// 00053) is tried on one of its secrets before the check is written.
func TestCheckKeyBeforeTheCheck(t *testing.T) {
	t.Parallel()
	store, _ := dbtest.Fresh(t, false)
	ctx := context.Background()
	old, other := newBox(t, strings.Repeat("d4", 32)), newBox(t, strings.Repeat("e5", 32))
	if _, err := auth.Provision(ctx, store, old, nil, parley.NewTenantInput{Slug: "before-check", Name: "B", Plan: "scale"}); err != nil {
		t.Fatal(err)
	}
	if err := auth.CheckKey(ctx, store.Pool(), other); !errors.Is(err, auth.ErrKeyMismatch) {
		t.Errorf("another key on existing secrets: %v, want ErrKeyMismatch", err)
	}
	if err := auth.CheckKey(ctx, store.Pool(), old); err != nil {
		t.Errorf("the key of the secrets: %v", err)
	}
	var n int
	if err := store.Pool().QueryRow(ctx, `SELECT count(*) FROM secret_key_check`).Scan(&n); err != nil || n != 1 {
		t.Errorf("key checks written: %d, %v", n, err)
	}
}

// On a database not migrated, the check says what to do.
func TestCheckKeyNotMigrated(t *testing.T) {
	t.Parallel()
	store, _ := dbtest.Fresh(t, true)
	err := auth.CheckKey(context.Background(), store.Pool(), newBox(t, strings.Repeat("f6", 32)))
	if err == nil || !strings.Contains(err.Error(), "run parley migrate first") {
		t.Errorf("the key check on an empty database: %v", err)
	}
}
