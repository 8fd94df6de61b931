package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"time"
)

// ResetLinkLifetime is how long an emailed password-reset link works.
const ResetLinkLifetime = time.Hour

// NewResetToken returns a password-reset token, 32 bytes from crypto/rand
// in URL-safe base64, and the SHA-256 that is all the database keeps of it.
func NewResetToken() (token string, hash []byte) {
	token = base64.RawURLEncoding.EncodeToString(RandomBytes(32))
	return token, HashResetToken(token)
}

// HashResetToken is the SHA-256 of a reset token, by which its link is
// found. The lookup compares hashes, not the token: timing it tells an
// attacker nothing about a valid token.
func HashResetToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// PasswordStamp fingerprints a password hash for the sessions signed in
// with it: a session whose stamp no longer matches its user's hash was
// signed in before the password changed, and is ended (as Django's session
// auth hash does). Sessions are stored server-side, so the stamp never
// reaches the browser.
func PasswordStamp(passwordHash string) string {
	h := sha256.Sum256([]byte("parley-session-stamp\x00" + passwordHash))
	return hex.EncodeToString(h[:16])
}

// StampMatches reports, in constant time, whether a session's stamp is the
// one of the user's current password hash.
func StampMatches(stamp, passwordHash string) bool {
	return subtle.ConstantTimeCompare([]byte(stamp), []byte(PasswordStamp(passwordHash))) == 1
}
