package web

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
)

// syncPost submits the "Add from URL" form with the client's CSRF token, as
// htmx does when htmx is true, else as a plain form post.
func syncPost(c *adminClient, form url.Values, htmx bool) adminPage {
	c.t.Helper()
	f := url.Values{"_csrf": {c.csrf}}
	for k, v := range form {
		f[k] = v
	}
	var header map[string]string
	if htmx {
		header = map[string]string{"HX-Request": "true", "HX-Target": "url-sync"}
	}
	return c.do("POST", "/admin/corpus/sync", f, header)
}

// entryFor returns the tenant's entry for a source URL, failing the test when there is none.
func entryFor(t *testing.T, b *bundle, tenantID, sourceURL string) parley.CorpusEntry {
	t.Helper()
	e, err := b.db.CorpusEntryBySourceURL(context.Background(), tenantID, sourceURL)
	if err != nil {
		t.Fatalf("the entry for %s: %v", sourceURL, err)
	}
	return e
}

// noEntryFor fails the test when the tenant has an entry for a source URL.
func noEntryFor(t *testing.T, b *bundle, tenantID, sourceURL string) {
	t.Helper()
	if e, err := b.db.CorpusEntryBySourceURL(context.Background(), tenantID, sourceURL); parley.ErrorKind(err) != parley.KindNotFound {
		t.Errorf("an entry for %s: %+v %v", sourceURL, e, err)
	}
}

// waitShown waits for the element with id to show, for at most 15 seconds:
// a swap that never happens fails the step rather than the whole tab's time.
func waitShown(ctx context.Context, t *testing.T, id string) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	mustStep(t, "waiting for #"+id, chromedp.Do(wctx, chromedp.WaitVisible(chromedp.ID(id))))
}

