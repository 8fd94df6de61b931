package web_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/parley/parley/static"
	"github.com/parley/parley/web/webtest"
)

// TestStaticFiles: the dashboard links its files at addresses that carry
// their content's digest, served to be kept a year; any other address of a
// file is served to be revalidated by its ETag.
func TestStaticFiles(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	ten := b.OwnedTenant(t, "starter")
	c := b.NewAdminClient(t)
	c.SignIn(ten)

	page := c.Get("/admin")
	if page.Status != http.StatusOK {
		t.Fatalf("GET /admin: %d", page.Status)
	}
	var links []string
	page.Doc.Find(`link[rel="stylesheet"]`).Each(func(_ int, s *goquery.Selection) { links = append(links, s.AttrOr("href", "")) })
	page.Doc.Find(`script[src]`).Each(func(_ int, s *goquery.Selection) { links = append(links, s.AttrOr("src", "")) })
	if len(links) < 5 {
		t.Fatalf("the overview links %d static files: %v", len(links), links)
	}
	files := static.Files()
	client := b.TS.Client()
	get := func(addr string, header map[string]string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, b.TS.URL+addr, nil)
		req.Header.Set("Accept-Encoding", "identity") // unless header says otherwise
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, body
	}
	for _, addr := range links {
		name, digest, ok := strings.Cut(strings.TrimPrefix(addr, "/static/"), "?v=")
		f, found := files[name]
		if !ok || !found || digest != f.Digest || len(digest) != 16 {
			t.Errorf("%q: not a static file at its digest", addr)
			continue
		}
		resp, body := get(addr, nil)
		if resp.StatusCode != http.StatusOK || !bytes.Equal(body, f.Body) ||
			resp.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" ||
			resp.Header.Get("ETag") != `"`+digest+`"` || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: %d, %d bytes, Cache-Control %q, ETag %q", addr, resp.StatusCode, len(body), resp.Header.Get("Cache-Control"), resp.Header.Get("ETag"))
		}
		want := "text/javascript; charset=utf-8"
		if strings.HasSuffix(name, ".css") {
			want = "text/css; charset=utf-8"
		}
		if got := resp.Header.Get("Content-Type"); got != want {
			t.Errorf("GET %s: Content-Type %q, want %q", addr, got, want)
		}
	}

	// Another digest (a page of an older release), or none: revalidated.
	css := files["admin.css"]
	for _, addr := range []string{"/static/admin.css", "/static/admin.css?v=0123456789abcdef"} {
		resp, body := get(addr, nil)
		if resp.StatusCode != http.StatusOK || !bytes.Equal(body, css.Body) || resp.Header.Get("Cache-Control") != "no-cache" {
			t.Errorf("GET %s: %d, Cache-Control %q", addr, resp.StatusCode, resp.Header.Get("Cache-Control"))
		}
		again, body := get(addr, map[string]string{"If-None-Match": resp.Header.Get("ETag")})
		if again.StatusCode != http.StatusNotModified || len(body) != 0 {
			t.Errorf("GET %s with its ETag: %d, %d bytes, want 304 and no body", addr, again.StatusCode, len(body))
		}
		stale, _ := get(addr, map[string]string{"If-None-Match": `"0123456789abcdef"`})
		if stale.StatusCode != http.StatusOK {
			t.Errorf("GET %s with another ETag: %d, want 200", addr, stale.StatusCode)
		}
	}
	// Gzipped for a browser that takes it, under a tag of its own; as it
	// is for one that does not. (The client sends its own Accept-Encoding,
	// so it leaves the body as it came.)
	js := files["htmx.min.js"]
	jsAddr := static.Path("htmx.min.js")
	for _, tc := range []struct {
		accept string
		gzip   bool
	}{{"gzip, deflate, br", true}, {"br;q=1.0, gzip;q=0.5", true}, {"*", true}, {"identity", false},
		{"gzip;q=0", false}, {"deflate", false}, {"*, gzip;q=0", false}, {"*;q=0, gzip", true}} {
		resp, body := get(jsAddr, map[string]string{"Accept-Encoding": tc.accept})
		if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Vary"), "Accept-Encoding") {
			t.Errorf("Accept-Encoding %q: %d, Vary %q", tc.accept, resp.StatusCode, resp.Header.Get("Vary"))
			continue
		}
		if !tc.gzip {
			if resp.Header.Get("Content-Encoding") != "" || !bytes.Equal(body, js.Body) || resp.Header.Get("ETag") != `"`+js.Digest+`"` {
				t.Errorf("Accept-Encoding %q: Content-Encoding %q, %d bytes, ETag %q; want it as it is", tc.accept,
					resp.Header.Get("Content-Encoding"), len(body), resp.Header.Get("ETag"))
			}
			continue
		}
		etag := `"` + js.Digest + `-gzip"`
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil || resp.Header.Get("Content-Encoding") != "gzip" || resp.Header.Get("ETag") != etag || len(body) > len(js.Body)/2 {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q, ETag %q, %d bytes of %d: %v", tc.accept,
				resp.Header.Get("Content-Encoding"), resp.Header.Get("ETag"), len(body), len(js.Body), err)
			continue
		}
		if plain, err := io.ReadAll(zr); err != nil || !bytes.Equal(plain, js.Body) {
			t.Errorf("Accept-Encoding %q: the gzipped body is not the file: %v", tc.accept, err)
		}
		if again, body := get(jsAddr, map[string]string{"Accept-Encoding": tc.accept, "If-None-Match": etag}); again.StatusCode != http.StatusNotModified || len(body) != 0 {
			t.Errorf("Accept-Encoding %q with the gzipped copy's tag: %d, %d bytes, want 304", tc.accept, again.StatusCode, len(body))
		}
	}
	// The tag of one copy does not stand for the other.
	if resp, _ := get(jsAddr, map[string]string{"Accept-Encoding": "identity", "If-None-Match": `"` + js.Digest + `-gzip"`}); resp.StatusCode != http.StatusOK {
		t.Errorf("the gzipped copy's tag, asking for the file as it is: %d, want 200", resp.StatusCode)
	}

	// The widget's demo page is served, to be revalidated.
	if resp, body := get("/static/demo.html", nil); resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte("<html")) ||
		resp.Header.Get("Content-Type") != "text/html; charset=utf-8" || resp.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("GET /static/demo.html: %d, %q, %q", resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"))
	}
	// No such file, or a path out of the directory: 404.
	for _, addr := range []string{"/static/none.css", "/static/../go.mod", "/static/", "/static/%2e%2e/static.go"} {
		if resp, _ := get(addr, nil); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", addr, resp.StatusCode)
		}
	}
}
