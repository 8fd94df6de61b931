package web_test

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/web/webtest"
)

var anonymousIDPattern = regexp.MustCompile(`^anon_[0-9a-f]{32}$`)

// askWidget opens the widget on the tab's page, sends text and waits for
// the answers shown to number answers.
func askWidget(ctx context.Context, t *testing.T, text string, answers int) {
	t.Helper()
	const sr = widgetShadow
	_, err := chromedp.Run(ctx, chromedp.Evaluate[any](`(() => { const r = `+sr+`;
		if (r.querySelector('.panel').hidden) r.querySelector('.launcher').click();
		r.querySelector('textarea').value = `+webtest.JSString(text)+`; r.querySelector('form.compose button').click(); })()`))
	webtest.MustStep(t, "asking "+text, err)
	webtest.WaitUntil(ctx, t, "the answer to "+text, sr+`.querySelectorAll('.votes').length >= `+strconv.Itoa(answers))
}

// TestWidgetBrowserAnonymousId: the widget makes one anonymous id of 128
// random bits for the tenant, keeps it in the host page's localStorage and
// sends it with its messages; after a reload it sends the same one, so what
// the bot remembered comes back in a new conversation on this browser.
func TestWidgetBrowserAnonymousId(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil,
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{webtest.Call("m1", "remember", `{"key":"name","value":"Ada"}`)}},
		llmtest.Turn{Text: []string{"Nice to meet you."}},
		llmtest.Turn{Text: []string{"Welcome back."}})
	b.AtOwnAddress()
	ten := b.NewTenant(t, "starter")
	b.MustDo(t, 201, "POST", "/tenants/"+ten.Slug+"/tools", ten.Token, map[string]any{"name": "Remember", "description": "Keep facts", "type": "REMEMBER_FACT"})
	site := tenantSite(t, b, ten.Slug, "default")
	ctx := webtest.BrowserTab(t)
	storageKey := webtest.JSString("parley-visitor-" + ten.Slug)
	stored := func(step string) string {
		t.Helper()
		return webtest.MustRunStep(ctx, t, step, chromedp.Evaluate[string](`localStorage.getItem(`+storageKey+`) || ''`))
	}

	openWidgetPage(ctx, t, site.URL)
	if id := stored("before any message"); id != "" {
		t.Errorf("an anonymous id stored before the visitor wrote: %q", id)
	}
	askWidget(ctx, t, "I am Ada", 1)
	id := stored("the anonymous id")
	if !anonymousIDPattern.MatchString(id) {
		t.Fatalf("stored anonymous id %q, want anon_ and 32 hex digits", id)
	}
	var visitor string
	if err := b.DB.Pool().QueryRow(t.Context(), `SELECT c.visitor_id FROM conversations c JOIN visitors v ON v.id = c.visitor_id
		WHERE c.tenant_id = $1 AND v.anonymous_key = $2`, ten.ID, webtest.AnonymousKey(id)).Scan(&visitor); err != nil {
		t.Fatalf("the conversation is not the stored anonymous id's visitor: %v", err)
	}

	// Reloaded, in a new conversation (the session and its history
	// forgotten): the same id goes out, and the fact is back.
	_, err := chromedp.Run(ctx, chromedp.Evaluate[any](`Object.keys(localStorage).filter(k => !k.startsWith('parley-visitor-')).forEach(k => localStorage.removeItem(k))`))
	webtest.MustStep(t, "forgetting the session", err)
	webtest.MustStep(t, "reloading", chromedp.Do(ctx, chromedp.Reload()))
	webtest.WaitUntil(ctx, t, "the launcher", `!!`+widgetShadow+`?.querySelector('.launcher')`)
	n := len(llm.Requests())
	askWidget(ctx, t, "Do you know me?", 1)
	if got := stored("the anonymous id after a reload"); got != id {
		t.Errorf("anonymous id after a reload = %q, want %q", got, id)
	}
	if reqs := llm.Requests(); len(reqs) <= n || !strings.Contains(string(reqs[n].Chat.Messages[0].Content), "name: Ada") {
		t.Errorf("the fact remembered before the reload is not in the new conversation's prompt")
	}
	if c := b.Count(t, `SELECT count(DISTINCT session_id) FROM conversations WHERE tenant_id = $1 AND visitor_id = $2`, ten.ID, visitor); c != 2 {
		t.Errorf("%d conversations of the anonymous visitor, want 2", c)
	}
}

// TestWidgetBrowserAnonymousIdNoStorage: where the host page's storage is
// blocked, the widget keeps one anonymous id for the page's life.
func TestWidgetBrowserAnonymousIdNoStorage(t *testing.T) {
	t.Parallel()
	b, _ := webtest.SetupChat(t, nil, llmtest.Turn{Text: []string{"One."}}, llmtest.Turn{Text: []string{"Two."}})
	b.AtOwnAddress()
	ten := b.NewTenant(t, "starter")
	site := tenantSite(t, b, ten.Slug, "default")
	ctx := webtest.BrowserTab(t)
	_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: `Object.defineProperty(window, 'localStorage', { get() { throw new DOMException('blocked', 'SecurityError'); } });`})
	webtest.MustStep(t, "blocking storage", err)
	openWidgetPage(ctx, t, site.URL)
	askWidget(ctx, t, "One", 1)
	askWidget(ctx, t, "Two", 2)
	// Without storage every message starts a session; both are the one
	// anonymous visitor's.
	if c := b.Count(t, `SELECT count(*) FROM conversations c JOIN visitors v ON v.id = c.visitor_id
		WHERE c.tenant_id = $1 AND v.anonymous_key IS NOT NULL`, ten.ID); c != 2 {
		t.Errorf("%d conversations of an anonymous visitor, want 2", c)
	}
	if c := b.Count(t, `SELECT count(*) FROM visitors WHERE tenant_id = $1`, ten.ID); c != 1 {
		t.Errorf("%d visitors, want one anonymous visitor for the page's life", c)
	}
}
