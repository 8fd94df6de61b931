package admin_test

import (
	"context"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/chromedp/chromedp"

	"github.com/parley/parley/web/webtest"
)

// TestAdminOnboarding: a new owner's overview shows the five first steps
// with none done and says that no language model is configured; each step
// ticks itself as the owner does it (through the real paths); once all are
// done the tenant is marked onboarded and the path goes away.
func TestAdminOnboarding(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t) // no language model: answers come from the knowledge base
	b.AtItsAddress()
	ten := b.OwnedTenant(t, "starter")
	c := b.NewAdminClient(t)
	c.SignIn(ten)
	done := func() []string {
		t.Helper()
		p := c.Get("/admin")
		if p.Status != 200 {
			t.Fatalf("overview: %d", p.Status)
		}
		var labels []string
		p.Doc.Find("#onboarding li.done strong").Each(func(_ int, s *goquery.Selection) { labels = append(labels, s.Text()) })
		return labels
	}
	p := c.Get("/admin")
	if n := p.Doc.Find("#onboarding ol.steps li").Length(); n != 5 {
		t.Fatalf("%d steps shown to a new owner, want 5", n)
	}
	if got := done(); len(got) != 0 {
		t.Errorf("steps done for a new owner: %v", got)
	}
	if p.Doc.Find("#no-model").Length() != 1 {
		t.Error("the overview does not say that no language model is configured")
	}
	// With a model configured, it says nothing of the kind.
	withModel, _ := webtest.SetupChat(t, nil)
	mc := withModel.NewAdminClient(t)
	mc.SignIn(withModel.OwnedTenant(t, "starter"))
	if p := mc.Get("/admin"); p.Status != 200 || p.Doc.Find("#no-model").Length() != 0 {
		t.Errorf("with a model configured: %d, notice shown %v", p.Status, p.Doc.Find("#no-model").Length() != 0)
	}

	// Persona, knowledge, lead form: through the API as an integrator would.
	if st, body := b.Do(t, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"botName": "Spoke"}); st != 200 {
		t.Fatalf("persona: %d %v", st, body)
	}
	if st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/corpus", ten.Token, map[string]any{"title": "Hours", "content": "Open at nine."}); st != 201 {
		t.Fatalf("corpus: %d %v", st, body)
	}
	if got := done(); len(got) != 2 {
		t.Errorf("after the persona and an entry, done = %v", got)
	}
	if st, body := b.Do(t, "PUT", "/tenants/"+ten.Slug+"/segments/default", ten.Token, map[string]any{"formConfig": map[string]any{
		"enabled": true, "intent": "lead", "fields": []any{map[string]any{"name": "email", "label": "Email", "type": "email", "required": true}}}}); st != 200 {
		t.Fatalf("lead form: %d %v", st, body)
	}
	// The test chat.
	c.Get("/admin/test-chat")
	if r := c.TestChat(map[string]any{"message": "When do you open?", "sessionId": "test-onboarding"}, false); r.Status != 200 {
		t.Fatalf("test chat: %d", r.Status)
	}
	if got := done(); len(got) != 4 {
		t.Errorf("after the test chat and the lead form, done = %v", got)
	}
	tenantRow, err := b.DB.TenantBySlug(context.Background(), ten.Slug)
	webtest.MustStep(t, "reading the tenant", err)
	if tenantRow.IsOnboarded {
		t.Fatal("onboarded with a step left")
	}
	// The widget loads on the tenant's site: every step is done.
	if resp, body, _ := b.GetWidgetSettings(t, "/chat/"+ten.Slug+"/widget", map[string]string{"Origin": "https://bikes.example"}); resp.StatusCode != 200 {
		t.Fatalf("widget settings: %d %v", resp.StatusCode, body)
	}
	if p := c.Get("/admin"); p.Doc.Find("#onboarding").Length() != 0 {
		t.Error("the path is still shown with every step done")
	}
	tenantRow, err = b.DB.TenantBySlug(context.Background(), ten.Slug)
	webtest.MustStep(t, "reading the tenant", err)
	if !tenantRow.IsOnboarded {
		t.Error("every step done but the tenant is not marked onboarded")
	}
}

// TestAdminOnboardingBrowser walks the first steps in Chromium as a new
// owner would: the overview lists five steps with none done; the owner
// follows "Open the test chat" and asks a question; back on the overview,
// that step is ticked.
func TestAdminOnboardingBrowser(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.OwnedTenant(t, "starter")
	ctx := webtest.BrowserTab(t)
	webtest.OpenSignedIn(ctx, t, b, ten, "/admin")
	steps := `[...document.querySelectorAll('#onboarding ol.steps li')].map(li => (li.classList.contains('done') ? 'done ' : 'todo ') + li.querySelector('strong').innerText).join('|')`
	if got := webtest.MustRunStep(ctx, t, "steps", chromedp.Evaluate[string](steps)); strings.Count(got, "todo ") != 5 {
		t.Fatalf("a new owner's steps = %q, want five to do", got)
	}
	href := webtest.MustRunStep(ctx, t, "the test chat link", chromedp.Evaluate[string](`[...document.querySelectorAll('#onboarding a')].find(a => a.innerText === 'Open the test chat')?.href || ''`))
	if href == "" {
		t.Fatal("no link to the test chat among the steps")
	}
	// The test chat is the widget, drawn in the page.
	const sr = `document.querySelector('#test-chat parley-widget').shadowRoot`
	webtest.MustStep(t, "opening the test chat", chromedp.Do(ctx, chromedp.Navigate(href)))
	webtest.WaitUntil(ctx, t, "the chat", `!!document.querySelector('#test-chat parley-widget')?.shadowRoot?.querySelector('textarea')`)
	_, err := chromedp.Run(ctx, chromedp.Evaluate[any](`(() => { `+sr+`.querySelector('textarea').value = 'When do you open?';
		`+sr+`.querySelector('form.compose button').click(); })()`))
	webtest.MustStep(t, "asking", err)
	webtest.WaitUntil(ctx, t, "the answer", `[...`+sr+`.querySelectorAll('.msg.bot')].some(m => m.innerText.includes('I could not find an answer'))`)
	webtest.MustStep(t, "back to the overview", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin")))
	got := webtest.MustRunStep(ctx, t, "steps", chromedp.Evaluate[string](steps))
	if !strings.Contains(got, "done Try it yourself") || strings.Count(got, "todo ") != 4 {
		t.Errorf("after the test chat, steps = %q", got)
	}
	if n := webtest.MustRunStep(ctx, t, "progress", chromedp.Evaluate[string](`document.querySelector('#onboarding [role=meter]').getAttribute('aria-valuenow')`)); n != "1" {
		t.Errorf("the progress meter says %s steps done", n)
	}
}
