package api_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/parley/parley/agent/outbound/fetch/fetchtest"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/web/webtest"
)

func TestCorpusSync(t *testing.T) {
	t.Parallel()
	b := webtest.SetupSync(t)
	site := fetchtest.Start(t)

	t.Run("CreateThenRefresh", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "scale")
		path := "/tenants/" + ten.Slug + "/corpus/sync"
		url := site.Set("/faq", fetchtest.Page{ContentType: "text/html; charset=utf-8", Body: webtest.Article("Opening hours", "We open at nine.")})
		st, body := b.Do(t, "POST", path, ten.Token, map[string]any{"url": url})
		if st != http.StatusCreated || body["created"] != true {
			t.Fatalf("create: %d %v", st, body)
		}
		e := body["corpus"].(map[string]any)
		if e["title"] != "Opening hours" || e["source"] != "url" || e["sourceUrl"] != url || e["priority"] != float64(5) || e["isActive"] != true {
			t.Errorf("entry: %v", e)
		}
		content := e["content"].(string)
		if !strings.Contains(content, "We open at nine.") || strings.Contains(content, "Footer noise") || strings.Contains(content, "About us") {
			t.Errorf("content: %q", content)
		}
		sync, _ := e["sync"].(map[string]any)
		if sync == nil || sync["syncedAt"] == nil || sync["lastError"] != nil {
			t.Errorf("sync: %v", e["sync"])
		}
		id := e["id"]

		site.Set("/faq", fetchtest.Page{ContentType: "text/html; charset=utf-8", Body: webtest.Article("Opening hours", "We now open at eight.")})
		st, body = b.Do(t, "POST", path, ten.Token, map[string]any{"url": url})
		e = body["corpus"].(map[string]any)
		if st != http.StatusOK || body["created"] != false || e["id"] != id || !strings.Contains(e["content"].(string), "We now open at eight.") {
			t.Fatalf("refresh: %d %v", st, body)
		}
		st, body = b.Do(t, "POST", path, ten.Token, map[string]any{"url": url, "title": "Hours", "priority": 9, "segmentSlug": "default"})
		e = body["corpus"].(map[string]any)
		if st != http.StatusOK || e["id"] != id || e["title"] != "Hours" || e["priority"] != float64(9) || e["segment"].(map[string]any)["slug"] != "default" {
			t.Fatalf("refresh with fields: %d %v", st, body)
		}
		st, body = b.Do(t, "POST", path, ten.Token, map[string]any{"url": url})
		if st != http.StatusOK || body["corpus"].(map[string]any)["title"] != "Hours" {
			t.Errorf("a refresh without title keeps the entry's: %d %v", st, body)
		}
		var n int
		if err := b.DB.Pool().QueryRow(context.Background(), `SELECT count(*) FROM corpus_entries WHERE source_url = $1 AND tenant_id = $2`, url, ten.ID).Scan(&n); err != nil || n != 1 {
			t.Errorf("entries for the URL: %d %v", n, err)
		}
	})

	t.Run("MarkdownWithTitleAndSegment", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "scale")
		url := site.Set("/guide.md", fetchtest.Page{ContentType: "text/markdown", Body: "# Guide\n\nStep one."})
		st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/corpus/sync", ten.Token,
			map[string]any{"url": url, "title": " Setup guide ", "segment": "default", "summary": "How to set up", "tags": []string{"setup"}, "locale": "en"})
		e := body["corpus"].(map[string]any)
		if st != http.StatusCreated || e["title"] != "Setup guide" || e["content"] != "# Guide\n\nStep one." || e["summary"] != "How to set up" ||
			e["segment"].(map[string]any)["slug"] != "default" || len(e["tags"].([]any)) != 1 {
			t.Errorf("%d %v", st, body)
		}
	})

	t.Run("Validation", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "scale")
		path := "/tenants/" + ten.Slug + "/corpus/sync"
		good := site.Set("/valid", fetchtest.Page{ContentType: "text/plain", Body: "ok"})
		cases := []struct {
			name  string
			body  any
			field string
		}{
			{"Missing", map[string]any{"title": "t"}, "url"},
			{"Null", map[string]any{"url": nil}, "url"},
			{"Empty", map[string]any{"url": " "}, "url"},
			{"Number", map[string]any{"url": 5}, "url"},
			{"NotURI", map[string]any{"url": "not a url"}, "url"},
			{"Relative", map[string]any{"url": "/faq"}, "url"},
			{"FTP", map[string]any{"url": "ftp://example.com/file"}, "url"},
			{"TooLong", map[string]any{"url": "https://e.com/" + strings.Repeat("p", 487)}, "url"},
			{"Credentials", map[string]any{"url": "https://user:pw@example.com/"}, "url"},
			{"TitleTooLong", map[string]any{"url": good, "title": strings.Repeat("t", 256)}, "title"},
			{"TitleEmpty", map[string]any{"url": good, "title": ""}, "title"},
			{"UnknownSegment", map[string]any{"url": good, "segmentSlug": "nope"}, "segmentSlug"},
			{"PriorityRange", map[string]any{"url": good, "priority": 101}, "priority"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				st, body := b.Do(t, "POST", path, ten.Token, tc.body)
				details, _ := body["details"].(map[string]any)
				if st != http.StatusBadRequest || details[tc.field] == nil {
					t.Errorf("want 400 on %s, got %d %v", tc.field, st, body)
				}
			})
		}
		if site.Fetches("/valid") != 0 {
			t.Errorf("an invalid request fetched the page")
		}
		if st, body := b.Do(t, "POST", path, ten.Token, "[1]"); st != http.StatusBadRequest {
			t.Errorf("not an object: %d %v", st, body)
		}
	})

	t.Run("Refused", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "scale")
		path := "/tenants/" + ten.Slug + "/corpus/sync"
		redirect := site.Set("/to-metadata", fetchtest.Page{Status: http.StatusFound, Body: "http://169.254.169.254/latest/meta-data/"})
		cases := []struct{ name, url, msg string }{
			{"Private", "http://10.0.0.1/", "refused: 10.0.0.1 is a private or reserved address"},
			{"Metadata", "http://169.254.169.254/latest/meta-data/", "refused: 169.254.169.254 is a private or reserved address"},
			{"IPv6Loopback", "http://[::1]/", "refused: ::1 is a private or reserved address"},
			{"RedirectToMetadata", redirect, "refused: 169.254.169.254 is a private or reserved address"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				st, body := b.Do(t, "POST", path, ten.Token, map[string]any{"url": tc.url})
				if st != http.StatusBadRequest || body["error"] != tc.msg {
					t.Errorf("%d %v", st, body)
				}
			})
		}
	})

	t.Run("RefusedWithoutAllowList", func(t *testing.T) {
		t.Parallel()
		plain := webtest.Setup(t) // no PARLEY_SSRF_ALLOW: the loopback test site is off limits
		ten := plain.NewTenant(t, "scale")
		url := site.Set("/loopback", fetchtest.Page{ContentType: "text/plain", Body: "internal"})
		_, port, _ := net.SplitHostPort(strings.TrimPrefix(site.URL(), "http://"))
		for _, u := range []string{url, "http://localhost:" + port + "/loopback"} {
			st, body := plain.Do(t, "POST", "/tenants/"+ten.Slug+"/corpus/sync", ten.Token, map[string]any{"url": u})
			if st != http.StatusBadRequest || !strings.HasPrefix(fmt.Sprint(body["error"]), "refused: ") || body["code"] != "URL_REFUSED" {
				t.Errorf("%s: %d %v", u, st, body)
			}
		}
		_, body := plain.Do(t, "POST", "/tenants/"+ten.Slug+"/corpus/sync", ten.Token, map[string]any{"url": "http://localhost:" + port + "/loopback"})
		if body["error"] != "refused: localhost is not a public internet address" {
			t.Errorf("hostname message: %v", body)
		}
		if site.Fetches("/loopback") != 0 {
			t.Errorf("the refused site was reached")
		}
	})

	t.Run("RemoteFailures", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "scale")
		path := "/tenants/" + ten.Slug + "/corpus/sync"
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed := "http://" + l.Addr().String() + "/"
		l.Close()
		cases := []struct {
			name   string
			url    string
			status int
			msg    string
			code   string
		}{
			{"Unsupported", site.Set("/logo.png", fetchtest.Page{ContentType: "image/png", Body: "\x89PNG\r\n\x1a\n"}), 422,
				"unsupported content type image/png: supported are HTML, Markdown, plain text and PDF", "UNSUPPORTED_CONTENT_TYPE"},
			{"Empty", site.Set("/blank", fetchtest.Page{ContentType: "text/plain", Body: " \n\n "}), 422, "the page has no text content once converted", ""},
			{"TooLong", site.Set("/huge", fetchtest.Page{ContentType: "text/plain", Body: strings.Repeat("x", 50001)}), 422,
				"the page converts to 50,001 characters, over the 50,000 character limit of a corpus entry; split it or sync a smaller page", ""},
			{"NotFound", site.URL() + "/missing", 422, "127.0.0.1 answered HTTP 404 Not Found", "URL_HTTP_ERROR"},
			{"ServerError", site.Set("/broken", fetchtest.Page{Status: 500, ContentType: "text/plain", Body: "boom"}), 422, "127.0.0.1 answered HTTP 500 Internal Server Error", "URL_HTTP_ERROR"},
			{"ConnectionRefused", closed, 422, "cannot reach 127.0.0.1: connection refused", "URL_UNREACHABLE"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				st, body := b.Do(t, "POST", path, ten.Token, map[string]any{"url": tc.url})
				code, _ := body["code"].(string)
				if st != tc.status || body["error"] != tc.msg || code != tc.code {
					t.Errorf("want %d %q code %q, got %d %v", tc.status, tc.msg, tc.code, st, body)
				}
			})
		}
		_, list := b.Do(t, "GET", "/tenants/"+ten.Slug+"/corpus", ten.Token, nil)
		if n := len(list["corpus"].([]any)); n != 0 {
			t.Errorf("failed syncs created %d entries", n)
		}
	})

	t.Run("FailedRefreshKeepsContent", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "scale")
		path := "/tenants/" + ten.Slug + "/corpus/sync"
		url := site.Set("/flaky", fetchtest.Page{ContentType: "text/plain", Body: "good content"})
		st, body := b.Do(t, "POST", path, ten.Token, map[string]any{"url": url})
		if st != http.StatusCreated {
			t.Fatalf("%d %v", st, body)
		}
		id := body["corpus"].(map[string]any)["id"].(string)
		site.Set("/flaky", fetchtest.Page{Status: 503, ContentType: "text/plain", Body: "down"})
		if st, body := b.Do(t, "POST", path, ten.Token, map[string]any{"url": url}); st != http.StatusUnprocessableEntity {
			t.Fatalf("%d %v", st, body)
		}
		_, body = b.Do(t, "GET", "/tenants/"+ten.Slug+"/corpus/"+id, ten.Token, nil)
		e := body["corpus"].(map[string]any)
		sync := e["sync"].(map[string]any)
		if e["content"] != "good content" || sync["lastError"] != "127.0.0.1 answered HTTP 503 Service Unavailable" || sync["lastErrorAt"] == nil || sync["syncedAt"] == nil {
			t.Errorf("%v", e)
		}
		site.Set("/flaky", fetchtest.Page{ContentType: "text/plain", Body: "back again"})
		_, body = b.Do(t, "POST", path, ten.Token, map[string]any{"url": url})
		e = body["corpus"].(map[string]any)
		if e["content"] != "back again" || e["sync"].(map[string]any)["lastError"] != nil {
			t.Errorf("recovered: %v", e)
		}
	})

	t.Run("CorpusLimit", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "free") // 50 entries
		path := "/tenants/" + ten.Slug + "/corpus/sync"
		synced := site.Set("/limit-synced", fetchtest.Page{ContentType: "text/plain", Body: "v1"})
		if st, body := b.Do(t, "POST", path, ten.Token, map[string]any{"url": synced}); st != http.StatusCreated {
			t.Fatalf("%d %v", st, body)
		}
		entries := []map[string]any{}
		for i := 0; i < 49; i++ {
			entries = append(entries, map[string]any{"externalId": fmt.Sprint(i), "title": "T", "content": "C"})
		}
		if st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/corpus/bulk", ten.Token, map[string]any{"entries": entries}); st != 200 || body["created"] != float64(49) {
			t.Fatalf("fill: %d %v", st, body)
		}
		st, body := b.Do(t, "POST", path, ten.Token, map[string]any{"url": site.Set("/limit-new", fetchtest.Page{ContentType: "text/plain", Body: "new"})})
		if st != http.StatusTooManyRequests || !strings.Contains(fmt.Sprint(body["error"]), "limit") || site.Fetches("/limit-new") != 0 {
			t.Errorf("over limit: %d %v (fetched %d times)", st, body, site.Fetches("/limit-new"))
		}
		site.Set("/limit-synced", fetchtest.Page{ContentType: "text/plain", Body: "v2"})
		st, body = b.Do(t, "POST", path, ten.Token, map[string]any{"url": synced})
		if st != http.StatusOK || body["corpus"].(map[string]any)["content"] != "v2" {
			t.Errorf("refresh at the limit: %d %v", st, body)
		}
	})

	t.Run("TenantIsolation", func(t *testing.T) {
		t.Parallel()
		ten, other := b.NewTenant(t, "scale"), b.NewTenant(t, "scale")
		url := site.Set("/shared", fetchtest.Page{ContentType: "text/plain", Body: "shared page"})
		st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/corpus/sync", ten.Token, map[string]any{"url": url})
		if st != http.StatusCreated {
			t.Fatalf("%d %v", st, body)
		}
		id := body["corpus"].(map[string]any)["id"]
		st, body = b.Do(t, "POST", "/tenants/"+other.Slug+"/corpus/sync", other.Token, map[string]any{"url": url})
		if st != http.StatusCreated || body["corpus"].(map[string]any)["id"] == id {
			t.Errorf("other tenant's sync of the same URL must create its own entry: %d %v", st, body)
		}
		if st, _ := b.Do(t, "POST", "/tenants/"+ten.Slug+"/corpus/sync", other.Token, map[string]any{"url": url}); st != http.StatusNotFound {
			t.Errorf("other tenant's token on this tenant: %d", st)
		}
	})

	t.Run("Scopes", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "scale")
		path := "/tenants/" + ten.Slug + "/corpus/sync"
		url := site.Set("/scoped", fetchtest.Page{ContentType: "text/plain", Body: "scoped"})
		if st, _ := b.Do(t, "POST", path, b.Token(t, ten.ID, auth.ScopeCorpusRead), map[string]any{"url": url}); st != http.StatusForbidden {
			t.Errorf("corpus:read: %d", st)
		}
		if st, _ := b.Do(t, "POST", path, "", map[string]any{"url": url}); st != http.StatusUnauthorized {
			t.Errorf("no token: %d", st)
		}
		if st, body := b.Do(t, "POST", path, b.Token(t, ten.ID, auth.ScopeCorpusWrite), map[string]any{"url": url}); st != http.StatusCreated {
			t.Errorf("corpus:write: %d %v", st, body)
		}
	})
}

