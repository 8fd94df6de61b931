package admin_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/fetch/fetchtest"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/knowledge"
	"github.com/parley/parley/web/webtest"
)

// syncPost submits the "Add from URL" form with the client's CSRF token, as
// htmx does when htmx is true, else as a plain form post.
func syncPost(c *webtest.AdminClient, form url.Values, htmx bool) webtest.AdminPage {
	c.T.Helper()
	f := url.Values{"_csrf": {c.CSRF}}
	for k, v := range form {
		f[k] = v
	}
	var header map[string]string
	if htmx {
		header = map[string]string{"HX-Request": "true", "HX-Target": "url-sync"}
	}
	return c.Do("POST", "/admin/corpus/sync", f, header)
}

// entryFor returns the tenant's entry for a source URL, failing the test when there is none.
func entryFor(t *testing.T, b *webtest.Bundle, tenantID, sourceURL string) parley.CorpusEntry {
	t.Helper()
	e, err := b.DB.CorpusEntryBySourceURL(context.Background(), tenantID, sourceURL)
	if err != nil {
		t.Fatalf("the entry for %s: %v", sourceURL, err)
	}
	return e
}

// noEntryFor fails the test when the tenant has an entry for a source URL.
func noEntryFor(t *testing.T, b *webtest.Bundle, tenantID, sourceURL string) {
	t.Helper()
	if e, err := b.DB.CorpusEntryBySourceURL(context.Background(), tenantID, sourceURL); parley.ErrorKind(err) != parley.KindNotFound {
		t.Errorf("an entry for %s: %+v %v", sourceURL, e, err)
	}
}

// waitShown waits for the element with id to show, for at most 15 seconds:
// a swap that never happens fails the step rather than the whole tab's time.
func waitShown(ctx context.Context, t *testing.T, id string) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	webtest.MustStep(t, "waiting for #"+id, chromedp.Do(wctx, chromedp.WaitVisible(chromedp.ID(id))))
}

