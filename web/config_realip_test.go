package web_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/parley/parley/web/webtest"
)

// TestServerRealIPBehindProxies: the server takes a request's address from
// X-Forwarded-For only when the peer is a trusted proxy
// (TestConfigTrustedProxies tests the extractor itself).
func TestServerRealIPBehindProxies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ proxies, want string }{{"127.0.0.1/32", "203.0.113.9"}, {"", "127.0.0.1"}} {
		e := webtest.SetupEnv(t, map[string]string{"PARLEY_TRUSTED_PROXIES": tc.proxies}).Srv.Echo
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.RemoteAddr = "127.0.0.1:5555"
		req.Header.Set("X-Forwarded-For", "203.0.113.9")
		if got := e.NewContext(req, httptest.NewRecorder()).RealIP(); got != tc.want {
			t.Errorf("proxies %q: RealIP = %q, want %q", tc.proxies, got, tc.want)
		}
	}
}
