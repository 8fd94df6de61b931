package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/web"
	"github.com/parley/parley/web/webtest"
)

// fuzzRoutes are the routes FuzzEdge sends its inputs to: {slug} is the
// tenant's, {seg} the fuzzed path segment. Each reads the query, the path
// or the body into the database.
var fuzzRoutes = []struct{ method, path string }{
	{"GET", "/tenants/{slug}/corpus"},
	{"GET", "/tenants/{slug}/segments/{seg}"},
	{"GET", "/tenants/{slug}/conversations"},
	{"GET", "/tenants/{slug}/submissions"},
	{"GET", "/tenants/{slug}/visitors/{seg}/memory"},
	{"POST", "/tenants/{slug}/segments"},
	{"POST", "/tenants/{slug}/corpus"},
	{"PUT", "/tenants/{slug}"},
	{"POST", "/chat/{slug}"},
	{"POST", "/form/{slug}"},
	{"GET", "/chat/{slug}/widget"},
	{"GET", "/context/{seg}"},
}

// FuzzEdge sends fuzzed paths, queries, headers and bodies through the whole
// server (middleware, handlers, the test database) and fails on any 500:
// whatever a client sends is its own mistake, answered in the error shape.
// Its seeds, one file an input, are under testdata/fuzz/FuzzEdge/; explore with
// `go test -fuzz FuzzEdge -fuzztime 60s ./web/`.
func FuzzEdge(f *testing.F) {
	store := dbtest.New(f)
	srv, err := web.NewServer(webtest.Config(f), store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		f.Fatal(err)
	}
	key, _ := auth.ParseKey(webtest.SecretKey)
	box, _ := auth.NewBox(key)
	ten, err := auth.Provision(context.Background(), store, box, srv.Base.Passwords,
		parley.NewTenantInput{Slug: fmt.Sprintf("fuzz-%d", time.Now().UnixNano()), Name: "Fuzz", Plan: "scale"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, route uint8, seg, query, header, contentType string, body []byte) {
		r := fuzzRoutes[int(route)%len(fuzzRoutes)]
		path := strings.NewReplacer("{slug}", ten.Slug, "{seg}", seg).Replace(r.path)
		req := &http.Request{
			Method: r.method, URL: &url.URL{Path: path, RawQuery: query},
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{}, Host: "parley.test", RemoteAddr: "192.0.2.1:1234",
			Body: http.NoBody,
		}
		if len(body) > 0 {
			req.Body = io.NopCloser(bytes.NewReader(body))
			req.ContentLength = int64(len(body))
		}
		req.Header.Set("Authorization", "Bearer "+ten.Token)
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("X-Agent-Model", header)
		req.Header.Set("X-Visitor-Id", header)
		rec := httptest.NewRecorder()
		srv.Echo.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %q ?%q: %d %.300s", r.method, path, query, rec.Code, rec.Body)
		}
		if rec.Code >= 400 {
			var e struct {
				Error string `json:"error"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == "" {
				t.Fatalf("%s %q: %d not in the error shape: %.300s", r.method, path, rec.Code, rec.Body)
			}
		}
	})
}
