package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db/dbtest"
)

// parley secret rotate, with its secrets and DATABASE_URL from files as a
// container platform hands them over: it needs the previous key, re-seals
// the tenant's secrets with the new one, has nothing left to do the second
// time, and then serve refuses the old key alone.
func TestSecretRotateCommand(t *testing.T) {
	store, url := dbtest.Fresh(t, false)
	oldKey, _ := auth.ParseKey(cliKey)
	old, _ := auth.NewBox(oldKey)
	if _, err := auth.Provision(context.Background(), store, old, nil, parley.NewTenantInput{Slug: "rotate-cli", Name: "R", Plan: "scale"}); err != nil {
		t.Fatal(err)
	}
	if err := auth.CheckKey(context.Background(), store.Pool(), old); err != nil { // as serve did at start
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := func(name, v string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(v+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	newHex := strings.Repeat("5a", 32)
	t.Setenv("DATABASE_URL", "")
	t.Setenv("DATABASE_URL_FILE", file("database-url", url))
	t.Setenv("PARLEY_SECRET_KEY", "")
	t.Setenv("PARLEY_SECRET_KEY_FILE", file("secret-key", newHex))
	t.Setenv("PARLEY_SECRET_KEY_PREVIOUS", "")

	_, _, err := runCLI(t, "secret", "rotate")
	wantErr(t, err, "PARLEY_SECRET_KEY_PREVIOUS: required")
	t.Setenv("PARLEY_SECRET_KEY_PREVIOUS_FILE", file("previous-key", cliKey))
	out, errOut, err := runCLI(t, "secret", "rotate")
	if err != nil {
		t.Fatalf("secret rotate: %v %q", err, errOut)
	}
	for _, want := range []string{"tenants.visitor_signing_key", "1 re-sealed", "secret_key_check.sealed",
		"2 secrets re-sealed: every secret is sealed with the new key"} {
		if !strings.Contains(out, want) {
			t.Errorf("secret rotate printed %q, without %q", out, want)
		}
	}
	if out, _, err := runCLI(t, "secret", "rotate"); err != nil || !strings.Contains(out, "0 secrets re-sealed") {
		t.Errorf("a second rotation: %v %q", err, out)
	}

	t.Setenv("PARLEY_SECRET_KEY_PREVIOUS_FILE", "")
	t.Setenv("PARLEY_SECRET_KEY_FILE", "")
	t.Setenv("PARLEY_SECRET_KEY", cliKey)
	t.Setenv("PARLEY_ADDR", "127.0.0.1:0")
	if _, _, err := runCLI(t, "serve"); !errors.Is(err, auth.ErrKeyMismatch) {
		t.Errorf("serve with the old key alone after the rotation: %v", err)
	}
	t.Setenv("PARLEY_SECRET_KEY", "")
	t.Setenv("PARLEY_SECRET_KEY_FILE", file("secret-key", newHex))
	_, _, err = runCLI(t, "backup", "--out", filepath.Join(dir, "after-rotation.backup"))
	if err != nil {
		t.Errorf("backup with the new key after the rotation: %v", err)
	}
}
