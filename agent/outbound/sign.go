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
