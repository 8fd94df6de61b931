package auth_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"slices"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
)

func newBox(t *testing.T, hexKey string) *auth.Box {
	t.Helper()
	key, err := auth.ParseKey(hexKey)
	if err != nil {
		t.Fatal(err)
	}
	b, err := auth.NewBox(key)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBox(t *testing.T) {
	t.Parallel()
	box := newBox(t, strings.Repeat("01", 32))
	other := newBox(t, strings.Repeat("02", 32))

	t.Run("round trip", func(t *testing.T) {
		t.Parallel()
		for _, plain := range [][]byte{[]byte("captcha secret"), {}, bytes.Repeat([]byte{0, 1, 2}, 1000)} {
			sealed := box.Seal(plain)
			if len(plain) > 3 && bytes.Contains(sealed, plain) {
				t.Errorf("sealed value contains the plaintext")
			}
			got, err := box.Open(sealed)
			if err != nil || !bytes.Equal(got, plain) {
				t.Errorf("Open(Seal(%d bytes)) = %d bytes, %v", len(plain), len(got), err)
			}
		}
	})
	t.Run("every seal is different", func(t *testing.T) {
		t.Parallel()
		a, b := box.Seal([]byte("same")), box.Seal([]byte("same"))
		if bytes.Equal(a, b) {
			t.Error("two seals of the same value are equal: the nonce is not random")
		}
	})
	t.Run("wrong key fails", func(t *testing.T) {
		t.Parallel()
		if _, err := other.Open(box.Seal([]byte("secret"))); err == nil {
			t.Error("opened with another key")
		}
	})
	t.Run("tampering fails", func(t *testing.T) {
		t.Parallel()
		sealed := box.Seal([]byte("secret"))
		for i := range sealed {
			bad := bytes.Clone(sealed)
			bad[i] ^= 0x01
			if _, err := box.Open(bad); err == nil {
				t.Fatalf("opened a value with byte %d flipped", i)
			}
		}
		if _, err := box.Open(sealed[:len(sealed)-1]); err == nil {
			t.Error("opened a truncated value")
		}
		if _, err := box.Open(append(bytes.Clone(sealed), 0)); err == nil {
			t.Error("opened a value with a byte appended")
		}
	})
	t.Run("too short fails", func(t *testing.T) {
		t.Parallel()
		for _, v := range [][]byte{nil, {}, make([]byte, 11), make([]byte, 12), make([]byte, 27)} {
			if _, err := box.Open(v); err == nil {
				t.Errorf("opened %d bytes", len(v))
			}
		}
	})
	t.Run("NewBox wants 32 bytes", func(t *testing.T) {
		t.Parallel()
		for _, n := range []int{0, 16, 24, 31, 33, 64} {
			if _, err := auth.NewBox(make([]byte, n)); err == nil {
				t.Errorf("NewBox accepted a %d-byte key", n)
			}
		}
	})
}

func TestParseKey(t *testing.T) {
	t.Parallel()
	good := strings.Repeat("aB", 32)
	key, err := auth.ParseKey(good)
	if err != nil || len(key) != 32 || key[0] != 0xab {
		t.Fatalf("ParseKey(%q) = %x, %v", good, key, err)
	}
	for _, bad := range []string{"", "ab", strings.Repeat("a", 63), strings.Repeat("a", 65), strings.Repeat("ab", 31),
		strings.Repeat("ab", 33), strings.Repeat("zz", 32), " " + strings.Repeat("ab", 32), "0x" + strings.Repeat("ab", 31)} {
		if _, err := auth.ParseKey(bad); err == nil {
			t.Errorf("ParseKey(%q) accepted", bad)
		} else if !strings.Contains(err.Error(), "64 hexadecimal") {
			t.Errorf("ParseKey(%q): unhelpful error %q", bad, err)
		}
	}
}

func TestTokens(t *testing.T) {
	t.Parallel()
	t.Run("HashToken is stable and distinct", func(t *testing.T) {
		t.Parallel()
		a, b := auth.HashToken("ak_one"), auth.HashToken("ak_one")
		if !bytes.Equal(a, b) || len(a) != 32 {
			t.Errorf("HashToken not stable: %x %x", a, b)
		}
		if bytes.Equal(a, auth.HashToken("ak_two")) || bytes.Equal(a, auth.HashToken("ak_one ")) {
			t.Error("different tokens hash equal")
		}
	})
	t.Run("NewToken", func(t *testing.T) {
		t.Parallel()
		tok, nt := auth.NewToken("tenant-1", "name", []string{auth.ScopeStatsRead}, false)
		if !strings.HasPrefix(tok, auth.TokenPrefix) || !auth.IsAPIToken(tok) {
			t.Errorf("token %q", tok)
		}
		raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(tok, auth.TokenPrefix))
		if err != nil || len(raw) != 32 {
			t.Errorf("token body: %d bytes, %v", len(raw), err)
		}
		if !bytes.Equal(nt.Hash, auth.HashToken(tok)) || nt.TenantID != "tenant-1" || nt.Name != "name" || nt.Legacy ||
			!strings.HasPrefix(tok, nt.DisplayPrefix) || len(nt.DisplayPrefix) != len(auth.TokenPrefix)+6 {
			t.Errorf("stored %+v", nt)
		}
		if strings.Contains(nt.DisplayPrefix, tok[len(nt.DisplayPrefix):]) {
			t.Error("display prefix holds the whole token")
		}
		tok2, _ := auth.NewToken("tenant-1", "name", nil, false)
		if tok == tok2 {
			t.Error("two tokens are equal")
		}
	})
	t.Run("legacy keys are not ak_ tokens", func(t *testing.T) {
		t.Parallel()
		tok, nt := auth.NewToken("t", "n", auth.LegacyKeyScopes, true)
		if auth.IsAPIToken(tok) || !nt.Legacy || !strings.HasPrefix(tok, nt.DisplayPrefix) || !bytes.Equal(nt.Hash, auth.HashToken(tok)) {
			t.Errorf("legacy %q %+v", tok, nt)
		}
	})
	t.Run("IsAPIToken", func(t *testing.T) {
		t.Parallel()
		for s, want := range map[string]bool{"ak_x": true, "ak_": true, "AK_x": false, "xak_": false, "": false, "lk_x": false} {
			if auth.IsAPIToken(s) != want {
				t.Errorf("IsAPIToken(%q) = %v", s, !want)
			}
		}
	})
}