func TestAdminCorpusSyncBrowser(t *testing.T) {
	t.Parallel()
	b := webtest.SetupSync(t)
	ten := b.OwnedTenant(t, "builder")
	bg := context.Background()
	def, err := b.DB.DefaultSegment(bg, ten.ID)
	webtest.MustStep(t, "default segment", err)

	// A slow page, so that the request is seen in flight.
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/returns" {
			http.NotFound(w, r)
			return
		}
		select {
		case <-time.After(time.Second):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, webtest.Article("Returns and refunds", "Unused items can be returned within 30 days."))
	}))
	t.Cleanup(site.Close)
	pageURL := site.URL + "/returns"

	ctx := webtest.BrowserTab(t)
	webtest.OpenSignedIn(ctx, t, b, ten, "/admin/corpus")
	webtest.MustStep(t, "opening the knowledge base", chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID("sync-form"))))
	webtest.MustRunStep(ctx, t, "marking the page", chromedp.Evaluate[string](`window.syncMark = 'kept'`))
	pageKept := func(t *testing.T) {
		t.Helper()
		if mark := webtest.MustRunStep(ctx, t, "reading the mark", chromedp.Evaluate[string](`window.syncMark || ''`)); mark != "kept" {
			t.Error("the page was reloaded: the form should answer in place")
		}
		if n := webtest.MustRunStep(ctx, t, "counting pages", chromedp.Evaluate[int](`document.querySelectorAll('main, aside.sidebar').length`)); n != 2 {
			t.Errorf("%d main and sidebar elements: a swap nested a page", n)
		}
	}
	spinnerShown := `getComputedStyle(document.getElementById('sync-indicator')).display !== 'none'`

	t.Run("Created", func(t *testing.T) {
		if webtest.MustRunStep(ctx, t, "spinner before", chromedp.Evaluate[bool](spinnerShown)) {
			t.Error("the spinner shows before anything was submitted")
		}
		webtest.MustStep(t, "filling and submitting", chromedp.Do(ctx,
			webtest.KeyIn(chromedp.ID("sync-url"), pageURL),
			chromedp.SetValue(chromedp.ID("sync-segment"), def.Slug),
			chromedp.Click(chromedp.ID("sync-submit")),
		))
		waitShown(ctx, t, "sync-indicator")
		if txt := webtest.MustRunStep(ctx, t, "spinner text", chromedp.Text(chromedp.ID("sync-indicator"))); !strings.Contains(txt, "Fetching and converting…") {
			t.Errorf("spinner text = %q", txt)
		}
		if !webtest.MustRunStep(ctx, t, "button state", chromedp.Evaluate[bool](`document.getElementById('sync-submit').disabled`)) {
			t.Error("the submit button is enabled while the page is fetched")
		}
		waitShown(ctx, t, "sync-outcome")
		// Until the swap settles (20 ms), htmx leaves on each swapped-in element
		// the attributes of the one it replaced: the spinner's htmx-request class.
		webtest.WaitUntil(ctx, t, "the swap to settle", `!document.querySelector('.htmx-settling')`)
		if txt := webtest.MustRunStep(ctx, t, "outcome", chromedp.Text(chromedp.ID("sync-outcome"))); txt != "Created" {
			t.Errorf("outcome = %q", txt)
		}
		if txt := webtest.MustRunStep(ctx, t, "title", chromedp.Text(chromedp.ID("sync-entry-title"))); txt != "Returns and refunds" {
			t.Errorf("title = %q", txt)
		}
		md := webtest.MustRunStep(ctx, t, "preview", chromedp.Text(chromedp.ID("sync-preview")))
		if !strings.Contains(md, "Unused items can be returned within 30 days.") || strings.Contains(md, "Footer noise") || strings.Contains(md, "About us") {
			t.Errorf("preview = %q", md)
		}
		if webtest.MustRunStep(ctx, t, "spinner after", chromedp.Evaluate[bool](spinnerShown)) {
			t.Error("the spinner still shows after the answer")
		}
		if webtest.MustRunStep(ctx, t, "button state", chromedp.Evaluate[bool](`document.getElementById('sync-submit').disabled`)) {
			t.Error("the submit button stays disabled")
		}

		e := entryFor(t, b, ten.ID, pageURL)
		if e.Title != "Returns and refunds" || webtest.StrOrEmpty(e.SegmentID) != def.ID || webtest.StrOrEmpty(e.Source) != "url" {
			t.Errorf("stored %+v", e)
		}
		edit := webtest.MustRunStep(ctx, t, "edit link", chromedp.AttributeValue(chromedp.ID("sync-edit"), "href"))
		if edit.Value != "/admin/corpus/"+e.ID {
			t.Errorf("edit link = %q", edit.Value)
		}
		// The table refreshes itself with the new row.
		row := "corpus-" + e.ID
		webtest.MustRunStep(ctx, t, "waiting for the row", chromedp.Poll[bool](`!!document.getElementById('`+row+`')`, chromedp.WithPollingTimeout(10*time.Second)))
		if txt := webtest.MustRunStep(ctx, t, "row", chromedp.Text(chromedp.ID(row))); !strings.Contains(txt, "Returns and refunds") || !strings.Contains(txt, def.Slug) {
			t.Errorf("row = %q", txt)
		}
		pageKept(t)
	})

	t.Run("RemoteNotFound", func(t *testing.T) {
		gone := site.URL + "/gone"
		webtest.MustStep(t, "submitting", chromedp.Do(ctx,
			webtest.KeyIn(chromedp.ID("sync-url"), gone),
			chromedp.Click(chromedp.ID("sync-submit")),
		))
		waitShown(ctx, t, "sync-error")
		if txt := webtest.MustRunStep(ctx, t, "error", chromedp.Text(chromedp.ID("sync-error"))); !strings.Contains(txt, "answered HTTP 404") {
			t.Errorf("error = %q", txt)
		}
		if v := webtest.MustRunStep(ctx, t, "url kept", chromedp.Value(chromedp.ID("sync-url"))); v != gone {
			t.Errorf("the form lost the URL: %q", v)
		}
		if hidden := webtest.MustRunStep(ctx, t, "generic error", chromedp.Evaluate[bool](`document.getElementById('htmx-error').hidden`)); !hidden {
			t.Error("the 422 was reported as a failed request instead of shown in place")
		}
		noEntryFor(t, b, ten.ID, gone)
		pageKept(t)
	})

	t.Run("InvalidURL", func(t *testing.T) {
		webtest.MustStep(t, "submitting", chromedp.Do(ctx,
			webtest.FillField("sync-url", "not a url"),
			chromedp.Click(chromedp.ID("sync-submit")),
		))
		waitShown(ctx, t, "err-url")
		if txt := webtest.MustRunStep(ctx, t, "field error", chromedp.Text(chromedp.ID("err-url"))); txt != "must be an absolute http or https URL such as https://example.com/faq" {
			t.Errorf("url error = %q", txt)
		}
		if inv := webtest.MustRunStep(ctx, t, "aria-invalid", chromedp.AttributeValue(chromedp.ID("sync-url"), "aria-invalid")); inv.Value != "true" {
			t.Errorf("aria-invalid = %q", inv.Value)
		}
		if txt := webtest.MustRunStep(ctx, t, "error", chromedp.Text(chromedp.ID("sync-error"))); txt != "Some fields need attention; nothing was saved." {
			t.Errorf("error = %q", txt)
		}
		if v := webtest.MustRunStep(ctx, t, "url kept", chromedp.Value(chromedp.ID("sync-url"))); v != "not a url" {
			t.Errorf("the form lost the URL: %q", v)
		}
		pageKept(t)
		es, total, err := webtest.ListCorpus(b.DB, bg, ten.ID, knowledge.CorpusQuery{Page: 1, Limit: 10})
		webtest.MustStep(t, "listing", err)
		if total != 1 {
			t.Errorf("%d entries, want the one created: %+v", total, es)
		}
	})
}

