package web_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/parley/parley/web/webtest"
)

// TestNoUncheckedClient keeps every test request on a validating client:
// Go's default client would bypass ValidatingTransport.
func TestNoUncheckedClient(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	pkg := "http" + "."
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, call := range []string{"DefaultClient", "Get(", "Post(", "PostForm(", "Head("} {
			if bytes.Contains(src, []byte(pkg+call)) {
				t.Errorf("%s uses %s%s: send requests through b.ts.Client()", f, pkg, call)
			}
		}
	}
}

// recordingTB keeps the failures ValidatingTransport reports, to test the
// checker itself.
type recordingTB struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// TestValidatingTransportChecksBodies: the JSON bodies checked against the
// schemas compiled once are checked for real, in a response of the
// operation's own and in one of #/components/responses, at the top and
// deeper, formats included; a fitting body passes.
func TestValidatingTransportChecksBodies(t *testing.T) {
	t.Parallel()
	type exchange struct {
		name, method, path string
		status             int    // the answer's status
		body               string // and body
		wantError          string // "" when the body fits
	}
	cases := []exchange{
		{"Fits", "GET", "/healthz", 200, `{"status":"ok"}`, ""},
		{"WrongType", "GET", "/healthz", 200, `{"status":5}`, "at '/status'"},
		{"NotInEnum", "GET", "/healthz", 200, `{"status":"fine"}`, "at '/status'"},
		{"NotJSON", "GET", "/healthz", 200, `{"status":`, "not JSON"},
		{"ComponentResponseFits", "GET", "/tenants/acme/webhooks", 403, `{"error":"Missing scope: settings:read","details":{"requiredScope":"settings:read"}}`, ""},
		{"ComponentResponseMissingMember", "GET", "/tenants/acme/webhooks", 403, `{"details":{"requiredScope":"settings:read"}}`, "missing property 'error'"},
		{"FormatFits", "DELETE", "/tenants/acme/webhooks/5f0c6a3e-2b1d-4c8e-9f7a-3d2e1c0b9a88", 200, `{"deleted":true,"id":"5f0c6a3e-2b1d-4c8e-9f7a-3d2e1c0b9a88"}`, ""},
		{"Format", "DELETE", "/tenants/acme/webhooks/5f0c6a3e-2b1d-4c8e-9f7a-3d2e1c0b9a88", 200, `{"deleted":true,"id":"5f0c6a3e"}`, "at '/id'"},
	}
	// The server answers each case's request with the case's status and body.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := slices.IndexFunc(cases, func(c exchange) bool { return c.name == r.URL.Query().Get("case") })
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(cases[i].status)
		_, _ = io.WriteString(w, cases[i].body)
	}))
	defer srv.Close()
	for _, tc := range cases {
		rec := &recordingTB{TB: t}
		client := &http.Client{Transport: &webtest.ValidatingTransport{TB: rec, Base: srv.Client().Transport}}
		req, _ := http.NewRequest(tc.method, srv.URL+tc.path+"?case="+tc.name, nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		got := strings.Join(rec.errors, "\n")
		switch {
		case tc.wantError == "" && got != "":
			t.Errorf("%s: a fitting body was refused: %s", tc.name, got)
		case tc.wantError != "" && !strings.Contains(got, tc.wantError):
			t.Errorf("%s: want a failure naming %q, got %q", tc.name, tc.wantError, got)
		}
	}
}