func TestScopes(t *testing.T) {
	t.Parallel()
	t.Run("RESTScopes has the thirteen spec scopes and audit:read", func(t *testing.T) {
		t.Parallel()
		want := []string{"corpus:read", "corpus:write", "segments:read", "segments:write", "settings:read", "settings:write",
			"stats:read", "visitors:read", "visitors:write", "tools:read", "tools:write", "conversations:read", "conversations:write",
			"audit:read"}
		if !slices.Equal(auth.RESTScopes, want) {
			t.Errorf("RESTScopes = %v", auth.RESTScopes)
		}
		if !slices.Equal(auth.LegacyKeyScopes, []string{"stats:read"}) {
			t.Errorf("LegacyKeyScopes = %v", auth.LegacyKeyScopes)
		}
	})
	t.Run("Principal.HasScope", func(t *testing.T) {
		t.Parallel()
		p := auth.Principal{Scopes: []string{"stats:read"}}
		if !p.HasScope("stats:read") || p.HasScope("settings:read") || p.HasScope("stats") || (auth.Principal{}).HasScope("stats:read") {
			t.Error("HasScope")
		}
	})
}

func TestPasswords(t *testing.T) {
	t.Parallel()
	// The lowest cost keeps the test fast under the race detector; Check
	// reads the cost from the hash, so nothing else depends on it.
	pws := auth.NewPasswords(bcrypt.MinCost)
	for _, tc := range []struct {
		name string
		pw   string
		ok   bool
	}{
		{"9 characters", strings.Repeat("p", 9), false},
		{"empty", "", false},
		{"10 characters", strings.Repeat("p", 10), true},
		{"72 bytes", strings.Repeat("p", 72), true},
		{"73 bytes", strings.Repeat("p", 73), false},
		{"72 bytes of 36 two-byte runes", strings.Repeat("é", 36), true},
		{"74 bytes of 37 two-byte runes", strings.Repeat("é", 37), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, err := pws.Hash(tc.pw)
			if !tc.ok {
				if err == nil {
					t.Errorf("Hash accepted %d bytes", len(tc.pw))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if h == tc.pw || !strings.HasPrefix(h, "$2") {
				t.Errorf("hash %q", h)
			}
			if !pws.Check(h, tc.pw) {
				t.Error("the password does not match its hash")
			}
			if pws.Check(h, tc.pw+"x") || pws.Check(h, tc.pw[:len(tc.pw)-1]) {
				t.Error("a different password matches")
			}
		})
	}
	t.Run("hashes are salted", func(t *testing.T) {
		t.Parallel()
		a, _ := pws.Hash("same password")
		b, _ := pws.Hash("same password")
		if a == b {
			t.Error("two hashes of the same password are equal")
		}
	})
	t.Run("empty or garbage hash never matches", func(t *testing.T) {
		t.Parallel()
		for _, h := range []string{"", "not a hash", "$2a$10$short"} {
			for _, pw := range []string{"", "parley-dummy-password", "anything at all", strings.Repeat("p", 73)} {
				if pws.Check(h, pw) {
					t.Errorf("Check(%q, %q) = true", h, pw)
				}
			}
		}
	})
	t.Run("hashes at the hasher's cost", func(t *testing.T) {
		t.Parallel()
		h, err := pws.Hash("a cheap password")
		if err != nil {
			t.Fatal(err)
		}
		if c, err := bcrypt.Cost([]byte(h)); err != nil || c != bcrypt.MinCost {
			t.Errorf("cost %d (%v), want %d", c, err, bcrypt.MinCost)
		}
	})
	t.Run("a hash of another cost still checks", func(t *testing.T) {
		t.Parallel()
		h, err := auth.NewPasswords(bcrypt.MinCost + 1).Hash("another password")
		if err != nil {
			t.Fatal(err)
		}
		if !pws.Check(h, "another password") || pws.Check(h, "another passwort") {
			t.Error("Check of a hash made at another cost")
		}
	})
	t.Run("cost 0 is bcrypt's default", func(t *testing.T) {
		t.Parallel()
		if c := auth.NewPasswords(0).Cost(); c != bcrypt.DefaultCost {
			t.Errorf("cost %d, want %d", c, bcrypt.DefaultCost)
		}
	})
}

// TestAuthenticator covers what the HTTP tests cannot reach: the OAuth verifier hook.
func TestAuthenticator(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	ctx := context.Background()
	box := newBox(t, strings.Repeat("03", 32))
	tok, nt := auth.NewToken("", "t", []string{auth.ScopeStatsRead}, false)
	ten, err := store.CreateTenant(ctx, db.NewTenant{Slug: "authn-" + hex.EncodeToString(auth.HashToken(tok)[:6]),
		Name: "Authn", Plan: "free", SealedSigningKey: box.Seal([]byte("k")), Token: nt})
	if err != nil {
		t.Fatal(err)
	}
	req := func(header, value string) *http.Request {
		r, _ := http.NewRequest("GET", "http://parley.test/", nil)
		if header != "" {
			r.Header.Set(header, value)
		}
		return r
	}

	t.Run("ak_ token", func(t *testing.T) {
		t.Parallel()
		p, err := (&auth.Authenticator{DB: store}).Authenticate(ctx, req("Authorization", "Bearer "+tok))
		if err != nil || p.TenantID != ten.ID || !slices.Equal(p.Scopes, []string{auth.ScopeStatsRead}) || p.TokenID == "" {
			t.Errorf("principal %+v, %v", p, err)
		}
	})
	t.Run("non-ak_ bearer goes to the JWT verifier", func(t *testing.T) {
		t.Parallel()
		var seen string
		a := &auth.Authenticator{DB: store, Audience: "http://parley.test", JWT: func(_ context.Context, token string) (auth.Principal, error) {
			seen = token
			return auth.Principal{TenantID: "from-jwt", Scopes: []string{auth.ScopeCorpusRead}, Audiences: []string{"http://parley.test"}}, nil
		}}
		p, err := a.Authenticate(ctx, req("Authorization", "Bearer eyJ.payload.sig"))
		if err != nil || p.TenantID != "from-jwt" || seen != "eyJ.payload.sig" {
			t.Errorf("principal %+v, %v, verifier saw %q", p, err, seen)
		}
		// ak_ tokens never reach the verifier
		seen = ""
		if _, err := a.Authenticate(ctx, req("Authorization", "Bearer ak_unknown")); parley.ErrorKind(err) != parley.KindUnauthorized || seen != "" {
			t.Errorf("unknown ak_ token: %v, verifier saw %q", err, seen)
		}
	})
	t.Run("without a verifier non-ak_ bearers are refused", func(t *testing.T) {
		t.Parallel()
		_, err := (&auth.Authenticator{DB: store}).Authenticate(ctx, req("Authorization", "Bearer eyJ.payload.sig"))
		if parley.ErrorKind(err) != parley.KindUnauthorized {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("refusals are unauthorized", func(t *testing.T) {
		t.Parallel()
		a := &auth.Authenticator{DB: store}
		for _, r := range []*http.Request{req("", ""), req("Authorization", "Basic x"), req("Authorization", "Bearer"),
			req("X-API-Key", tok), req("X-API-Key", "lk_unknown")} {
			if _, err := a.Authenticate(ctx, r); parley.ErrorKind(err) != parley.KindUnauthorized {
				t.Errorf("%v: err = %v", r.Header, err)
			}
		}
	})
}
