package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/parley/parley/web/webtest"
)

func TestPublicCORS(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.NewTenant(t, "scale")

	preflight := func(path string) *http.Response {
		req, _ := http.NewRequest(http.MethodOptions, b.TS.URL+path, nil)
		req.Header.Set("Origin", "https://shop.example.com")
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "content-type,x-widget-key,x-visitor-token,x-service-admin-token")
		resp, err := b.TS.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for _, path := range []string{"/chat/" + ten.Slug, "/chat/" + ten.Slug + "/feedback", "/form/" + ten.Slug, "/context/" + ten.Slug} {
		resp := preflight(path)
		allowed := strings.ToLower(resp.Header.Get("Access-Control-Allow-Headers"))
		if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "*" ||
			!strings.Contains(allowed, "x-widget-key") || !strings.Contains(allowed, "x-visitor-token") ||
			!strings.Contains(allowed, "x-service-admin-token") ||
			!strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "POST") {
			t.Errorf("preflight %s: %d %v", path, resp.StatusCode, resp.Header)
		}
	}
	// The management API and the dashboard answer no cross-origin calls.
	for _, path := range []string{"/tenants/" + ten.Slug, "/admin/login"} {
		if resp := preflight(path); resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("preflight %s allowed: %v", path, resp.Header)
		}
	}
	// A real cross-origin answer carries the header and exposes X-AI-Generated.
	req, _ := http.NewRequest(http.MethodGet, b.TS.URL+"/context/"+ten.Slug, nil)
	req.Header.Set("Origin", "https://shop.example.com")
	resp, err := b.TS.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "*" ||
		!strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "X-Ai-Generated") &&
			!strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "X-AI-Generated") {
		t.Errorf("GET context cross-origin: %d %v", resp.StatusCode, resp.Header)
	}
}
