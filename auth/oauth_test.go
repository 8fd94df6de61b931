package auth_test

import (
	"context"
	"crypto/rsa"
	"encoding/base64"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/crypto/bcrypt"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/accounts"
	"github.com/parley/parley/db/dbtest"
)

// oauthGrant provisions a tenant with an owner, a client and a redeemed
// code, and returns the grant and the jti stored for its access token.
func oauthGrant(t testing.TB, store *db.DB, box *auth.Box, now time.Time) (accounts.OAuthGrant, string) {
	t.Helper()
	ctx := context.Background()
	slug := "oauth-" + strings.ToLower(auth.NewOpaque("")[:8])
	slug = strings.NewReplacer("_", "a", "-", "b").Replace(slug)
	p, err := auth.Provision(ctx, store, box, auth.NewPasswords(bcrypt.MinCost), parley.NewTenantInput{
		Slug: slug, Name: "OAuth", Plan: "starter", OwnerEmail: "owner@" + slug + ".test", OwnerPassword: "password-" + slug})
	if err != nil {
		t.Fatal(err)
	}
	user, err := store.UserByEmail(ctx, p.OwnerEmail)
	if err != nil {
		t.Fatal(err)
	}
	client, err := store.CreateOAuthClient(ctx, accounts.OAuthClient{ID: auth.NewOpaque("pc_"), Name: "app",
		RedirectURIs: []string{"https://app.example/cb"}, Scopes: auth.OAuthScopes})
	if err != nil {
		t.Fatal(err)
	}
	code := auth.NewOpaque("ac_")
	if err := store.CreateOAuthCode(ctx, auth.HashToken(code), accounts.OAuthCode{ClientID: client.ID, TenantID: p.ID, UserID: user.ID,
		RedirectURI: "https://app.example/cb", Scopes: []string{"settings:read", "corpus:read"}, Resource: "https://parley.test",
		CodeChallenge: "x", ExpiresAt: now.Add(auth.CodeTTL)}, now); err != nil {
		t.Fatal(err)
	}
	jti := auth.NewOpaque("")
	g, err := store.RedeemOAuthCode(ctx, auth.HashToken(code), accounts.OAuthIssue{JTI: jti, AccessExpires: now.Add(auth.AccessTokenTTL),
		RefreshHash: auth.HashToken(auth.NewOpaque(auth.RefreshTokenPrefix)), RefreshExpires: now.Add(auth.RefreshTokenTTL)}, now)
	if err != nil {
		t.Fatal(err)
	}
	return g, jti
}

// publicKey builds the RSA key of a JWK, as a verifier outside Parley does.
func publicKey(t *testing.T, k auth.JWK) *rsa.PublicKey {
	t.Helper()
	n, err1 := base64.RawURLEncoding.DecodeString(k.N)
	e, err2 := base64.RawURLEncoding.DecodeString(k.E)
	if err1 != nil || err2 != nil {
		t.Fatalf("JWK %s: n or e is not base64url", k.Kid)
	}
	return &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
}

