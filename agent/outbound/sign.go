package outbound

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"time"
)

// NewSignedPost is a POST of the JSON body to url as the service sends its
// calls to tenants' endpoints (webhook deliveries, escalations, the reply
// endpoint, the context webhook): headers X-Service-Event and
// X-Service-Signature (Sign, keyed with secret, at t).
func NewSignedPost(ctx context.Context, url, event string, secret []byte, t time.Time, body []byte) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Service-Event", event)
	req.Header.Set("X-Service-Signature", Sign(secret, t, body))
	return req, nil
}

// Sign returns the X-Service-Signature value for body sent at t:
// t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>.
func Sign(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(ts + "." + string(body)))
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}

// NewSignedPostBody is NewSignedPost with a second scheme in
// X-Service-Signature that covers the raw body alone (SignBody), for the
// calls signed with a tenant's visitor signing key (the reply endpoint, the
// context webhook and its challenge): a receiver may verify either reading.
func NewSignedPostBody(ctx context.Context, url, event string, secret []byte, t time.Time, body []byte) (*http.Request, error) {
	req, err := NewSignedPost(ctx, url, event, secret, t, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Service-Signature", SignBody(secret, t, body))
	return req, nil
}

// SignBody returns Sign's value with a v0 scheme appended:
// t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>,v0=<hex HMAC-SHA256(secret, body)>.
// Stripe-style verifiers read t and v1 and ignore v0; a receiver that
// verifies the raw body alone compares v0 (and has no replay protection
// from t, which v0 does not cover).
func SignBody(secret []byte, t time.Time, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return Sign(secret, t, body) + ",v0=" + hex.EncodeToString(mac.Sum(nil))
}