func TestAdminCorpusSyncBrowser(t *testing.T) {
	t.Parallel()
	b := setupSync(t)
	ten := b.ownedTenant(t, "builder")
	bg := context.Background()
	def, err := b.db.DefaultSegment(bg, ten.ID)
	mustStep(t, "default segment", err)

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
		_, _ = io.WriteString(w, article("Returns and refunds", "Unused items can be returned within 30 days."))
	}))
	t.Cleanup(site.Close)
	pageURL := site.URL + "/returns"

	ctx := browserTab(t)
	openSignedIn(ctx, t, b, ten, "/admin/corpus")
	mustStep(t, "opening the knowledge base", chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID("sync-form"))))
	mustRunStep(ctx, t, "marking the page", chromedp.Evaluate[string](`window.syncMark = 'kept'`))
	pageKept := func(t *testing.T) {
		t.Helper()
		if mark := mustRunStep(ctx, t, "reading the mark", chromedp.Evaluate[string](`window.syncMark || ''`)); mark != "kept" {
			t.Error("the page was reloaded: the form should answer in place")
		}
		if n := mustRunStep(ctx, t, "counting pages", chromedp.Evaluate[int](`document.querySelectorAll('main, aside.sidebar').length`)); n != 2 {
			t.Errorf("%d main and sidebar elements: a swap nested a page", n)
		}
	}
	spinnerShown := `getComputedStyle(document.getElementById('sync-indicator')).display !== 'none'`

	t.Run("Created", func(t *testing.T) {
		if mustRunStep(ctx, t, "spinner before", chromedp.Evaluate[bool](spinnerShown)) {
			t.Error("the spinner shows before anything was submitted")
		}
		mustStep(t, "filling and submitting", chromedp.Do(ctx,
			keyIn(chromedp.ID("sync-url"), pageURL),
			chromedp.SetValue(chromedp.ID("sync-segment"), def.Slug),
			chromedp.Click(chromedp.ID("sync-submit")),
		))
		waitShown(ctx, t, "sync-indicator")
		if txt := mustRunStep(ctx, t, "spinner text", chromedp.Text(chromedp.ID("sync-indicator"))); !strings.Contains(txt, "Fetching and converting…") {
			t.Errorf("spinner text = %q", txt)
		}
		if !mustRunStep(ctx, t, "button state", chromedp.Evaluate[bool](`document.getElementById('sync-submit').disabled`)) {
			t.Error("the submit button is enabled while the page is fetched")
		}
		waitShown(ctx, t, "sync-outcome")
		// Until the swap settles (20 ms), htmx leaves on each swapped-in element
		// the attributes of the one it replaced: the spinner's htmx-request class.
		waitUntil(ctx, t, "the swap to settle", `!document.querySelector('.htmx-settling')`)
		if txt := mustRunStep(ctx, t, "outcome", chromedp.Text(chromedp.ID("sync-outcome"))); txt != "Created" {
			t.Errorf("outcome = %q", txt)
		}
		if txt := mustRunStep(ctx, t, "title", chromedp.Text(chromedp.ID("sync-entry-title"))); txt != "Returns and refunds" {
			t.Errorf("title = %q", txt)
		}
		md := mustRunStep(ctx, t, "preview", chromedp.Text(chromedp.ID("sync-preview")))
		if !strings.Contains(md, "Unused items can be returned within 30 days.") || strings.Contains(md, "Footer noise") || strings.Contains(md, "About us") {
			t.Errorf("preview = %q", md)
		}
		if mustRunStep(ctx, t, "spinner after", chromedp.Evaluate[bool](spinnerShown)) {
			t.Error("the spinner still shows after the answer")
		}
		if mustRunStep(ctx, t, "button state", chromedp.Evaluate[bool](`document.getElementById('sync-submit').disabled`)) {
			t.Error("the submit button stays disabled")
		}

		e := entryFor(t, b, ten.ID, pageURL)
		if e.Title != "Returns and refunds" || strOrEmpty(e.SegmentID) != def.ID || strOrEmpty(e.Source) != "url" {
			t.Errorf("stored %+v", e)
		}
		edit := mustRunStep(ctx, t, "edit link", chromedp.AttributeValue(chromedp.ID("sync-edit"), "href"))
		if edit.Value != "/admin/corpus/"+e.ID {
			t.Errorf("edit link = %q", edit.Value)
		}
		// The table refreshes itself with the new row.
		row := "corpus-" + e.ID
		mustRunStep(ctx, t, "waiting for the row", chromedp.Poll[bool](`!!document.getElementById('`+row+`')`, chromedp.WithPollingTimeout(10*time.Second)))
		if txt := mustRunStep(ctx, t, "row", chromedp.Text(chromedp.ID(row))); !strings.Contains(txt, "Returns and refunds") || !strings.Contains(txt, def.Slug) {
			t.Errorf("row = %q", txt)
		}
		pageKept(t)
	})

	t.Run("RemoteNotFound", func(t *testing.T) {
		gone := site.URL + "/gone"
		mustStep(t, "submitting", chromedp.Do(ctx,
			keyIn(chromedp.ID("sync-url"), gone),
			chromedp.Click(chromedp.ID("sync-submit")),
		))
		waitShown(ctx, t, "sync-error")
		if txt := mustRunStep(ctx, t, "error", chromedp.Text(chromedp.ID("sync-error"))); !strings.Contains(txt, "answered HTTP 404") {
			t.Errorf("error = %q", txt)
		}
		if v := mustRunStep(ctx, t, "url kept", chromedp.Value(chromedp.ID("sync-url"))); v != gone {
			t.Errorf("the form lost the URL: %q", v)
		}
		if hidden := mustRunStep(ctx, t, "generic error", chromedp.Evaluate[bool](`document.getElementById('htmx-error').hidden`)); !hidden {
			t.Error("the 422 was reported as a failed request instead of shown in place")
		}
		noEntryFor(t, b, ten.ID, gone)
		pageKept(t)
	})

	t.Run("InvalidURL", func(t *testing.T) {
		mustStep(t, "submitting", chromedp.Do(ctx,
			fillField("sync-url", "not a url"),
			chromedp.Click(chromedp.ID("sync-submit")),
		))
		waitShown(ctx, t, "err-url")
		if txt := mustRunStep(ctx, t, "field error", chromedp.Text(chromedp.ID("err-url"))); txt != "must be an absolute http or https URL such as https://example.com/faq" {
			t.Errorf("url error = %q", txt)
		}
		if inv := mustRunStep(ctx, t, "aria-invalid", chromedp.AttributeValue(chromedp.ID("sync-url"), "aria-invalid")); inv.Value != "true" {
			t.Errorf("aria-invalid = %q", inv.Value)
		}
		if txt := mustRunStep(ctx, t, "error", chromedp.Text(chromedp.ID("sync-error"))); txt != "Some fields need attention; nothing was saved." {
			t.Errorf("error = %q", txt)
		}
		if v := mustRunStep(ctx, t, "url kept", chromedp.Value(chromedp.ID("sync-url"))); v != "not a url" {
			t.Errorf("the form lost the URL: %q", v)
		}
		pageKept(t)
		es, total, err := listCorpus(b.db, bg, ten.ID, db.CorpusQuery{Page: 1, Limit: 10})
		mustStep(t, "listing", err)
		if total != 1 {
			t.Errorf("%d entries, want the one created: %+v", total, es)
		}
	})
}

