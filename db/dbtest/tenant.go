package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/accounts"
)

// NewTenant creates a tenant (with its default segment) directly through the store.
func NewTenant(t *testing.T, store *db.DB) parley.Tenant {
	t.Helper()
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	slug := fmt.Sprintf("dbt-%x", b[:6])
	ten, err := store.CreateTenant(context.Background(), db.NewTenant{
		Slug: slug, Name: "DB test " + slug, Plan: "starter", SealedSigningKey: []byte("not really sealed"),
		Token: accounts.NewToken{Name: "t", Hash: b, DisplayPrefix: "ak_xxxx", Scopes: []string{"stats:read"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return ten
}

// UniqueKey is a rate-counter key no other test uses.
func UniqueKey(t *testing.T) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "test:" + t.Name() + ":" + hex.EncodeToString(b)
}
