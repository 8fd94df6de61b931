package web_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/parley/parley/static"
	"github.com/parley/parley/web"
	"github.com/parley/parley/web/webtest"
)

// TestDocsPage: /docs answers the reference's page, under a policy that
// lets its scripts call this origin only, linking the renderer at its
// digests; the documentation addresses integrators guess redirect to it.
func TestDocsPage(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	client := b.TS.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

	resp, err := client.Get(b.TS.URL + "/docs")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /docs: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'self'", "script-src 'self';", "connect-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-eval") || resp.Header.Get("X-Frame-Options") != "DENY" {
		t.Errorf("Content-Security-Policy %q, X-Frame-Options %q", csp, resp.Header.Get("X-Frame-Options"))
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	var scripts []string
	doc.Find("script").Each(func(_ int, s *goquery.Selection) { scripts = append(scripts, s.AttrOr("src", "inline")) })
	if want := []string{static.Path("swagger-ui-bundle.js"), static.Path("docs.js")}; strings.Join(scripts, " ") != strings.Join(want, " ") {
		t.Errorf("scripts %v, want %v", scripts, want)
	}
	if doc.Find(`link[rel=stylesheet][href="`+static.Path("swagger-ui.css")+`"]`).Length() != 1 ||
		doc.Find(`a[href="/openapi.json"]`).Length() != 1 || doc.Find("html[lang=en] title").Text() != "Parley API reference" {
		t.Errorf("the page lacks its stylesheet, its title or its link to the document:\n%s", body)
	}

	for _, alias := range web.DocsAliases {
		resp, err := client.Get(b.TS.URL + alias)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != "/docs" {
			t.Errorf("GET %s: %d to %q, want 301 to /docs", alias, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
}
