package handlers

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

// BearerMatches reports whether r carries Authorization: Bearer with the
// token whose SHA-256 is want: both sides hashed, compared in constant time
// (the operator API's token, the metrics token).
func BearerMatches(r *http.Request, want []byte) bool {
	scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	given := sha256.Sum256([]byte(strings.TrimSpace(token)))
	return strings.EqualFold(scheme, "Bearer") && subtle.ConstantTimeCompare(given[:], want) == 1
}
