package admin_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parley/parley"
	"github.com/parley/parley/web/webtest"
)

// seedSynonyms gives the tenant n groups in one statement.
func seedSynonyms(t *testing.T, b *webtest.Bundle, tenantID string, n int) {
	t.Helper()
	b.Exec(t, `INSERT INTO corpus_synonyms (tenant_id, terms)
		SELECT $1, ARRAY['word ' || g, 'other ' || g] FROM generate_series(1, $2::int) g`, tenantID, n)
}

// TestAdminSynonyms drives the synonyms page over HTTP: the link from the
// knowledge base, adding a group (and the errors beside the field when it
// is refused), editing one in place and as a plain form, deleting one, the
// limit, and 404 for another tenant's group.
func TestAdminSynonyms(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten, other := b.OwnedTenant(t, "starter"), b.OwnedTenant(t, "starter")
	c := b.NewAdminClient(t)
	c.SignIn(ten)
	const page = "/admin/corpus/synonyms"
	send := func(c *webtest.AdminClient, path string, terms string, hx bool) webtest.AdminPage {
		t.Helper()
		header := map[string]string{}
		if hx {
			header["HX-Request"] = "true"
		}
		form := url.Values{"_csrf": {c.CSRF}}
		if terms != "\x00" {
			form.Set("terms", terms)
		}
		return c.Do("POST", path, form, header)
	}
	groups := func() []parley.SynonymGroup {
		t.Helper()
		g, err := b.DB.ListSynonyms(context.Background(), ten.ID)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}

	t.Run("Linked", func(t *testing.T) {
		p := c.As(t).Get("/admin/corpus")
		if href, _ := p.Doc.Find("#synonyms-link").Attr("href"); href != page {
			t.Errorf("knowledge base links synonyms at %q", href)
		}
		p = c.As(t).Get(page)
		if p.Status != http.StatusOK || p.Text("main h1") != "Synonyms" || !strings.Contains(p.Text("#synonyms-about"),
			"Words your visitors use for the same thing: a question with one of them finds entries that use the others.") {
			t.Fatalf("page: %d %q %q", p.Status, p.Text("main h1"), p.Text("#synonyms-about"))
		}
		if p.Doc.Find("#no-synonyms").Length() != 1 || p.Text("#synonym-count") != "0 groups of 500 at most." {
			t.Errorf("empty list: %q %q", p.Text("#no-synonyms"), p.Text("#synonym-count"))
		}
		if cur, _ := p.Doc.Find(`nav a[aria-current="page"]`).Attr("href"); cur != "/admin/corpus" {
			t.Errorf("current nav item %q, want the knowledge base", cur)
		}
	})

	t.Run("AddRefused", func(t *testing.T) {
		c := c.As(t)
		for _, tc := range []struct{ terms, want string }{
			{"bike", "Give 2 to 20 words or phrases, separated by commas."},
			{"bike, ,", "Give 2 to 20 words or phrases, separated by commas."},
			{"bike, Bike", `Words and phrases must differ from each other ("Bike" is there twice).`},
			{"bike, " + strings.Repeat("x", 61), "Words and phrases must each be at most 60 characters."},
			{"bike, --", "Words and phrases must each hold a letter or a digit."},
		} {
			p := send(c, page, tc.terms, false)
			if p.Status != http.StatusUnprocessableEntity || p.Text("#err-new-terms") != tc.want {
				t.Errorf("%q: %d %q, want 422 %q", tc.terms, p.Status, p.Text("#err-new-terms"), tc.want)
			}
			if v, _ := p.Doc.Find("#new-terms").Attr("value"); v != tc.terms {
				t.Errorf("%q: the field holds %q, want what was typed", tc.terms, v)
			}
			if inv, _ := p.Doc.Find("#new-terms").Attr("aria-invalid"); inv != "true" || p.Text("#synonym-error") == "" {
				t.Errorf("%q: aria-invalid %q, alert %q", tc.terms, inv, p.Text("#synonym-error"))
			}
		}
		if n := len(groups()); n != 0 {
			t.Errorf("%d groups after refused adds", n)
		}
	})

	var id string
	t.Run("Add", func(t *testing.T) {
		c := c.As(t)
		p := send(c, page, " bike,  bicycle , cycle,", false)
		if p.Status != http.StatusSeeOther || p.Location() != page {
			t.Fatalf("add: %d to %q", p.Status, p.Location())
		}
		g := groups()
		if len(g) != 1 || strings.Join(g[0].Terms, "|") != "bike|bicycle|cycle" {
			t.Fatalf("groups = %v", g)
		}
		id = g[0].ID
		p = c.Get(page)
		if p.Text(".flash.ok") != "Added the group bike, bicycle, cycle." || p.Text("#synonym-count") != "1 group of 500 at most." {
			t.Errorf("after adding: flash %q, count %q", p.Text(".flash.ok"), p.Text("#synonym-count"))
		}
		if v, _ := p.Doc.Find("#terms-" + id).Attr("value"); v != "bike, bicycle, cycle" {
			t.Errorf("the group's field holds %q", v)
		}
	})

	t.Run("EditInPlace", func(t *testing.T) {
		c := c.As(t)
		p := send(c, page+"/"+id, "bike, cycle, velo", true)
		if p.Status != http.StatusOK || p.Doc.Find("main").Length() != 0 || p.Text("#synonyms-"+id+" .saved") != "Saved." {
			t.Fatalf("htmx edit: %d, saved %q: %s", p.Status, p.Text(".saved"), p.Body)
		}
		p = send(c, page+"/"+id, "velo", true)
		if p.Status != http.StatusUnprocessableEntity || p.Text("#err-terms-"+id) != "Give 2 to 20 words or phrases, separated by commas." {
			t.Errorf("htmx edit refused: %d %q", p.Status, p.Text("#err-terms-"+id))
		}
		if v, _ := p.Doc.Find("#terms-" + id).Attr("value"); v != "velo" {
			t.Errorf("refused edit shows %q, want what was typed", v)
		}
		if g := groups(); strings.Join(g[0].Terms, "|") != "bike|cycle|velo" {
			t.Errorf("after a refused edit: %v", g[0].Terms)
		}
	})

	t.Run("EditForm", func(t *testing.T) {
		c := c.As(t)
		p := send(c, page+"/"+id, "bike, bike", false)
		if p.Status != http.StatusUnprocessableEntity || !strings.HasPrefix(p.Text("#err-terms-"+id), "Words and phrases must differ") ||
			p.Text("main h1") != "Synonyms" {
			t.Errorf("refused edit: %d %q", p.Status, p.Text("#err-terms-"+id))
		}
		p = send(c, page+"/"+id, "bike, bicycle", false)
		if p.Status != http.StatusSeeOther || p.Location() != page {
			t.Errorf("edit: %d to %q", p.Status, p.Location())
		}
		if g := groups(); strings.Join(g[0].Terms, "|") != "bike|bicycle" {
			t.Errorf("after the edit: %v", g[0].Terms)
		}
	})

	t.Run("OtherTenant", func(t *testing.T) {
		theirs, err := b.DB.CreateSynonyms(context.Background(), other.ID, []string{"car", "automobile"})
		if err != nil {
			t.Fatal(err)
		}
		c.ExpectNotFound(t, []webtest.AdminCall{
			{Name: "Edit", Method: "POST", Path: page + "/" + theirs.ID, Form: url.Values{"terms": {"a, b"}}},
			{Name: "EditHTMX", Method: "POST", Path: page + "/" + theirs.ID, Form: url.Values{"terms": {"a, b"}}, HX: true},
			{Name: "Delete", Method: "POST", Path: page + "/" + theirs.ID + "/delete", Form: url.Values{}},
			{Name: "Malformed", Method: "POST", Path: page + "/nope/delete", Form: url.Values{}},
		})
		if g, _ := b.DB.GetSynonyms(context.Background(), other.ID, theirs.ID); strings.Join(g.Terms, "|") != "car|automobile" {
			t.Errorf("their group = %v", g.Terms)
		}
	})

	t.Run("CSRF", func(t *testing.T) {
		p := c.As(t).Post(page, url.Values{"terms": {"a, b"}})
		if p.Status != http.StatusForbidden {
			t.Errorf("without the token: %d", p.Status)
		}
	})

	t.Run("Delete", func(t *testing.T) {
		c := c.As(t)
		second, err := b.DB.CreateSynonyms(context.Background(), ten.ID, []string{"car", "automobile"})
		if err != nil {
			t.Fatal(err)
		}
		p := send(c, page+"/"+id+"/delete", "\x00", true)
		if p.Status != http.StatusOK || p.Text("#synonym-count") != "1 group of 500 at most." {
			t.Errorf("htmx delete: %d %q", p.Status, p.Body)
		}
		if oob, _ := p.Doc.Find("#synonym-count").Attr("hx-swap-oob"); oob != "true" {
			t.Errorf("the count is not swapped out of band: %q", p.Body)
		}
		p = send(c, page+"/"+second.ID+"/delete", "\x00", false)
		if p.Status != http.StatusSeeOther || p.Location() != page {
			t.Errorf("delete: %d to %q", p.Status, p.Location())
		}
		if n := len(groups()); n != 0 {
			t.Errorf("%d groups left", n)
		}
	})

	t.Run("Limit", func(t *testing.T) {
		c := c.As(t)
		seedSynonyms(t, b, ten.ID, parley.MaxSynonymGroups-1)
		p := c.Get(page)
		if p.Doc.Find("#synonym-full").Length() != 0 {
			t.Errorf("499 groups: the page says the list is full")
		}
		if p = send(c, page, "bike, bicycle", false); p.Status != http.StatusSeeOther {
			t.Fatalf("500th group: %d %q", p.Status, p.Text("#err-new-terms"))
		}
		p = c.Get(page)
		if !strings.Contains(p.Text("#synonym-full"), "500 groups, the most there can be") || p.Text("#synonym-count") != "500 groups of 500 at most." {
			t.Errorf("500 groups: note %q, count %q", p.Text("#synonym-full"), p.Text("#synonym-count"))
		}
		p = send(c, page, "car, automobile", false)
		if p.Status != http.StatusTooManyRequests || !strings.Contains(p.Text("#synonym-error"), "500 of 500 groups") {
			t.Errorf("501st group: %d %q", p.Status, p.Text("#synonym-error"))
		}
		if v, _ := p.Doc.Find("#new-terms").Attr("value"); v != "car, automobile" {
			t.Errorf("refused at the limit, the field holds %q", v)
		}
		if n := len(groups()); n != parley.MaxSynonymGroups {
			t.Errorf("%d groups", n)
		}
	})
}

