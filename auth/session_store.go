package auth

import (
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/alexedwards/scs/v2"
)

// HashedSessionStore keeps dashboard sessions in Store under the SHA-256
// (hex) of their token, which is the cookie's value, so that a reader of
// the sessions table gets no cookie that signs in. Tokens carry 256 bits
// of entropy: a plain SHA-256 is enough.
type HashedSessionStore struct {
	Store scs.Store
}

var _ scs.Store = HashedSessionStore{}

// SessionKey is what the store keeps of a session token.
func SessionKey(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// Find returns the data of the session token.
func (s HashedSessionStore) Find(token string) ([]byte, bool, error) {
	return s.Store.Find(SessionKey(token))
}

// Commit stores the session token's data until expiry.
func (s HashedSessionStore) Commit(token string, b []byte, expiry time.Time) error {
	return s.Store.Commit(SessionKey(token), b, expiry)
}

// Delete removes the session token's data.
func (s HashedSessionStore) Delete(token string) error {
	return s.Store.Delete(SessionKey(token))
}
