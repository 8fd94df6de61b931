package main

import (
	"context"
	"strings"
	"testing"

	"github.com/parley/parley/auth"
)

// TestOAuthRotateKey: parley oauth rotate-key adds a signing key that the
// server then signs with, keeping the previous one in the JWKS.
func TestOAuthRotateKey(t *testing.T) {
	store := cliEnv(t)
	ctx := context.Background()
	key, _ := auth.ParseKey(cliKey)
	box, _ := auth.NewBox(key)
	keys := &auth.SigningKeys{DB: store, Box: box}
	if err := keys.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	before, err := keys.JWKS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI(t, "oauth", "rotate-key")
	if err != nil {
		t.Fatalf("oauth rotate-key: %v", err)
	}
	after, err := (&auth.SigningKeys{DB: store, Box: box}).JWKS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != 2 || !strings.Contains(out, after[0].Kid) || after[1].Kid != before[0].Kid {
		t.Errorf("after rotation the JWKS is %v (printed %q), want the new key then %s", after, out, before[0].Kid)
	}
	t.Setenv("PARLEY_SECRET_KEY", "")
	if _, _, err := runCLI(t, "oauth", "rotate-key"); err == nil || !strings.Contains(err.Error(), "PARLEY_SECRET_KEY") {
		t.Errorf("without PARLEY_SECRET_KEY: %v", err)
	}
}