func TestAdminCorpusSyncHTTP(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t, map[string]string{"PARLEY_SSRF_ALLOW": "127.0.0.1/32"})
	site := fetchtest.Start(t)
	mine, theirs := b.ownedTenant(t, "builder"), b.ownedTenant(t, "builder")
	bg := context.Background()
	c := b.newAdminClient(t)
	c.signIn(mine)
	c.get("/admin/corpus")
	html := func(title, text string) fetchtest.Page {
		return fetchtest.Page{ContentType: "text/html; charset=utf-8", Body: article(title, text)}
	}
	shipping := site.Set("/shipping", html("Shipping rates", "Shipping is free above fifty euros."))

	t.Run("PlainPost", func(t *testing.T) {
		c := c.as(t)
		p := syncPost(c, url.Values{"url": {shipping}, "title": {""}, "segment": {""}}, false)
		if p.status != http.StatusOK {
			t.Fatalf("status %d: %s", p.status, p.text("#sync-result"))
		}
		e := entryFor(t, b, mine.ID, shipping)
		if p.text("#sync-outcome") != "Created" || p.text("#sync-entry-title") != "Shipping rates" || e.Title != "Shipping rates" || e.SegmentID != nil {
			t.Errorf("outcome %q, title %q; stored %+v", p.text("#sync-outcome"), p.text("#sync-entry-title"), e)
		}
		if md := p.text("#sync-preview"); !strings.Contains(md, "Shipping is free above fifty euros.") || strings.Contains(md, "Footer noise") {
			t.Errorf("preview = %q", md)
		}
		// A whole page: the table lists the new entry and the form is ready for another URL.
		if p.doc.Find("main h1").Length() != 1 || p.doc.Find("#corpus-"+e.ID).Length() != 1 || p.doc.Find("#sync-url").AttrOr("value", "") != "" {
			t.Errorf("not the whole page with the new row and an empty form:\n%s", p.body)
		}

		site.Set("/shipping", html("Shipping rates", "Shipping is now free above forty euros."))
		p = syncPost(c, url.Values{"url": {shipping}}, false)
		if p.status != http.StatusOK || p.text("#sync-outcome") != "Refreshed" || !strings.Contains(p.text("#sync-preview"), "forty euros") {
			t.Errorf("refresh: %d %q %q", p.status, p.text("#sync-outcome"), p.text("#sync-preview"))
		}
		if again := entryFor(t, b, mine.ID, shipping); again.ID != e.ID {
			t.Errorf("the refresh made another entry: %s, was %s", again.ID, e.ID)
		}
	})

	t.Run("Htmx", func(t *testing.T) {
		c := c.as(t)
		def, err := b.db.DefaultSegment(bg, mine.ID)
		mustStep(t, "default segment", err)
		long := "# Guide\n\n" + strings.Repeat("Step é. ", 200)
		guide := site.Set("/guide.md", fetchtest.Page{ContentType: "text/markdown", Body: long})
		p := syncPost(c, url.Values{"url": {guide}, "title": {" Setup guide "}, "segment": {def.Slug}}, true)
		if p.status != http.StatusOK || p.header.Get("HX-Trigger") != "corpusChanged" {
			t.Fatalf("status %d, HX-Trigger %q", p.status, p.header.Get("HX-Trigger"))
		}
		if p.doc.Find("main, aside, #corpus-table").Length() != 0 || p.doc.Find("#url-sync #sync-form").Length() != 1 {
			t.Errorf("not the form fragment:\n%s", p.body)
		}
		e := entryFor(t, b, mine.ID, guide)
		if p.text("#sync-entry-title") != "Setup guide" || e.Title != "Setup guide" || strOrEmpty(e.SegmentID) != def.ID {
			t.Errorf("title %q; stored %+v", p.text("#sync-entry-title"), e)
		}
		// The preview is the first 800 characters, whole characters only.
		md := p.doc.Find("#sync-preview").Text()
		if n := len([]rune(md)); n != 800 || !strings.HasPrefix(e.Content, md) {
			t.Errorf("preview of %d characters: %q", n, md)
		}
		if hint := p.text("#sync-result .hint"); !strings.Contains(hint, fmt.Sprintf("first 800 of %d characters", len([]rune(e.Content)))) {
			t.Errorf("hint = %q", hint)
		}
	})

	t.Run("OtherTenant", func(t *testing.T) {
		e := entryFor(t, b, mine.ID, shipping)
		tc := b.newAdminClient(t)
		tc.signIn(theirs)
		if p := tc.get("/admin/corpus"); p.status != http.StatusOK || strings.Contains(p.body, e.ID) || strings.Contains(p.body, "Shipping rates") || strings.Contains(p.body, "Setup guide") {
			t.Errorf("their knowledge base lists my entries: %d", p.status)
		}
		if p := tc.get("/admin/corpus/" + e.ID); p.status != http.StatusNotFound {
			t.Errorf("GET my entry as them: %d", p.status)
		}
		// My segment's slug is not theirs to use.
		seg, err := b.db.CreateSegment(bg, mine.ID, 10, db.SegmentWrite{Name: parley.Some("Wholesale buyers"), SystemPrompt: parley.Some("Mine.")})
		mustStep(t, "creating my segment", err)
		other := site.Set("/theirs", html("Their page", "Their own text."))
		if p := syncPost(tc, url.Values{"url": {other}, "segment": {seg.Slug}}, true); p.status != http.StatusUnprocessableEntity || p.text("#err-segmentSlug") == "" {
			t.Errorf("my segment as theirs: %d %q", p.status, p.text("#err-segmentSlug"))
		}
		noEntryFor(t, b, theirs.ID, other)
		// The same URL is an entry of their own, created, leaving mine alone.
		p := syncPost(tc, url.Values{"url": {shipping}}, true)
		theirEntry := entryFor(t, b, theirs.ID, shipping)
		if p.status != http.StatusOK || p.text("#sync-outcome") != "Created" || theirEntry.ID == e.ID {
			t.Errorf("their sync of my URL: %d %q, entry %s (mine %s)", p.status, p.text("#sync-outcome"), theirEntry.ID, e.ID)
		}
		if p := c.as(t).get("/admin/corpus"); strings.Contains(p.body, theirEntry.ID) {
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
				c := c.as(t)
				before := entryFor(t, b, mine.ID, shipping)
				for _, htmx := range []bool{false, true} {
					p := syncPost(c, tc.form, htmx)
					if p.status != tc.status {
						t.Errorf("htmx %v: status %d, want %d: %s", htmx, p.status, tc.status, p.text("#sync-result"))
					}
					if tc.field != "" {
						if got := p.text("#err-" + tc.field); !strings.Contains(got, tc.msg) {
							t.Errorf("htmx %v: %s error = %q, want %q", htmx, tc.field, got, tc.msg)
						}
						if got := p.text("#sync-error"); got != "Some fields need attention; nothing was saved." {
							t.Errorf("htmx %v: result = %q", htmx, got)
						}
					} else if got := p.text("#sync-error"); !strings.Contains(got, tc.msg) {
						t.Errorf("htmx %v: result = %q, want %q", htmx, got, tc.msg)
					}
					// The form keeps what was typed.
					if got := p.doc.Find("#sync-url").AttrOr("value", ""); got != strings.TrimSpace(tc.form.Get("url")) {
						t.Errorf("htmx %v: url shown = %q", htmx, got)
					}
					if htmx && p.header.Get("HX-Trigger") != "" {
						t.Errorf("a failure told the table to refresh: %q", p.header.Get("HX-Trigger"))
					}
				}
				if after := entryFor(t, b, mine.ID, shipping); after.Title != before.Title || after.Content != before.Content || strOrEmpty(after.SegmentID) != strOrEmpty(before.SegmentID) {
					t.Errorf("a refused sync changed the entry: %+v", after)
				}
			})
		}
		noEntryFor(t, b, mine.ID, picture)
		noEntryFor(t, b, mine.ID, empty)
	})

	t.Run("CorpusLimit", func(t *testing.T) {
		full := b.ownedTenant(t, "free")
		tn := b.tenantNow(t, full.Slug)
		limit := tn.PlanInfo().CorpusLimit
		for i := range limit {
			if _, _, err := b.db.UpsertCorpus(bg, full.ID, limit, db.CorpusWrite{Title: parley.Some(fmt.Sprintf("Entry %d", i)), Content: parley.Some("Text")}); err != nil {
				t.Fatal(err)
			}
		}
		fc := b.newAdminClient(t)
		fc.signIn(full)
		fc.get("/admin/corpus")
		page := site.Set("/one-more", html("One more", "One entry too many."))
		p := syncPost(fc, url.Values{"url": {page}}, true)
		want := fmt.Sprintf("Corpus limit of the plan reached (%d of %d entries)", limit, limit)
		if p.status != http.StatusTooManyRequests || !strings.Contains(p.text("#sync-error"), want) {
			t.Errorf("status %d, result %q", p.status, p.text("#sync-error"))
		}
		if n := site.Fetches("/one-more"); n != 0 {
			t.Errorf("the page was fetched %d times past the limit", n)
		}
	})

	t.Run("CSRF", func(t *testing.T) {
		page := site.Set("/csrf", html("Forged", "A forged request."))
		if p := c.as(t).post("/admin/corpus/sync", url.Values{"url": {page}}); p.status != http.StatusForbidden {
			t.Errorf("without the CSRF token: %d", p.status)
		}
		if n := site.Fetches("/csrf"); n != 0 {
			t.Errorf("a forged request fetched the page %d times", n)
		}
	})
}