func TestAdminCorpusSyncHTTP(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, map[string]string{"PARLEY_SSRF_ALLOW": "127.0.0.1/32"})
	site := fetchtest.Start(t)
	mine, theirs := b.OwnedTenant(t, "builder"), b.OwnedTenant(t, "builder")
	bg := context.Background()
	c := b.NewAdminClient(t)
	c.SignIn(mine)
	c.Get("/admin/corpus")
	html := func(title, text string) fetchtest.Page {
		return fetchtest.Page{ContentType: "text/html; charset=utf-8", Body: webtest.Article(title, text)}
	}
	shipping := site.Set("/shipping", html("Shipping rates", "Shipping is free above fifty euros."))

	t.Run("PlainPost", func(t *testing.T) {
		c := c.As(t)
		p := syncPost(c, url.Values{"url": {shipping}, "title": {""}, "segment": {""}}, false)
		if p.Status != http.StatusOK {
			t.Fatalf("status %d: %s", p.Status, p.Text("#sync-result"))
		}
		e := entryFor(t, b, mine.ID, shipping)
		if p.Text("#sync-outcome") != "Created" || p.Text("#sync-entry-title") != "Shipping rates" || e.Title != "Shipping rates" || e.SegmentID != nil {
			t.Errorf("outcome %q, title %q; stored %+v", p.Text("#sync-outcome"), p.Text("#sync-entry-title"), e)
		}
		if md := p.Text("#sync-preview"); !strings.Contains(md, "Shipping is free above fifty euros.") || strings.Contains(md, "Footer noise") {
			t.Errorf("preview = %q", md)
		}
		// A whole page: the table lists the new entry and the form is ready for another URL.
		if p.Doc.Find("main h1").Length() != 1 || p.Doc.Find("#corpus-"+e.ID).Length() != 1 || p.Doc.Find("#sync-url").AttrOr("value", "") != "" {
			t.Errorf("not the whole page with the new row and an empty form:\n%s", p.Body)
		}

		site.Set("/shipping", html("Shipping rates", "Shipping is now free above forty euros."))
		p = syncPost(c, url.Values{"url": {shipping}}, false)
		if p.Status != http.StatusOK || p.Text("#sync-outcome") != "Refreshed" || !strings.Contains(p.Text("#sync-preview"), "forty euros") {
			t.Errorf("refresh: %d %q %q", p.Status, p.Text("#sync-outcome"), p.Text("#sync-preview"))
		}
		if again := entryFor(t, b, mine.ID, shipping); again.ID != e.ID {
			t.Errorf("the refresh made another entry: %s, was %s", again.ID, e.ID)
		}
	})

	t.Run("Htmx", func(t *testing.T) {
		c := c.As(t)
		def, err := b.DB.DefaultSegment(bg, mine.ID)
		webtest.MustStep(t, "default segment", err)
		long := "# Guide\n\n" + strings.Repeat("Step é. ", 200)
		guide := site.Set("/guide.md", fetchtest.Page{ContentType: "text/markdown", Body: long})
		p := syncPost(c, url.Values{"url": {guide}, "title": {" Setup guide "}, "segment": {def.Slug}}, true)
		if p.Status != http.StatusOK || p.Header.Get("HX-Trigger") != "corpusChanged" {
			t.Fatalf("status %d, HX-Trigger %q", p.Status, p.Header.Get("HX-Trigger"))
		}
		if p.Doc.Find("main, aside, #corpus-table").Length() != 0 || p.Doc.Find("#url-sync #sync-form").Length() != 1 {
			t.Errorf("not the form fragment:\n%s", p.Body)
		}
		e := entryFor(t, b, mine.ID, guide)
		if p.Text("#sync-entry-title") != "Setup guide" || e.Title != "Setup guide" || webtest.StrOrEmpty(e.SegmentID) != def.ID {
			t.Errorf("title %q; stored %+v", p.Text("#sync-entry-title"), e)
		}
		// The preview is the first 800 characters, whole characters only.
		md := p.Doc.Find("#sync-preview").Text()
		if n := len([]rune(md)); n != 800 || !strings.HasPrefix(e.Content, md) {
			t.Errorf("preview of %d characters: %q", n, md)
		}
		if hint := p.Text("#sync-result .hint"); !strings.Contains(hint, fmt.Sprintf("first 800 of %d characters", len([]rune(e.Content)))) {
			t.Errorf("hint = %q", hint)
		}
	})

	t.Run("OtherTenant", func(t *testing.T) {
		e := entryFor(t, b, mine.ID, shipping)
		tc := b.NewAdminClient(t)
		tc.SignIn(theirs)
		if p := tc.Get("/admin/corpus"); p.Status != http.StatusOK || strings.Contains(p.Body, e.ID) || strings.Contains(p.Body, "Shipping rates") || strings.Contains(p.Body, "Setup guide") {
			t.Errorf("their knowledge base lists my entries: %d", p.Status)
		}
		if p := tc.Get("/admin/corpus/" + e.ID); p.Status != http.StatusNotFound {
			t.Errorf("GET my entry as them: %d", p.Status)
		}
		// My segment's slug is not theirs to use.
		seg, err := b.DB.CreateSegment(bg, mine.ID, 10, db.SegmentWrite{Name: parley.Some("Wholesale buyers"), SystemPrompt: parley.Some("Mine.")})
		webtest.MustStep(t, "creating my segment", err)
		other := site.Set("/theirs", html("Their page", "Their own text."))
		if p := syncPost(tc, url.Values{"url": {other}, "segment": {seg.Slug}}, true); p.Status != http.StatusUnprocessableEntity || p.Text("#err-segmentSlug") == "" {
			t.Errorf("my segment as theirs: %d %q", p.Status, p.Text("#err-segmentSlug"))
		}
		noEntryFor(t, b, theirs.ID, other)
		// The same URL is an entry of their own, created, leaving mine alone.
		p := syncPost(tc, url.Values{"url": {shipping}}, true)
		theirEntry := entryFor(t, b, theirs.ID, shipping)
		if p.Status != http.StatusOK || p.Text("#sync-outcome") != "Created" || theirEntry.ID == e.ID {
			t.Errorf("their sync of my URL: %d %q, entry %s (mine %s)", p.Status, p.Text("#sync-outcome"), theirEntry.ID, e.ID)
		}
		if p := c.As(t).Get("/admin/corpus"); strings.Contains(p.Body, theirEntry.ID) {
			t.Error("my knowledge base lists their entry")
		}
	})

	t.Run("Failures", func(t *testing.T) {
		picture := site.Set("/logo.png", fetchtest.Page{ContentType: "image/png", Body: "\x89PNG\r\n"})
		empty := site.Set("/empty", fetchtest.Page{ContentType: "text/plain", Body: "   "})
		for _, tc := range []struct {
			name   string
			form   url.Values
			status int
			field  string // the field with an inline error, if any
			msg    string // in the field error, else in the result
		}{
			{"RemoteNotFound", url.Values{"url": {site.URL() + "/missing"}}, http.StatusUnprocessableEntity, "", "answered HTTP 404 Not Found"},
			{"UnsupportedType", url.Values{"url": {picture}}, http.StatusUnprocessableEntity, "", "Unsupported content type image/png"},
			{"NoText", url.Values{"url": {empty}}, http.StatusUnprocessableEntity, "", "The page has no text content once converted"},
			{"Missing", url.Values{"url": {" "}}, http.StatusUnprocessableEntity, "url", "is required"},
			{"NotAURL", url.Values{"url": {"not a url"}}, http.StatusUnprocessableEntity, "url", "must be an absolute http or https URL"},
			{"Credentials", url.Values{"url": {"https://user:pw@example.com/"}}, http.StatusUnprocessableEntity, "url", "must not contain a user name or password"},
			{"TitleTooLong", url.Values{"url": {shipping}, "title": {strings.Repeat("t", 256)}}, http.StatusUnprocessableEntity, "title", "must be at most 255 characters"},
			{"UnknownSegment", url.Values{"url": {shipping}, "segment": {"nope"}}, http.StatusUnprocessableEntity, "segmentSlug", `"nope" is not the slug of one of your segments`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				c := c.As(t)
				before := entryFor(t, b, mine.ID, shipping)
				for _, htmx := range []bool{false, true} {
					p := syncPost(c, tc.form, htmx)
					if p.Status != tc.status {
						t.Errorf("htmx %v: status %d, want %d: %s", htmx, p.Status, tc.status, p.Text("#sync-result"))
					}
					if tc.field != "" {
						if got := p.Text("#err-" + tc.field); !strings.Contains(got, tc.msg) {
							t.Errorf("htmx %v: %s error = %q, want %q", htmx, tc.field, got, tc.msg)
						}
						if got := p.Text("#sync-error"); got != "Some fields need attention; nothing was saved." {
							t.Errorf("htmx %v: result = %q", htmx, got)
						}
					} else if got := p.Text("#sync-error"); !strings.Contains(got, tc.msg) {
						t.Errorf("htmx %v: result = %q, want %q", htmx, got, tc.msg)
					}
					// The form keeps what was typed.
					if got := p.Doc.Find("#sync-url").AttrOr("value", ""); got != strings.TrimSpace(tc.form.Get("url")) {
						t.Errorf("htmx %v: url shown = %q", htmx, got)
					}
					if htmx && p.Header.Get("HX-Trigger") != "" {
						t.Errorf("a failure told the table to refresh: %q", p.Header.Get("HX-Trigger"))
					}
				}
				if after := entryFor(t, b, mine.ID, shipping); after.Title != before.Title || after.Content != before.Content || webtest.StrOrEmpty(after.SegmentID) != webtest.StrOrEmpty(before.SegmentID) {
					t.Errorf("a refused sync changed the entry: %+v", after)
				}
			})
		}
		noEntryFor(t, b, mine.ID, picture)
		noEntryFor(t, b, mine.ID, empty)
	})

	t.Run("CorpusLimit", func(t *testing.T) {
		full := b.OwnedTenant(t, "free")
		tn := b.TenantNow(t, full.Slug)
		limit := tn.PlanInfo().CorpusLimit
		for i := range limit {
			if _, _, err := b.DB.UpsertCorpus(bg, full.ID, limit, knowledge.CorpusWrite{Title: parley.Some(fmt.Sprintf("Entry %d", i)), Content: parley.Some("Text")}); err != nil {
				t.Fatal(err)
			}
		}
		fc := b.NewAdminClient(t)
		fc.SignIn(full)
		fc.Get("/admin/corpus")
		page := site.Set("/one-more", html("One more", "One entry too many."))
		p := syncPost(fc, url.Values{"url": {page}}, true)
		want := fmt.Sprintf("Corpus limit of the plan reached (%d of %d entries)", limit, limit)
		if p.Status != http.StatusTooManyRequests || !strings.Contains(p.Text("#sync-error"), want) {
			t.Errorf("status %d, result %q", p.Status, p.Text("#sync-error"))
		}
		if n := site.Fetches("/one-more"); n != 0 {
			t.Errorf("the page was fetched %d times past the limit", n)
		}
	})

	t.Run("CSRF", func(t *testing.T) {
		page := site.Set("/csrf", html("Forged", "A forged request."))
		if p := c.As(t).Post("/admin/corpus/sync", url.Values{"url": {page}}); p.Status != http.StatusForbidden {
			t.Errorf("without the CSRF token: %d", p.Status)
		}
		if n := site.Fetches("/csrf"); n != 0 {
			t.Errorf("a forged request fetched the page %d times", n)
		}
	})
}

