package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// parley probe exits 0 on /readyz's 200, and with the answer otherwise.
func TestProbe(t *testing.T) {
	var notReady atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" || notReady.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"status":"unavailable"}`))
			return
		}
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	}))
	defer srv.Close()
	t.Setenv("PARLEY_ADDR", srv.Listener.Addr().String())
	if out, _, err := runCLI(t, "probe"); err != nil || out != "ready\n" {
		t.Errorf("probe of a ready server: %q %v", out, err)
	}
	notReady.Store(true)
	_, _, err := runCLI(t, "probe", "--url", srv.URL+"/readyz")
	wantErr(t, err, "not ready", "503", "unavailable")
	srv.Close()
	_, _, err = runCLI(t, "probe")
	if err == nil || !strings.HasPrefix(err.Error(), "not ready") {
		t.Errorf("probe of a closed port: %v", err)
	}
}
