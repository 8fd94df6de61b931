package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/parley/parley/web/webtest"
)

// TestSecurityHeaders: every answer, public, API, error or page, tells
// browsers not to guess its type; Strict-Transport-Security is sent only
// when Parley is served over https.
func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, b *webtest.Bundle, wantHSTS string) {
		client := b.TS.Client()
		for _, req := range []struct{ method, path, body string }{
			{"GET", "/healthz", ""}, {"GET", "/openapi.json", ""},
			{"GET", "/tenants/nobody", ""}, {"POST", "/chat/nobody", `{"message":"hi","sessionId":"s"}`},
			{"GET", "/admin/login", ""}, {"GET", "/no/such/page", ""},
		} {
			var resp *http.Response
			var err error
			if req.method == "GET" {
				resp, err = client.Get(b.TS.URL + req.path)
			} else {
				resp, err = client.Post(b.TS.URL+req.path, "application/json", strings.NewReader(req.body))
			}
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("%s %s (%d): X-Content-Type-Options %q", req.method, req.path, resp.StatusCode, got)
			}
			if got := resp.Header.Get("Strict-Transport-Security"); got != wantHSTS {
				t.Errorf("%s %s: Strict-Transport-Security %q, want %q", req.method, req.path, got, wantHSTS)
			}
		}
	}
	t.Run("HTTP", func(t *testing.T) { check(t, webtest.Setup(t), "") })
	t.Run("HTTPS", func(t *testing.T) {
		check(t, webtest.SetupAdmin(t, map[string]string{"PARLEY_BASE_URL": "https://parley.example"}), "max-age=31536000")
	})
}