// TestOAuthAccessTokens signs and verifies access tokens and rotates the
// signing key. Not parallel: the keys are the test database's.
func TestOAuthAccessTokens(t *testing.T) {
	ctx := context.Background()
	store := dbtest.New(t)
	box := newBox(t, strings.Repeat("03", 32))
	now := time.Now()
	clock := now
	keys := &auth.SigningKeys{DB: store, Box: box}
	o := &auth.OAuth{DB: store, Keys: keys, Issuer: "https://parley.test", Now: func() time.Time { return clock }}
	g, jti := oauthGrant(t, store, box, now)

	tok, err := o.SignAccessToken(ctx, g, jti, now)
	if err != nil {
		t.Fatal(err)
	}
	p, err := o.VerifyAccessToken(ctx, tok)
	if err != nil || p.TenantID != g.TenantID || !slices.Equal(p.Scopes, []string{"settings:read", "corpus:read"}) ||
		!slices.Equal(p.Audiences, []string{"https://parley.test"}) || p.TokenID != jti || p.ClientID != g.ClientID {
		t.Fatalf("verify = %+v, %v", p, err)
	}

	// The JWKS verifies it, by kid, without Parley's code.
	jwks, err := keys.JWKS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	first := jwks[0].Kid
	parsed, err := jwt.Parse(tok, func(tk *jwt.Token) (any, error) {
		for _, k := range jwks {
			if k.Kid == tk.Header["kid"] {
				return publicKey(t, k), nil
			}
		}
		return nil, jwt.ErrTokenUnverifiable
	}, jwt.WithValidMethods([]string{"RS256"}), jwt.WithIssuer("https://parley.test"), jwt.WithAudience("https://parley.test"))
	if err != nil || !parsed.Valid {
		t.Fatalf("verifying with the JWKS: %v", err)
	}
	claims := parsed.Claims.(jwt.MapClaims)
	if claims["sub"] != g.UserID || claims["tenant"] != g.TenantID || claims["jti"] != jti || claims["scope"] != "settings:read corpus:read" {
		t.Errorf("claims = %v", claims)
	}
	if exp, _ := claims.GetExpirationTime(); !exp.Time.Equal(now.Add(auth.AccessTokenTTL).Truncate(time.Second)) {
		t.Errorf("exp = %v, want 15 minutes after %v", exp, now)
	}

	refused := func(what, token string) {
		t.Helper()
		if _, err := o.VerifyAccessToken(ctx, token); parley.ErrorKind(err) != parley.KindUnauthorized {
			t.Errorf("%s: %v, want unauthorized", what, err)
		}
	}
	parts := strings.Split(tok, ".")
	refused("tampered payload", parts[0]+"."+parts[1][:len(parts[1])-2]+"AA."+parts[2])
	refused("no signature", parts[0]+"."+parts[1]+".")
	none := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"iss": "https://parley.test", "tenant": g.TenantID, "jti": jti,
		"aud": "https://parley.test", "exp": now.Add(time.Hour).Unix()})
	noneTok, _ := none.SignedString(jwt.UnsafeAllowNoneSignatureType)
	refused("alg none", noneTok)
	hs := jwt.NewWithClaims(jwt.SigningMethodHS256, parsed.Claims)
	hs.Header["kid"] = first
	hsTok, _ := hs.SignedString([]byte("secret"))
	refused("HS256", hsTok)
	other := &auth.OAuth{DB: store, Keys: keys, Issuer: "https://other.test", Now: o.Now}
	if _, err := other.VerifyAccessToken(ctx, tok); parley.ErrorKind(err) != parley.KindUnauthorized {
		t.Errorf("another issuer: %v", err)
	}
	// An unknown jti (not stored, so not revocable) is refused.
	unstored, _ := o.SignAccessToken(ctx, g, "unknown-jti", now)
	refused("unstored jti", unstored)
	// Expiry, on the injected clock.
	clock = now.Add(auth.AccessTokenTTL + 10*time.Second)
	if _, err := o.VerifyAccessToken(ctx, tok); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("after 15 minutes: %v, want expired", err)
	}
	clock = now

	// Rotation: the new key signs, the previous one still verifies.
	second, err := keys.Rotate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	g2, jti2 := oauthGrant(t, store, box, now)
	tok2, _ := o.SignAccessToken(ctx, g2, jti2, now)
	if h, _, _ := jwt.NewParser().ParseUnverified(tok2, jwt.MapClaims{}); h.Header["kid"] != second {
		t.Errorf("after rotation, kid = %v, want %s", h.Header["kid"], second)
	}
	if _, err := o.VerifyAccessToken(ctx, tok); err != nil {
		t.Errorf("a token of the previous key after rotation: %v", err)
	}
	if _, err := o.VerifyAccessToken(ctx, tok2); err != nil {
		t.Errorf("a token of the new key: %v", err)
	}
	jwks, _ = keys.JWKS(ctx)
	if len(jwks) != 2 || jwks[0].Kid != second || jwks[1].Kid != first {
		t.Errorf("JWKS after rotation = %v, want %s then %s", jwks, second, first)
	}
	// Another process (fresh keys cache) verifies both too.
	fresh := &auth.OAuth{DB: store, Keys: &auth.SigningKeys{DB: store, Box: box}, Issuer: "https://parley.test", Now: o.Now}
	for _, tk := range []string{tok, tok2} {
		if _, err := fresh.VerifyAccessToken(ctx, tk); err != nil {
			t.Errorf("another process: %v", err)
		}
	}
	// A second rotation retires the first key.
	if _, err := keys.Rotate(ctx); err != nil {
		t.Fatal(err)
	}
	refused("a token of a retired key", tok)
	if _, err := o.VerifyAccessToken(ctx, tok2); err != nil {
		t.Errorf("a token of the previous key after the second rotation: %v", err)
	}
	// The clean-up deletes tokens long expired: then even an unexpired
	// signature finds no stored jti.
	if _, err := store.DeleteExpiredOAuth(ctx, now.Add(auth.AccessTokenTTL+30*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := o.VerifyAccessToken(ctx, tok2); err != nil {
		t.Errorf("cleaned up before its expiry plus an hour: %v", err)
	}
	if _, err := store.DeleteExpiredOAuth(ctx, now.Add(auth.AccessTokenTTL+2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	refused("a token cleaned up", tok2)
	if n, err := store.DeleteExpiredOAuth(ctx, now.Add(auth.RefreshTokenTTL+time.Hour)); err != nil || n == 0 {
		t.Errorf("cleaning up expired refresh tokens and their grants: %d, %v", n, err)
	}
	// Keys sealed with another secret key do not open: an error, not a
	// refusal, until a rotation under the new secret key.
	newSecret := newBox(t, strings.Repeat("04", 32))
	wrongKeys := &auth.SigningKeys{DB: store, Box: newSecret}
	wrong := &auth.OAuth{DB: store, Keys: wrongKeys, Issuer: "https://parley.test", Now: o.Now}
	if err := wrongKeys.Ensure(ctx); err == nil || !strings.Contains(err.Error(), "rotate-key") {
		t.Errorf("keys under another secret key: %v, want an error naming rotate-key", err)
	}
	if _, err := wrong.VerifyAccessToken(ctx, tok2); err == nil || parley.ErrorKind(err) == parley.KindUnauthorized {
		t.Errorf("keys under another secret key: %v, want an internal error", err)
	}
	if _, err := wrongKeys.Rotate(ctx); err != nil {
		t.Fatal(err)
	}
	g3, jti3 := oauthGrant(t, store, box, now)
	tok3, err := wrong.SignAccessToken(ctx, g3, jti3, now)
	if err != nil {
		t.Fatalf("signing after the rotation under the new secret key: %v", err)
	}
	if _, err := wrong.VerifyAccessToken(ctx, tok3); err != nil {
		t.Errorf("verifying after the rotation under the new secret key: %v", err)
	}
}

// bearerRequest is a request with that Authorization header.
func bearerRequest(authorization string) *http.Request {
	req, _ := http.NewRequest(http.MethodGet, "/tenants/x", nil)
	req.Header.Set("Authorization", authorization)
	return req
}

func TestAuthenticatorAudience(t *testing.T) {
	t.Parallel()
	verifier := func(aud string) auth.BearerVerifier {
		return func(context.Context, string) (auth.Principal, error) {
			return auth.Principal{TenantID: "t", Scopes: []string{"settings:read"}, Audiences: strings.Fields(aud)}, nil
		}
	}
	for _, tc := range []struct {
		tokenAud, want string
		ok             bool
	}{
		{"https://parley.test", "https://parley.test", true},
		{"https://parley.test/mcp", "https://parley.test/mcp", true},
		{"https://parley.test/mcp", "https://parley.test", false},
		{"https://parley.test", "https://parley.test/mcp", false},
		{"https://parley.test", "", false},
		// a grant of both families without a resource indicator
		{"https://parley.test https://parley.test/mcp", "https://parley.test", true},
		{"https://parley.test https://parley.test/mcp", "https://parley.test/mcp", true},
		{"https://parley.test https://parley.test/mcp", "https://other.test", false},
	} {
		a := &auth.Authenticator{JWT: verifier(tc.tokenAud), Audience: tc.want}
		req := bearerRequest("Bearer eyJ.a.b")
		_, err := a.Authenticate(context.Background(), req)
		if (err == nil) != tc.ok || err != nil && parley.ErrorKind(err) != parley.KindUnauthorized {
			t.Errorf("token for %q at %q: %v", tc.tokenAud, tc.want, err)
		}
	}
}

func TestCheckPKCE(t *testing.T) {
	t.Parallel()
	// RFC 7636, appendix B.
	const verifier, challenge = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
	if !auth.CheckPKCE(verifier, challenge) {
		t.Error("RFC 7636's example does not verify")
	}
	for _, v := range []string{verifier[:42], verifier + "x", strings.Replace(verifier, "d", "e", 1), strings.Repeat("a", 129), verifier[:42] + "!", challenge} {
		if auth.CheckPKCE(v, challenge) {
			t.Errorf("verifier %q accepted", v)
		}
	}
}

func TestFilterOAuthScopes(t *testing.T) {
	t.Parallel()
	got := auth.FilterOAuthScopes("mcp:corpus:read  bogus corpus:read corpus:read admin mcp:billing:read")
	if want := []string{"corpus:read", "mcp:corpus:read", "mcp:billing:read"}; !slices.Equal(got, want) {
		t.Errorf("FilterOAuthScopes = %v, want %v", got, want)
	}
	if got := auth.FilterOAuthScopes("nothing known"); len(got) != 0 {
		t.Errorf("unknown scopes kept: %v", got)
	}
}

// BenchmarkVerifyAccessToken is what an OAuth access token adds to a
// management request: the RS256 signature and the revocation read.
func BenchmarkVerifyAccessToken(b *testing.B) {
	ctx := context.Background()
	store := dbtest.New(b)
	key, _ := auth.ParseKey(strings.Repeat("05", 32))
	box, _ := auth.NewBox(key)
	now := time.Now()
	o := &auth.OAuth{DB: store, Keys: &auth.SigningKeys{DB: store, Box: box}, Issuer: "https://parley.test"}
	g, jti := oauthGrant(b, store, box, now)
	tok, err := o.SignAccessToken(ctx, g, jti, now)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("signature", func(b *testing.B) {
		for b.Loop() {
			if _, err := o.ParseAccessToken(ctx, tok); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("signature and revocation", func(b *testing.B) {
		for b.Loop() {
			if _, err := o.VerifyAccessToken(ctx, tok); err != nil {
				b.Fatal(err)
			}
		}
	})
}
