package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parley/parley/agent/llmtest"
	"github.com/parley/parley/static"
)

// TestWidgetScriptIsTheSource: the served script is the widget's source as
// it is (make widget copies it), so the two cannot drift apart.
func TestWidgetScriptIsTheSource(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../widget/widget.js")
	if err != nil {
		t.Fatal(err)
	}
	built, err := static.FS.ReadFile("widget.js")
	if err != nil {
		t.Fatal(err)
	}
	if string(src) != string(built) {
		t.Fatal("static/widget.js differs from widget/widget.js: run make widget")
	}
}

// TestWidgetBrowser embeds the widget in a page of another origin, as a
// tenant's site would, and chats through it in Chromium: launcher, welcome
// message, starters, an answer streamed from the model and rendered safely,
// a vote, and the host page's styles kept out.
func TestWidgetBrowser(t *testing.T) {
	t.Parallel()
	b, _ := setupChat(t, nil, llmtest.Turn{Text: []string{"Our **shop** opens at 9. ", "Hours: https://bikes.example/hours ",
		`<img src=x onerror="window.pwned=1">`}})
	// The widget talks to the addresses its settings give, made from the
	// public base URL: here, the test server's.
	b.srv.Handler.BaseURL = b.ts.URL
	ten := b.newTenant(t, "starter")
	seg := map[string]any{"name": "Shop", "slug": "shop", "systemPrompt": "Help with the shop.", "welcomeMessage": "Hi! Ask me about bikes.",
		"conversationStarters": []any{map[string]any{"text": "When are you open?", "emoji": "🕘"}}}
	if st, body := b.do(t, "POST", "/tenants/"+ten.Slug+"/segments", ten.Token, seg); st != 201 {
		t.Fatalf("segment: %d %v", st, body)
	}
	if st, body := b.do(t, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"primaryColor": "#0f766e", "botName": "Spoke"}); st != 200 {
		t.Fatalf("settings: %d %v", st, body)
	}

	// The tenant's site: another origin, with styles that would reach any
	// element of the page.
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html lang="en"><head><title>Bikes</title>
<style>* { color: rgb(255, 0, 0) !important; font-size: 40px !important; } button { display: none !important; }</style></head>
<body><h1>Bikes</h1><script src="%s/widget.js" data-tenant="%s" data-segment="shop" async></script></body></html>`, b.ts.URL, ten.Slug)
	}))
	t.Cleanup(site.Close)

	ctx := browserTab(t)
	mustStep(t, "opening the site", chromedp.Do(ctx, chromedp.Navigate(site.URL)))
	const sr = `document.querySelector('parley-widget').shadowRoot`
	waitUntil(ctx, t, "the launcher", `!!document.querySelector('parley-widget')?.shadowRoot?.querySelector('.launcher')`)
	run := func(step, js string) {
		t.Helper()
		_, err := chromedp.Run(ctx, chromedp.Evaluate[any](js))
		mustStep(t, step, err)
	}
	str := func(step, js string) string {
		t.Helper()
		return mustRunStep(ctx, t, step, chromedp.Evaluate[string](js))
	}

	run("opening the chat", sr+`.querySelector('.launcher').click()`)
	waitUntil(ctx, t, "the panel", `!`+sr+`.querySelector('.panel').hidden`)
	if got := str("welcome", sr+`.querySelector('.msg.bot').innerText`); got != "Hi! Ask me about bikes." {
		t.Errorf("welcome = %q", got)
	}
	if got := str("header", sr+`.querySelector('header .name').innerText`); got != "Spoke" {
		t.Errorf("bot name = %q", got)
	}

	run("asking a starter", sr+`.querySelector('.starters button').click()`)
	waitUntil(ctx, t, "the answer and its votes", sr+`.querySelectorAll('.msg.bot').length === 2 && !!`+sr+`.querySelector('.votes')`)
	answer := `[...` + sr + `.querySelectorAll('.msg.bot')].pop()`
	if got := str("question", sr+`.querySelector('.msg.me').innerText`); got != "When are you open?" {
		t.Errorf("the visitor's message = %q", got)
	}
	if got := str("bold", answer+`.querySelector('strong')?.innerText || ''`); got != "shop" {
		t.Errorf("bold = %q", got)
	}
	if got := str("link", `(() => { const a = `+answer+`.querySelector('a'); return a ? a.href + ' ' + a.target + ' ' + a.rel : ''; })()`); got != "https://bikes.example/hours _blank noopener noreferrer" {
		t.Errorf("link = %q", got)
	}
	if got := str("markup as text", `(`+sr+`.querySelector('img') ? 'an img element' : '') + (window.pwned ? ' ran' : '') + (`+answer+`.innerText.includes('<img src=x') ? '' : ' text missing')`); got != "" {
		t.Errorf("the model's markup: %s", got)
	}
	if got := str("isolation", `getComputedStyle(`+answer+`).color + ' ' + getComputedStyle(`+sr+`.querySelector('form button')).display`); got != "rgb(17, 17, 17) block" {
		t.Errorf("the host page's styles reached the widget: color and button display %q", got)
	}

	run("voting", sr+`.querySelector('.votes button').click()`)
	waitUntil(ctx, t, "the vote to show", sr+`.querySelector('.votes button').getAttribute('aria-pressed') === 'true'`)
	var votes int
	if err := b.db.Pool().QueryRow(context.Background(), `SELECT count(*) FROM messages m JOIN conversations c ON c.id = m.conversation_id
		WHERE c.tenant_id = $1 AND m.role = 'assistant' AND m.feedback = 1`, ten.ID).Scan(&votes); err != nil || votes != 1 {
		t.Errorf("stored votes = %d (%v)", votes, err)
	}
}
