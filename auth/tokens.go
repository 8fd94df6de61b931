package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"

	"github.com/parley/parley/db/accounts"
)

// TokenPrefix starts every API token, so that scanners and people recognise one.
const TokenPrefix = "ak_"

// legacyPrefix starts legacy plain keys, which travel in X-API-Key.
const legacyPrefix = "lk_"

// NewToken generates an API token (legacy plain key when legacy) and what to store of it.
func NewToken(tenantID, name string, scopes []string, legacy bool) (string, accounts.NewToken) {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand never fails on supported platforms
	prefix := TokenPrefix
	if legacy {
		prefix = legacyPrefix
	}
	token := prefix + base64.RawURLEncoding.EncodeToString(b)
	return token, accounts.NewToken{
		TenantID:      tenantID,
		Name:          name,
		Legacy:        legacy,
		Hash:          HashToken(token),
		DisplayPrefix: token[:len(prefix)+6],
		Scopes:        scopes,
	}
}

// HashToken is what is stored of a token. Tokens carry 256 bits of entropy, so
// a plain SHA-256 is enough; lookups by hash do not leak timing about the token.
func HashToken(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}

// IsAPIToken reports whether s looks like an ak_ token.
func IsAPIToken(s string) bool { return strings.HasPrefix(s, TokenPrefix) }