// TestCorpusSyncRefusedBeforeFetch: corpus sync requests refused before any
// fetch (the test server has no SSRF allow list, so every local address is
// refused); each request is also checked to be valid, or refused, by
// openapi.json.
func TestCorpusSyncRefusedBeforeFetch(t *testing.T) {
	t.Parallel()
	c := &webtest.OpenAPIChecker{T: t, B: webtest.Setup(t)}
	b := c.B
	ten := b.NewTenant(t, "scale")
	path := "/tenants/" + ten.Slug + "/corpus/sync"
	ok := "https://help.example.com/faq"
	tags := strings.Fields("a b c d e f g h i j k l m n o p q r s t u")
	for what, req := range map[string]any{
		"noURL":      map[string]any{"title": "t"},
		"nullURL":    map[string]any{"url": nil},
		"emptyURL":   map[string]any{"url": " "},
		"urlType":    map[string]any{"url": 5},
		"ftp":        map[string]any{"url": "ftp://example.com/x"},
		"relative":   map[string]any{"url": "example.com/faq"},
		"userinfo":   map[string]any{"url": "https://user:pw@example.com/faq"},
		"longURL":    map[string]any{"url": "https://example.com/" + strings.Repeat("p", 490)},
		"blankTitle": map[string]any{"url": ok, "title": " "},
		"longTitle":  map[string]any{"url": ok, "title": strings.Repeat("t", 256)},
		"priority":   map[string]any{"url": ok, "priority": 101},
		"locale":     map[string]any{"url": ok, "locale": "english"},
		"isActive":   map[string]any{"url": ok, "isActive": nil},
		"tags":       map[string]any{"url": ok, "tags": tags},
		"summary":    map[string]any{"url": ok, "summary": strings.Repeat("s", 501)},
		"string":     ok,
	} {
		if status, body := c.Exchange("POST", path, ten.Token, req, false); status != http.StatusBadRequest {
			t.Errorf("POST sync %s: %d %v", what, status, body)
		}
	}
	if status, body := c.Exchange("POST", path, ten.Token, map[string]any{"url": ok, "segmentSlug": "nope"}, true); status != http.StatusBadRequest || webtest.ErrorDetails(body)["segmentSlug"] == nil {
		t.Errorf("POST sync to an unknown segment: %d %v", status, body)
	}
	if status, body := c.Exchange("POST", path, ten.Token, map[string]any{"url": "https://user@example.com/"}, false); webtest.ErrorDetails(body)["url"] != "must not contain a user name or password" {
		t.Errorf("POST sync with a user name: %d %v", status, body)
	}
	for _, u := range []string{"http://127.0.0.1:1/faq", "http://localhost:1/faq", "https://[::1]/faq"} {
		status, body := c.Exchange("POST", path, ten.Token, map[string]any{"url": u}, true)
		if msg := fmt.Sprint(webtest.ErrorDetails(body)["url"]); status != http.StatusBadRequest || !strings.HasPrefix(msg, "refused: ") || body.(map[string]any)["error"] != msg {
			t.Errorf("POST sync of %s: %d %v", u, status, body)
		}
	}
	if status, body := c.Exchange("POST", path, b.Token(t, ten.ID, auth.ScopeCorpusRead), map[string]any{"url": ok}, true); status != http.StatusForbidden {
		t.Errorf("POST sync with corpus:read: %d %v", status, body)
	}
	if status, body := c.Exchange("POST", path, ten.Token, map[string]any{"url": ok, "summary": strings.Repeat("s", 1<<20)}, false); status != http.StatusRequestEntityTooLarge {
		t.Errorf("POST sync large body: %d %v", status, body)
	}
}

