package manage_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/accounts"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/manage"
)

// newTenant provisions a tenant with an owner (and the token every tenant
// is created with) in the test database.
func newTenant(t *testing.T, store *db.DB) (parley.Tenant, accounts.User) {
	t.Helper()
	ctx := context.Background()
	slug := strings.ToLower(strings.NewReplacer("_", "a", "-", "b").Replace("m" + auth.NewOpaque("")[:10]))
	_, nt := auth.NewToken("", "Created with the tenant", auth.RESTScopes, false)
	ten, err := store.CreateTenant(ctx, db.NewTenant{Slug: slug, Name: "Manage", Plan: "starter",
		SealedSigningKey: []byte("k"), OwnerEmail: "owner@" + slug + ".test", OwnerPasswordHash: "x", Token: nt})
	if err != nil {
		t.Fatal(err)
	}
	user, err := store.UserByEmail(ctx, "owner@"+slug+".test")
	if err != nil {
		t.Fatal(err)
	}
	return ten, user
}

// invalidFields is the field problems of an invalid error, or nil.
func invalidFields(err error) map[string]string {
	var e *parley.Error
	if !errors.As(err, &e) || e.Kind != parley.KindInvalid {
		return nil
	}
	fe, _ := e.Details.(map[string]string)
	return fe
}

// API tokens through the operations: created only when the rules hold,
// shown once and stored by hash; listed and revoked per tenant.
func TestTokens(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.New(t)
	s := &manage.Service{DB: store}
	mine, _ := newTenant(t, store)
	theirs, _ := newTenant(t, store)

	count := func(t *testing.T, tenantID string) int {
		t.Helper()
		ts, err := s.ListTokens(ctx, tenantID)
		if err != nil {
			t.Fatal(err)
		}
		return len(ts)
	}

	t.Run("Create", func(t *testing.T) {
		token, stored, err := s.CreateToken(ctx, mine.ID, parley.TokenInput{Name: " Nightly export ",
			Scopes: []string{auth.ScopeStatsRead, auth.ScopeCorpusRead, auth.ScopeStatsRead}})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(token, auth.TokenPrefix) || stored.TenantID != mine.ID || stored.Name != "Nightly export" ||
			!slices.Equal(stored.Scopes, []string{auth.ScopeCorpusRead, auth.ScopeStatsRead}) || !strings.HasPrefix(token, stored.DisplayPrefix) {
			t.Errorf("token %q stored as %+v", token, stored)
		}
		if live, err := store.TokenByHash(ctx, auth.HashToken(token)); err != nil || live.ID != stored.ID {
			t.Errorf("by hash: %+v %v", live, err)
		}
	})

	for name, c := range map[string]struct {
		in    parley.TokenInput
		field string
		want  string
	}{
		"NamePastLimit": {parley.TokenInput{Name: strings.Repeat("n", parley.MaxTokenName+1), Scopes: []string{auth.ScopeStatsRead}}, "name", "must be at most 100 characters"},
		"NoScopes":      {parley.TokenInput{Name: "x"}, "scopes", "Choose at least one scope."},
		"UnknownScope":  {parley.TokenInput{Name: "x", Scopes: []string{auth.ScopeStatsRead, "root:all"}}, "scopes", `unknown scope "root:all" (known: corpus:read, `},
		"MCPScope":      {parley.TokenInput{Name: "x", Scopes: []string{auth.ScopeMCPCorpusRead}}, "scopes", `unknown scope "mcp:corpus:read"`},
	} {
		t.Run(name, func(t *testing.T) {
			before := count(t, mine.ID)
			_, _, err := s.CreateToken(ctx, mine.ID, c.in)
			if fe := invalidFields(err); !strings.HasPrefix(fe[c.field], c.want) {
				t.Errorf("%s: %v, want %s %q", name, err, c.field, c.want)
			}
			if n := count(t, mine.ID); n != before {
				t.Errorf("%d tokens after a refused create, %d before", n, before)
			}
		})
	}

	t.Run("NameAtLimit", func(t *testing.T) {
		if _, _, err := s.CreateToken(ctx, mine.ID, parley.TokenInput{Name: strings.Repeat("é", parley.MaxTokenName),
			Scopes: []string{auth.ScopeStatsRead}}); err != nil {
			t.Error(err)
		}
	})

	t.Run("RevokeOtherTenantsToken", func(t *testing.T) {
		ts, err := s.ListTokens(ctx, theirs.ID)
		if err != nil || len(ts) != 1 {
			t.Fatalf("their tokens: %v %v", ts, err)
		}
		if err := s.RevokeToken(ctx, mine.ID, ts[0].ID); parley.ErrorKind(err) != parley.KindNotFound {
			t.Errorf("revoking another tenant's token: %v", err)
		}
		if ts, _ := s.ListTokens(ctx, theirs.ID); ts[0].RevokedAt != nil {
			t.Error("their token was revoked")
		}
		for _, id := range []string{"not-a-uuid", "00000000-0000-0000-0000-000000000000"} {
			if err := s.RevokeToken(ctx, mine.ID, id); parley.ErrorKind(err) != parley.KindNotFound {
				t.Errorf("revoking %q: %v", id, err)
			}
		}
	})

	t.Run("Revoke", func(t *testing.T) {
		token, stored, err := s.CreateToken(ctx, mine.ID, parley.TokenInput{Name: "to revoke", Scopes: []string{auth.ScopeStatsRead}})
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // twice is harmless
			if err := s.RevokeToken(ctx, mine.ID, stored.ID); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := store.TokenByHash(ctx, auth.HashToken(token)); parley.ErrorKind(err) != parley.KindNotFound {
			t.Errorf("revoked token still live: %v", err)
		}
		ts, _ := s.ListTokens(ctx, mine.ID)
		if last := ts[len(ts)-1]; last.ID != stored.ID || last.RevokedAt == nil {
			t.Errorf("revoked token not listed last: %+v", last)
		}
	})
}
