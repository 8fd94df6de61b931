package auth

import (
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestVerifyVisitorToken(t *testing.T) {
	t.Parallel()
	key := []byte("vsk_test-key")
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	sign := func(method jwt.SigningMethod, k any, claims jwt.MapClaims) string {
		t.Helper()
		s, err := jwt.NewWithClaims(method, claims).SignedString(k)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	valid := jwt.MapClaims{"sub": " ext-42 ", "email": "ada@example.com", "name": "Ada", "exp": now.Add(time.Hour).Unix()}

	t.Run("valid", func(t *testing.T) {
		c, err := VerifyVisitorToken(key, sign(jwt.SigningMethodHS256, key, valid), now)
		if err != nil || c.Subject != "ext-42" || c.Email != "ada@example.com" || c.Name != "Ada" {
			t.Fatalf("claims %+v, err %v", c, err)
		}
	})
	refused := []struct {
		name, token, reason string
		key                 []byte
	}{
		{"wrong key", sign(jwt.SigningMethodHS256, []byte("other"), valid), "signature does not match", key},
		{"none algorithm", sign(jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, valid), `not "none"`, key},
		{"HS512", sign(jwt.SigningMethodHS512, key, valid), `not "HS512"`, key},
		{"expired beyond the leeway", sign(jwt.SigningMethodHS256, key, jwt.MapClaims{"sub": "x", "exp": now.Add(-31 * time.Second).Unix()}), "token expired", key},
		{"no exp", sign(jwt.SigningMethodHS256, key, jwt.MapClaims{"sub": "x"}), "exp claim is required", key},
		{"blank sub", sign(jwt.SigningMethodHS256, key, jwt.MapClaims{"sub": "  ", "exp": now.Add(time.Hour).Unix()}), "sub claim", key},
		{"long sub", sign(jwt.SigningMethodHS256, key, jwt.MapClaims{"sub": strings.Repeat("x", 256), "exp": now.Add(time.Hour).Unix()}), "sub claim too long", key},
		{"malformed", "not.a.token", "malformed token", key},
		{"tenant without key", sign(jwt.SigningMethodHS256, key, valid), "no visitor signing key", nil},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			_, err := VerifyVisitorToken(tc.key, tc.token, now)
			if err == nil || !strings.Contains(err.Error(), tc.reason) || !strings.HasPrefix(err.Error(), "Invalid visitor token: ") {
				t.Fatalf("err %v, want one saying %q", err, tc.reason)
			}
		})
	}
	t.Run("expired within the leeway", func(t *testing.T) {
		tok := sign(jwt.SigningMethodHS256, key, jwt.MapClaims{"sub": "x", "exp": now.Add(-29 * time.Second).Unix()})
		if _, err := VerifyVisitorToken(key, tok, now); err != nil {
			t.Fatal(err)
		}
	})
}
