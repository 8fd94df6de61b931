package handlers

import (
	"net/http"

	"github.com/parley/parley"
)

// The Idempotency-Key of the creates and of the chat (README, "Retrying
// requests"): the request header, the answer's header of a replay, and
// the longest key.
const (
	IdempotencyKeyHeader      = "Idempotency-Key"
	IdempotencyReplayedHeader = "Idempotency-Replayed"
	MaxIdempotencyKey         = 255
)

// The refusals of an Idempotency-Key: one that is not 1 to
// MaxIdempotencyKey printable ASCII characters (400), one sent again with
// another request (422: nothing is written), one whose first request is
// still running (409: retry once it has answered).
var (
	ErrInvalidIdempotencyKey = &parley.Error{Kind: parley.KindInvalid, Code: "INVALID_IDEMPOTENCY_KEY",
		Message: "Idempotency-Key must be 1 to 255 printable characters"}
	ErrIdempotencyKeyReused = &parley.Error{Kind: parley.KindUnprocessable, Code: "IDEMPOTENCY_KEY_REUSED",
		Message: "This Idempotency-Key was used with another request; send a new key for a new request"}
	ErrIdempotencyKeyInUse = &parley.Error{Kind: parley.KindConflict, Code: "IDEMPOTENCY_KEY_IN_USE",
		Message: "The first request with this Idempotency-Key is still running; retry once it has answered"}
)

// IdempotencyKey is the request's Idempotency-Key: "" when it carries none,
// else one value of 1 to MaxIdempotencyKey printable ASCII characters (a
// UUID, say), or ErrInvalidIdempotencyKey.
func IdempotencyKey(hdr http.Header) (string, error) {
	vs := hdr.Values(IdempotencyKeyHeader)
	if len(vs) == 0 {
		return "", nil
	}
	k := vs[0]
	ok := len(vs) == 1 && k != "" && len(k) <= MaxIdempotencyKey
	for i := 0; ok && i < len(k); i++ {
		ok = k[i] >= ' ' && k[i] < 0x7f
	}
	if !ok {
		return "", ErrInvalidIdempotencyKey
	}
	return k, nil
}