// TestAdminCorpusSyncRefused runs on a server without PARLEY_SSRF_ALLOW: private addresses are refused.
func TestAdminCorpusSyncRefused(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	site := fetchtest.Start(t)
	local := site.Set("/local", fetchtest.Page{ContentType: "text/plain", Body: "Local text."})
	ten := b.OwnedTenant(t, "builder")
	c := b.NewAdminClient(t)
	c.SignIn(ten)
	c.Get("/admin/corpus")
	for _, tc := range []struct{ name, url, msg string }{
		{"Private", "http://10.0.0.1/", "refused: 10.0.0.1 is a private or reserved address"},
		{"Loopback", local, "refused: 127.0.0.1 is a private or reserved address"},
		{"Localhost", strings.Replace(local, "127.0.0.1", "localhost", 1), "refused: localhost is not a public internet address"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, htmx := range []bool{false, true} {
				p := syncPost(c.As(t), url.Values{"url": {tc.url}}, htmx)
				if p.Status != http.StatusUnprocessableEntity || p.Text("#err-url") != tc.msg || p.Text("#sync-error") != "Some fields need attention; nothing was saved." {
					t.Errorf("htmx %v: %d, url error %q, result %q", htmx, p.Status, p.Text("#err-url"), p.Text("#sync-error"))
				}
			}
			noEntryFor(t, b, ten.ID, tc.url)
		})
	}
	if n := site.Fetches("/local"); n != 0 {
		t.Errorf("the refused site was reached %d times", n)
	}
}