// TestAdminCorpusSyncRefused runs on a server without PARLEY_SSRF_ALLOW: private addresses are refused.
func TestAdminCorpusSyncRefused(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t, nil)
	site := fetchtest.Start(t)
	local := site.Set("/local", fetchtest.Page{ContentType: "text/plain", Body: "Local text."})
	ten := b.ownedTenant(t, "builder")
	c := b.newAdminClient(t)
	c.signIn(ten)
	c.get("/admin/corpus")
	for _, tc := range []struct{ name, url, msg string }{
		{"Private", "http://10.0.0.1/", "refused: 10.0.0.1 is a private or reserved address"},
		{"Loopback", local, "refused: 127.0.0.1 is a private or reserved address"},
		{"Localhost", strings.Replace(local, "127.0.0.1", "localhost", 1), "refused: localhost is not a public internet address"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, htmx := range []bool{false, true} {
				p := syncPost(c.as(t), url.Values{"url": {tc.url}}, htmx)
				if p.status != http.StatusUnprocessableEntity || p.text("#err-url") != tc.msg || p.text("#sync-error") != "Some fields need attention; nothing was saved." {
					t.Errorf("htmx %v: %d, url error %q, result %q", htmx, p.status, p.text("#err-url"), p.text("#sync-error"))
				}
			}
			noEntryFor(t, b, ten.ID, tc.url)
		})
	}
	if n := site.Fetches("/local"); n != 0 {
		t.Errorf("the refused site was reached %d times", n)
	}
}
