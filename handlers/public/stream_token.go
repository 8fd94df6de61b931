package public

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
)

// streamKeyLabel names what the key derived from the server's secret key
// is for, so that no other use of that key ever computes the same MAC.
const streamKeyLabel = "parley/chat-stream-token/v1"

// StreamKey derives the key of the chat's stream tokens from the server's
// secret key (PARLEY_SECRET_KEY): every instance with the same secret
// accepts the tokens of the others, and a token cannot be made without it.
func StreamKey(secret []byte) []byte {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(streamKeyLabel))
	return mac.Sum(nil)
}

// streamToken is the token that opens the stream of the tenant's session
// (GET /chat/{slug}/stream): base64url of HMAC-SHA256 over the tenant id
// and the session id. It is stateless: nothing is stored, and the same
// session always gets the same token. A tenant id is a UUID, which has no
// ':', so the two parts cannot be shifted into another pair.
func streamToken(key []byte, tenantID, sessionID string) string {
	return base64.RawURLEncoding.EncodeToString(streamMAC(key, tenantID, sessionID))
}

func streamMAC(key []byte, tenantID, sessionID string) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(tenantID + ":" + sessionID))
	return mac.Sum(nil)
}

// validStreamToken reports, in constant time, whether token is the
// session's.
func validStreamToken(key []byte, tenantID, sessionID, token string) bool {
	got, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(key) == 0 {
		return false
	}
	return hmac.Equal(got, streamMAC(key, tenantID, sessionID))
}
