package admin_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parley/parley/web/webtest"
)

// askUnanswered has visitors of ten ask each question in a conversation of
// its own, answered by the local provider over an empty knowledge base:
// nothing found, and said so.
func askUnanswered(t *testing.T, b *webtest.Bundle, ten webtest.Tenant, questions ...string) {
	t.Helper()
	for i, q := range questions {
		r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": q, "sessionId": t.Name() + "-" + string(rune('a'+i)), "stream": false}, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("chat: %d %v", r.Status, r.Body)
		}
	}
}

// The Knowledge gaps page: the tenant's unanswered questions grouped by
// wording with their count, signs and conversations, linked from the
// knowledge base; another tenant's never; a bad filter is a 422 in words;
// "Add an answer" prefills the new entry, whose save marks the group
// answered; Dismiss and Reopen move a group between the tabs.
func TestAdminKnowledgeGapsPage(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	ten, other := b.OwnedTenant(t, "starter"), b.OwnedTenant(t, "starter")
	askUnanswered(t, b, ten, "What are your opening hours?", "opening hours", "Do you deliver to Canada?")
	askUnanswered(t, b, other, "A question of the other tenant")
	c := b.NewAdminClient(t)
	c.SignIn(ten)
	if p := c.Get("/admin/corpus"); p.Doc.Find(`a#gaps-link[href="/admin/knowledge-gaps"]`).Length() != 1 {
		t.Error("the knowledge base does not link to Knowledge gaps")
	}
	p := c.Get("/admin/knowledge-gaps")
	if p.Status != http.StatusOK {
		t.Fatalf("GET: %d", p.Status)
	}
	groups := p.Doc.Find("article.gap-group")
	if groups.Length() != 2 {
		t.Fatalf("%d groups, want 2", groups.Length())
	}
	first := strings.Join(strings.Fields(groups.First().Text()), " ")
	for _, want := range []string{"opening hours", "2 times", "Nothing in the knowledge base", "Said it did not know", "Add an answer"} {
		if !strings.Contains(first, want) {
			t.Errorf("the first group %q lacks %q", first, want)
		}
	}
	if groups.First().Find(`a[href^="/admin/conversations/"]`).Length() != 2 {
		t.Error("the group's questions do not link to their conversations")
	}
	if strings.Contains(p.Body, "other tenant") {
		t.Error("another tenant's question shown")
	}
	if p := c.Get("/admin/knowledge-gaps?channel=fax"); p.Status != http.StatusUnprocessableEntity || p.Text("#err-channel") == "" {
		t.Errorf("a bad channel: %d %q", p.Status, p.Text("#err-channel"))
	}
	if p := c.Get("/admin/knowledge-gaps?channel=voice"); p.Doc.Find("article.gap-group").Length() != 0 {
		t.Error("the phone's questions hold the website's")
	}

	// Add an answer: the form holds the question and the group's key.
	href, _ := groups.First().Find(`a.btn[href^="/admin/corpus/new"]`).Attr("href")
	form := c.Get(href)
	if v, _ := form.Doc.Find("#title").Attr("value"); v != "opening hours" {
		t.Errorf("the title is %q, want the latest question", v)
	}
	if v, _ := form.Doc.Find(`input[name=gap]`).Attr("value"); v != "hour opening" {
		t.Errorf("the gap field is %q", v)
	}
	saved := c.Submit("/admin/corpus", url.Values{"title": {"Opening hours"}, "content": {"Monday to Friday, 9 to 5."},
		"isActive": {"true"}, "gap": {"hour opening"}})
	if saved.Status != http.StatusSeeOther || saved.Location() != "/admin/knowledge-gaps?state=answered" {
		t.Fatalf("saving the answer: %d %s", saved.Status, saved.Location())
	}
	answered := c.Get("/admin/knowledge-gaps?state=answered")
	if g := answered.Doc.Find("article.gap-group"); g.Length() != 1 || g.Find(`[data-state=answered]`).Length() != 1 ||
		g.Find(`a[href^="/admin/corpus/"]`).Length() != 1 {
		t.Errorf("answered: %q", answered.Text("#gap-groups"))
	}
	if n := c.Get("/admin/knowledge-gaps").Doc.Find("article.gap-group").Length(); n != 1 {
		t.Errorf("%d open groups after the answer, want 1", n)
	}
	// Dismiss, then reopen.
	if p := c.Submit("/admin/knowledge-gaps/state", url.Values{"key": {"canada deliver"}, "state": {"dismissed"}, "back": {"?state=open"}}); p.Status != http.StatusSeeOther || p.Location() != "/admin/knowledge-gaps?state=open" {
		t.Fatalf("dismiss: %d %s", p.Status, p.Location())
	}
	if n := c.Get("/admin/knowledge-gaps?state=dismissed").Doc.Find("article.gap-group").Length(); n != 1 {
		t.Errorf("%d dismissed groups, want 1", n)
	}
	if p := c.Submit("/admin/knowledge-gaps/state", url.Values{"key": {"canada deliver"}, "state": {"open"}, "back": {"//evil.example"}}); p.Location() != "/admin/knowledge-gaps" {
		t.Errorf("reopen went to %q", p.Location())
	}
	if p := c.Submit("/admin/knowledge-gaps/state", url.Values{"key": {"other question tenant"}, "state": {"dismissed"}}); p.Status != http.StatusNotFound {
		t.Errorf("another tenant's group dismissed: %d", p.Status)
	}
}