// TestAdminSynonymsBrowser adds, edits and deletes a group in Chromium,
// with an inline error on one term only and the limit's message, and checks
// the page with axe-core at laptop and phone sizes (no serious or critical
// violation, nothing scrolling sideways).
func TestAdminSynonymsBrowser(t *testing.T) {
	t.Parallel()
	axe := webtest.AxeScript(t)
	b := webtest.Setup(t)
	ten := b.OwnedTenant(t, "starter")
	ctx := webtest.BrowserTab(t)
	webtest.WatchCSP(ctx, t)
	checkPage := func(t *testing.T, what string) {
		t.Helper()
		for _, vp := range webtest.AdminViewports {
			webtest.MustStep(t, "resizing", chromedp.Do(ctx, chromedp.EmulateViewport(vp.Width, vp.Height)))
			if over := webtest.MustRunStep(ctx, t, "width", chromedp.Evaluate[int](`document.documentElement.scrollWidth - innerWidth`)); over > 0 {
				t.Errorf("%s at %s: scrolls sideways by %d px", what, vp.Name, over)
			}
			for _, v := range webtest.AxeViolations(ctx, t, axe) {
				t.Errorf("%s at %s: axe: %s", what, vp.Name, v)
			}
		}
		webtest.MustStep(t, "resizing", chromedp.Do(ctx, chromedp.EmulateViewport(1366, 900)))
		for _, v := range webtest.CSPViolations(ctx, t) {
			t.Errorf("%s: refused by the Content-Security-Policy: %s", what, v)
		}
	}

	webtest.OpenSignedIn(ctx, t, b, ten, "/admin/corpus")
	if status := webtest.SubmitForm(ctx, t, "#synonyms-link"); status != http.StatusOK {
		t.Fatalf("following the link: %d", status)
	}
	webtest.WaitUntil(ctx, t, "the synonyms page", `location.pathname === '/admin/corpus/synonyms' && !!document.getElementById('new-terms')`)
	checkPage(t, "empty page")

	// One term only: refused, the error beside the field, which takes the focus.
	webtest.MustStep(t, "typing one term", chromedp.Do(ctx, webtest.FillField("new-terms", "bike")))
	if status := webtest.SubmitForm(ctx, t, "#add-synonym"); status != http.StatusUnprocessableEntity {
		t.Fatalf("adding one term: %d", status)
	}
	webtest.WaitUntil(ctx, t, "the error", `document.getElementById('err-new-terms')?.innerText === 'Give 2 to 20 words or phrases, separated by commas.'`)
	if got := webtest.MustRunStep(ctx, t, "focus", chromedp.Evaluate[string](`document.activeElement.id + ' ' + document.activeElement.value`)); got != "new-terms bike" {
		t.Errorf("focus and value after the error = %q", got)
	}
	checkPage(t, "refused add")

	webtest.MustStep(t, "typing the group", chromedp.Do(ctx, webtest.FillField("new-terms", "bike, bicycle, cycle")))
	if status := webtest.SubmitForm(ctx, t, "#add-synonym"); status != http.StatusOK {
		t.Fatalf("adding: %d", status)
	}
	g, err := b.DB.ListSynonyms(context.Background(), ten.ID)
	if err != nil || len(g) != 1 {
		t.Fatalf("groups = %v, %v", g, err)
	}
	id := g[0].ID
	webtest.WaitUntil(ctx, t, "the group listed", `document.getElementById('terms-`+id+`')?.value === 'bike, bicycle, cycle'`)

	// Edited in place: the page stays, the group says it is saved.
	kbMarkPage(ctx, t)
	webtest.MustStep(t, "editing", chromedp.Do(ctx, webtest.FillField("terms-"+id, "bike, cycle, velo"),
		chromedp.Click(chromedp.CSS("#synonyms-"+id+" form.synonym-edit button"))))
	webtest.WaitUntil(ctx, t, "saved", `document.querySelector('#synonyms-`+id+` .saved')?.innerText === 'Saved.'`)
	if !kbPageKept(ctx, t) {
		t.Error("saving a group reloaded the page")
	}
	if g, _ := b.DB.GetSynonyms(context.Background(), ten.ID, id); strings.Join(g.Terms, "|") != "bike|cycle|velo" {
		t.Errorf("after the edit: %v", g.Terms)
	}
	// And refused in place.
	webtest.MustStep(t, "editing to one term", chromedp.Do(ctx, webtest.FillField("terms-"+id, "velo"),
		chromedp.Click(chromedp.CSS("#synonyms-"+id+" form.synonym-edit button"))))
	webtest.WaitUntil(ctx, t, "the group's error", `document.getElementById('err-terms-`+id+`')?.innerText === 'Give 2 to 20 words or phrases, separated by commas.'`)
	kbOnePage(ctx, t)
	checkPage(t, "refused edit")
	webtest.MustStep(t, "resizing", chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)))
	webtest.SaveScreenshot(ctx, t, "admin synonyms phone")
	webtest.MustStep(t, "resizing", chromedp.Do(ctx, chromedp.EmulateViewport(1366, 900)))

	// Deleted in place, after the question; the count follows.
	if msg := kbConfirmClick(ctx, t, "#synonyms-"+id+" button.secondary"); !strings.Contains(msg, "Delete the group") {
		t.Errorf("confirmation = %q", msg)
	}
	webtest.WaitUntil(ctx, t, "the group gone", `!document.getElementById('synonyms-`+id+`') && document.getElementById('synonym-count').innerText === '0 groups of 500 at most.'`)
	if !kbPageKept(ctx, t) {
		t.Error("deleting a group reloaded the page")
	}
	if n := b.Count(t, `SELECT count(*) FROM corpus_synonyms WHERE tenant_id = $1`, ten.ID); n != 0 {
		t.Errorf("%d groups after the delete", n)
	}
}
