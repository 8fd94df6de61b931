package manage_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db/accounts"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/manage"
)

// OAuth through the operations: registration's rules and scopes, a
// consent's code, and connected apps listed and revoked per tenant.
func TestOAuth(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.New(t)
	s := &manage.Service{DB: store}
	now := time.Now()
	const cb = "https://app.example/cb"

	t.Run("Register", func(t *testing.T) {
		for name, c := range map[string]struct {
			scope string
			want  []string
		}{
			"EveryScope":   {"", auth.OAuthScopes},
			"Asked":        {"mcp:corpus:read corpus:read bogus corpus:read", []string{auth.ScopeCorpusRead, auth.ScopeMCPCorpusRead}},
			"BlankIsEvery": {"   ", auth.OAuthScopes},
		} {
			client, err := s.RegisterOAuthClient(ctx, parley.OAuthClientInput{ClientName: " Claude ", RedirectURIs: []string{cb}, Scope: c.scope})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !strings.HasPrefix(client.ID, "pc_") || client.Name != "Claude" || !slices.Equal(client.Scopes, c.want) ||
				!slices.Equal(client.RedirectURIs, []string{cb}) {
				t.Errorf("%s: registered %+v", name, client)
			}
		}
		client, err := s.RegisterOAuthClient(ctx, parley.OAuthClientInput{RedirectURIs: []string{"http://127.0.0.1:3000/cb"}})
		if err != nil || client.Name != "127.0.0.1" {
			t.Errorf("default name: %+v %v", client, err)
		}
	})

	t.Run("RegisterRefused", func(t *testing.T) {
		for name, c := range map[string]struct {
			in    parley.OAuthClientInput
			field string
			want  string
		}{
			"URIsPastLimit": {parley.OAuthClientInput{RedirectURIs: slices.Repeat([]string{cb}, parley.MaxRedirectURIs+1)}, "redirect_uris", "give between 1 and 10"},
			"PlainHTTP":     {parley.OAuthClientInput{RedirectURIs: []string{"http://app.example/cb"}}, "redirect_uris", "http://app.example/cb must use https"},
			"Confidential":  {parley.OAuthClientInput{RedirectURIs: []string{cb}, TokenEndpointAuthMethod: "client_secret_post"}, "token_endpoint_auth_method", "only public clients"},
			"NamePastLimit": {parley.OAuthClientInput{RedirectURIs: []string{cb}, ClientName: strings.Repeat("n", parley.MaxClientName+1)}, "client_name", "at most 200 characters of text"},
			"NoKnownScope":  {parley.OAuthClientInput{RedirectURIs: []string{cb}, Scope: "admin:all"}, "scope", "none of the scopes asked for is known"},
		} {
			_, err := s.RegisterOAuthClient(ctx, c.in)
			if fe := invalidFields(err); !strings.HasPrefix(fe[c.field], c.want) {
				t.Errorf("%s: %v (%v), want %s %q", name, err, fe, c.field, c.want)
			}
		}
		if _, err := s.RegisterOAuthClient(ctx, parley.OAuthClientInput{RedirectURIs: slices.Repeat([]string{cb}, parley.MaxRedirectURIs)}); err != nil {
			t.Errorf("at the limit of redirect URIs: %v", err)
		}
	})

	// connect has the owner of ten approve client, and the client redeem
	// the code: a live grant.
	connect := func(t *testing.T, ten parley.Tenant, user accounts.User, client accounts.OAuthClient) {
		t.Helper()
		code, err := s.CreateOAuthCode(ctx, accounts.OAuthCode{ClientID: client.ID, TenantID: ten.ID, UserID: user.ID, RedirectURI: cb,
			Scopes: []string{auth.ScopeCorpusRead}, Resource: "https://parley.test", CodeChallenge: "x"}, now)
		if err != nil {
			t.Fatal(err)
		}
		stored, err := store.OAuthCodeByHash(ctx, auth.HashToken(code))
		if err != nil || !strings.HasPrefix(code, "ac_") || stored.TenantID != ten.ID || !stored.ExpiresAt.Equal(now.Add(auth.CodeTTL).Truncate(time.Microsecond)) {
			t.Fatalf("code %q stored as %+v (%v)", code, stored, err)
		}
		if _, err := store.RedeemOAuthCode(ctx, auth.HashToken(code), accounts.OAuthIssue{JTI: auth.NewOpaque(""), AccessExpires: now.Add(auth.AccessTokenTTL),
			RefreshHash: auth.HashToken(auth.NewOpaque(auth.RefreshTokenPrefix)), RefreshExpires: now.Add(auth.RefreshTokenTTL)}, now); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("ConnectedApps", func(t *testing.T) {
		mine, me := newTenant(t, store)
		theirs, them := newTenant(t, store)
		client, err := s.RegisterOAuthClient(ctx, parley.OAuthClientInput{ClientName: "Claude", RedirectURIs: []string{cb}})
		if err != nil {
			t.Fatal(err)
		}
		connect(t, mine, me, client)
		connect(t, theirs, them, client)

		apps, err := s.ConnectedApps(ctx, mine.ID, now)
		if err != nil || len(apps) != 1 || apps[0].ClientID != client.ID || !slices.Equal(apps[0].Scopes, []string{auth.ScopeCorpusRead}) {
			t.Fatalf("connected apps %+v %v", apps, err)
		}
		for _, id := range []string{"pc_unknown", "", "bad\x00id"} {
			if err := s.RevokeConnectedApp(ctx, mine.ID, id, now); parley.ErrorKind(err) != parley.KindNotFound {
				t.Errorf("revoking %q: %v", id, err)
			}
		}
		if err := s.RevokeConnectedApp(ctx, mine.ID, client.ID, now); err != nil {
			t.Fatal(err)
		}
		if apps, _ := s.ConnectedApps(ctx, mine.ID, now); len(apps) != 0 {
			t.Errorf("still connected: %+v", apps)
		}
		// Their grant of the same client is theirs: untouched.
		if apps, _ := s.ConnectedApps(ctx, theirs.ID, now); len(apps) != 1 {
			t.Errorf("their connected apps after mine was revoked: %+v", apps)
		}
		err = s.RevokeConnectedApp(ctx, mine.ID, client.ID, now)
		if e, ok := err.(*parley.Error); !ok || e.Kind != parley.KindNotFound || e.Message != "That app has no access to revoke" {
			t.Errorf("revoking twice: %v", err)
		}
	})
}