// TestCorpusSyncFetch syncs pages from a local site (allowed by
// PARLEY_SSRF_ALLOW): create, refresh, a failed refresh kept on the entry,
// pages that cannot become entries, and the corpus limit; each request is
// also checked to be valid, or refused, by openapi.json.
func TestCorpusSyncFetch(t *testing.T) {
	t.Parallel()
	c := &webtest.OpenAPIChecker{T: t, B: webtest.SetupSync(t)}
	b := c.B
	site := fetchtest.Start(t)
	ten := b.NewTenant(t, "scale")
	path := "/tenants/" + ten.Slug + "/corpus/sync"
	entry := func(body any) map[string]any {
		m, _ := body.(map[string]any)
		e, _ := m["corpus"].(map[string]any)
		return e
	}
	if status, body := c.Exchange("POST", "/tenants/"+ten.Slug+"/segments", ten.Token, map[string]any{"name": "Pros", "systemPrompt": "p"}, true); status != http.StatusCreated {
		t.Fatalf("POST segment: %d %v", status, body)
	}

	// Create, then refresh the entry of the same URL.
	page := site.Set("/shipping", fetchtest.Page{ContentType: "text/html; charset=utf-8", Body: webtest.Article("Shipping", "Orders ship within two working days.")})
	status, body := c.Exchange("POST", path, ten.Token, map[string]any{"url": page, "segmentSlug": "pros", "tags": []string{"shipping"}, "priority": 6}, true)
	e := entry(body)
	if status != http.StatusCreated || body.(map[string]any)["created"] != true || e["source"] != "url" || e["sourceUrl"] != page || e["title"] != "Shipping" || e["priority"] != float64(6) {
		t.Fatalf("POST sync: %d %v", status, body)
	}
	if s, _ := e["sync"].(map[string]any); s["syncedAt"] == nil || s["lastError"] != nil {
		t.Errorf("POST sync: sync %v", e["sync"])
	}
	id := e["id"].(string)
	status, body = c.Exchange("POST", path, ten.Token, map[string]any{"url": page, "title": "Delivery"}, true)
	if e := entry(body); status != http.StatusOK || body.(map[string]any)["created"] != false || e["id"] != id || e["title"] != "Delivery" || e["segment"] == nil {
		t.Errorf("POST sync again: %d %v", status, body)
	}

	// A failed refresh keeps the content and records the error on the entry.
	site.Set("/shipping", fetchtest.Page{Status: http.StatusInternalServerError, ContentType: "text/plain", Body: "down"})
	if status, body = c.Exchange("POST", path, ten.Token, map[string]any{"url": page}, true); status != http.StatusUnprocessableEntity {
		t.Errorf("POST sync of a failing page: %d %v", status, body)
	}
	status, body = c.Exchange("GET", "/tenants/"+ten.Slug+"/corpus/"+id, ten.Token, nil, true)
	if s, _ := entry(body)["sync"].(map[string]any); status != http.StatusOK || s["lastError"] == nil || s["lastErrorAt"] == nil || s["syncedAt"] == nil {
		t.Errorf("GET entry after a failed refresh: %d %v", status, body)
	}
	if status, body = c.Exchange("GET", "/tenants/"+ten.Slug+"/corpus", ten.Token, nil, true); status != http.StatusOK {
		t.Errorf("GET corpus with a synced entry: %d %v", status, body)
	}

	// Pages that cannot become entries, and remote failures.
	for _, tc := range []struct {
		what   string
		page   fetchtest.Page
		status int
	}{
		{"image", fetchtest.Page{ContentType: "image/png", Body: "\x89PNG\r\n\x1a\n" + strings.Repeat("\x00", 64)}, http.StatusUnprocessableEntity},
		{"empty", fetchtest.Page{ContentType: "text/plain", Body: "   \n  "}, http.StatusUnprocessableEntity},
		{"long", fetchtest.Page{ContentType: "text/plain", Body: strings.Repeat("word ", 12000)}, http.StatusUnprocessableEntity},
		{"big", fetchtest.Page{ContentType: "text/plain", Body: strings.Repeat("x", 10<<20+1)}, http.StatusRequestEntityTooLarge},
		{"missing", fetchtest.Page{Status: http.StatusNotFound, ContentType: "text/html", Body: "gone"}, http.StatusUnprocessableEntity},
		{"loop", fetchtest.Page{Status: http.StatusFound, Body: "/loop"}, http.StatusUnprocessableEntity},
	} {
		u := site.Set("/"+tc.what, tc.page)
		status, body := c.Exchange("POST", path, ten.Token, map[string]any{"url": u}, true)
		if m, _ := body.(map[string]any); status != tc.status || m["error"] == "" {
			t.Errorf("POST sync of %s: %d %v", tc.what, status, body)
		}
	}

	// The corpus limit applies when a sync creates an entry, not when it refreshes one.
	free := b.NewTenant(t, "free") // 50 entries
	freePath := "/tenants/" + free.Slug + "/corpus/sync"
	faq := site.Set("/faq", fetchtest.Page{ContentType: "text/markdown", Body: "# FAQ\n\nAsk us anything."})
	if status, body = c.Exchange("POST", freePath, free.Token, map[string]any{"url": faq}, true); status != http.StatusCreated {
		t.Fatalf("POST sync on the free plan: %d %v", status, body)
	}
	var fill []any
	for i := 0; i < 49; i++ {
		fill = append(fill, map[string]any{"externalId": fmt.Sprint(i), "title": "t", "content": "c"})
	}
	if status, got := b.Do(t, "POST", "/tenants/"+free.Slug+"/corpus/bulk", free.Token, map[string]any{"entries": fill}); status != http.StatusOK || got["created"] != float64(49) {
		t.Fatalf("fill the free corpus: %d %v", status, got)
	}
	other := site.Set("/other", fetchtest.Page{ContentType: "text/plain", Body: "Other page."})
	status, body = c.Exchange("POST", freePath, free.Token, map[string]any{"url": other}, true)
	if status != http.StatusTooManyRequests || webtest.ErrorDetails(body)["limit"] != float64(50) {
		t.Errorf("POST sync over the corpus limit: %d %v", status, body)
	}
	if site.Fetches("/other") != 0 {
		t.Errorf("a sync over the limit fetched the page")
	}
	if status, body = c.Exchange("POST", freePath, free.Token, map[string]any{"url": faq}, true); status != http.StatusOK {
		t.Errorf("POST sync refresh at the corpus limit: %d %v", status, body)
	}
}
