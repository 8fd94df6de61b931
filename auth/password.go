package auth

import (
	"errors"

	"golang.org/x/crypto/bcrypt"
)

// MinPasswordLength is the shortest admin password accepted.
const MinPasswordLength = 10

// MaxPasswordBytes is the longest admin password accepted: bcrypt ignores
// anything after the 72nd byte.
const MaxPasswordBytes = 72

// HashPassword hashes an admin password with bcrypt.
func HashPassword(pw string) (string, error) {
	if len(pw) < MinPasswordLength {
		return "", errors.New("password must be at least 10 characters")
	}
	if len(pw) > MaxPasswordBytes {
		return "", errors.New("password must be at most 72 bytes")
	}
	h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.DefaultCost)
	return string(h), err
}

// dummyHash is compared against when the user does not exist, so that a login
// for an unknown email costs the same time as one with a wrong password.
var dummyHash, _ = bcrypt.GenerateFromPassword([]byte("parley-dummy-password"), bcrypt.DefaultCost)

// CheckPassword reports whether pw matches hash; with an empty hash it still
// spends the time of one comparison. A password longer than HashPassword
// accepts never matches (bcrypt alone would match it on its first 72 bytes).
func CheckPassword(hash, pw string) bool {
	if hash == "" || len(pw) > MaxPasswordBytes {
		_ = bcrypt.CompareHashAndPassword(dummyHash, []byte(pw[:min(len(pw), MaxPasswordBytes)]))
		return false
	}
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(pw)) == nil
}