// An owner opens Knowledge gaps from the knowledge base on a phone, adds an
// answer to a group, saves the prefilled entry, and sees the group
// answered; axe-core finds no serious violation on the way.
func TestKnowledgeGapsBrowser(t *testing.T) {
	t.Parallel()
	axe := webtest.AxeScript(t)
	b := webtest.SetupAdmin(t, nil)
	ten := b.OwnedTenant(t, "starter")
	askUnanswered(t, b, ten, "Can I bring my dog?", "can i bring my dogs")
	ctx := webtest.BrowserTab(t)
	webtest.MustStep(t, "phone size", chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)))
	checkAxe := func(page string) {
		t.Helper()
		for _, v := range webtest.AxeViolations(ctx, t, axe) {
			t.Errorf("%s: axe: %s", page, v)
		}
		if over := webtest.MustRunStep(ctx, t, "width", chromedp.Evaluate[int](`document.documentElement.scrollWidth - innerWidth`)); over > 0 {
			t.Errorf("%s scrolls sideways by %d px", page, over)
		}
	}
	webtest.OpenSignedIn(ctx, t, b, ten, "/admin/corpus")
	if st := webtest.SubmitForm(ctx, t, `#gaps-link`); st != http.StatusOK {
		t.Fatalf("Knowledge gaps: %d", st)
	}
	checkAxe("knowledge gaps")
	group := webtest.MustRunStep(ctx, t, "the group", chromedp.Evaluate[string](`document.querySelector('article.gap-group')?.textContent || ''`))
	if !strings.Contains(group, "2 times") {
		t.Fatalf("the group: %q", strings.Join(strings.Fields(group), " "))
	}
	if st := webtest.SubmitForm(ctx, t, `article.gap-group a.btn[href^="/admin/corpus/new"]`); st != http.StatusOK {
		t.Fatalf("Add an answer: %d", st)
	}
	checkAxe("the new entry")
	title := webtest.MustRunStep(ctx, t, "the title", chromedp.Evaluate[string](`document.getElementById('title').value`))
	if title != "can i bring my dogs" {
		t.Errorf("the title is %q, want the latest question", title)
	}
	webtest.MustStep(t, "the answer", chromedp.Do(ctx, webtest.FillField("content", "Dogs on a lead are welcome.")))
	if st := webtest.SubmitForm(ctx, t, `#save-entry`); st != http.StatusOK {
		t.Fatalf("saving: %d", st)
	}
	if loc := webtest.MustRunStep(ctx, t, "location", chromedp.Location()); loc != b.TS.URL+"/admin/knowledge-gaps?state=answered" {
		t.Fatalf("after saving at %s", loc)
	}
	state := webtest.MustRunStep(ctx, t, "the state", chromedp.Evaluate[string](`document.querySelector('article.gap-group [data-state]')?.textContent || ''`))
	if state != "Answered" {
		t.Errorf("the group's state is %q, want Answered", state)
	}
	checkAxe("answered")
}
