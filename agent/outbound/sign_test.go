package outbound

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestSign(t *testing.T) {
	t.Parallel()
	// Known vector: HMAC-SHA256("secret", "1700000000.{}").
	mac := hmac.New(sha256.New, []byte("secret"))
	mac.Write([]byte("1700000000.{}"))
	want := "t=1700000000,v1=" + hex.EncodeToString(mac.Sum(nil))
	if got := Sign([]byte("secret"), time.Unix(1700000000, 0), []byte("{}")); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestNewSignedPost(t *testing.T) {
	t.Parallel()
	at := time.Unix(1700000000, 0)
	body := []byte(`{"event":"x"}`)

	t.Run("Headers", func(t *testing.T) {
		t.Parallel()
		req, err := NewSignedPost(context.Background(), "https://hooks.example/in", "submission.created", []byte("secret"), at, body)
		if err != nil {
			t.Fatal(err)
		}
		if req.Method != http.MethodPost || req.URL.String() != "https://hooks.example/in" {
			t.Errorf("request %s %s", req.Method, req.URL)
		}
		if got := req.Header.Get("Content-Type"); got != "application/json" {
			t.Errorf("Content-Type = %q", got)
		}
		if got := req.Header.Get("X-Service-Event"); got != "submission.created" {
			t.Errorf("X-Service-Event = %q", got)
		}
		if got, want := req.Header.Get("X-Service-Signature"), Sign([]byte("secret"), at, body); got != want {
			t.Errorf("X-Service-Signature = %q, want %q", got, want)
		}
		got, err := io.ReadAll(req.Body)
		if err != nil || string(got) != string(body) || req.ContentLength != int64(len(body)) {
			t.Errorf("body %q (length %d), %v", got, req.ContentLength, err)
		}
	})
	t.Run("InvalidURL", func(t *testing.T) {
		t.Parallel()
		if _, err := NewSignedPost(context.Background(), "http://[::1", "e", nil, at, body); err == nil {
			t.Fatal("no error for an invalid URL")
		}
	})
}

// SignBody's header verifies both ways a receiver may read it: a
// Stripe-style verifier (t and v1 over "<t>.<body>", other schemes ignored)
// and one that verifies the raw body alone (v0).
func TestSignBody(t *testing.T) {
	t.Parallel()
	key, body, at := []byte("vsk_key"), []byte(`{"email":null}`), time.Unix(1700000000, 0)
	header := SignBody(key, at, body)
	schemes := map[string]string{}
	for _, p := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(p, "=")
		schemes[k] = v
	}
	stripeStyle := func() bool {
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(schemes["t"] + "." + string(body)))
		return schemes["t"] == "1700000000" && hmac.Equal([]byte(schemes["v1"]), []byte(hex.EncodeToString(mac.Sum(nil))))
	}
	rawBody := func() bool {
		mac := hmac.New(sha256.New, key)
		mac.Write(body)
		return hmac.Equal([]byte(schemes["v0"]), []byte(hex.EncodeToString(mac.Sum(nil))))
	}
	if !stripeStyle() || !rawBody() {
		t.Fatalf("%q: t.body verifies %v, raw body verifies %v", header, stripeStyle(), rawBody())
	}
	if !strings.HasPrefix(header, Sign(key, at, body)+",") {
		t.Errorf("%q does not start with Sign's t and v1", header)
	}
	req, err := NewSignedPostBody(context.Background(), "https://example.com/hook", "visitor.context", key, at, body)
	if err != nil || req.Header.Get("X-Service-Signature") != header || req.Header.Get("X-Service-Event") != "visitor.context" {
		t.Errorf("NewSignedPostBody: %v %v", err, req.Header)
	}
}
