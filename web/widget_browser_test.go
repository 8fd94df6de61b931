package web_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/web/webtest"
	"github.com/parley/parley/widget"
)

// TestWidgetScriptServed: /widget.js as served to a browser that takes
// gzip stays under the budget of 30 KB, and is the widget; one that
// does not gets it as it is. Both may be kept five minutes, from any page.
func TestWidgetScriptServed(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	for _, accept := range []string{"gzip, deflate, br", "identity"} {
		req, _ := http.NewRequest(http.MethodGet, b.TS.URL+"/widget.js", nil)
		req.Header.Set("Accept-Encoding", accept)
		resp, err := b.TS.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		h := resp.Header
		if resp.StatusCode != http.StatusOK || h.Get("Cache-Control") != "public, max-age=300" || h.Get("Access-Control-Allow-Origin") != "*" ||
			h.Get("Content-Type") != "text/javascript; charset=utf-8" || !strings.Contains(h.Get("Vary"), "Accept-Encoding") {
			t.Errorf("%s: %d, headers %v", accept, resp.StatusCode, h)
		}
		if accept == "identity" {
			if h.Get("Content-Encoding") != "" || !bytes.Equal(body, widget.Script) {
				t.Errorf("identity: Content-Encoding %q, %d bytes of %d", h.Get("Content-Encoding"), len(body), len(widget.Script))
			}
			continue
		}
		if len(body) >= 30<<10 {
			t.Errorf("widget.js is %d bytes gzipped, over the 30 KB budget", len(body))
		}
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil || h.Get("Content-Encoding") != "gzip" {
			t.Fatalf("gzip: Content-Encoding %q: %v", h.Get("Content-Encoding"), err)
		}
		if plain, err := io.ReadAll(zr); err != nil || !bytes.Equal(plain, widget.Script) {
			t.Errorf("the gzipped widget is not the widget: %v", err)
		}
	}
}

// widgetShadow is the widget's shadow root, in the page's JavaScript.
const widgetShadow = `document.querySelector('parley-widget').shadowRoot`

// openWidgetPage opens url in the tab and waits for the widget's launcher.
func openWidgetPage(ctx context.Context, t *testing.T, url string) {
	t.Helper()
	// The widget's requests are cross-origin: no extra header (OwnAddress),
	// which would have them preflighted.
	_, err := chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{}})
	webtest.MustStep(t, "dropping the tab's own address", err)
	webtest.MustStep(t, "opening "+url, chromedp.Do(ctx, chromedp.Navigate(url)))
	webtest.WaitUntil(ctx, t, "the launcher", `!!document.querySelector('parley-widget')?.shadowRoot?.querySelector('.launcher')`)
}

// TestWidgetBrowser embeds the widget in a page of another origin, as a
// tenant's site would, and chats through it in Chromium: launcher, welcome
// message, starters, an answer streamed from the model and rendered safely,
// a vote, and the host page's styles kept out.
func TestWidgetBrowser(t *testing.T) {
	t.Parallel()
	b, _ := webtest.SetupChat(t, nil, llmtest.Turn{Text: []string{"Our **shop** opens at 9. ", "Hours: https://bikes.example/hours ",
		`<img src=x onerror="window.pwned=1"> [press](javascript:window.pwned=2)`}})
	// The widget talks to the addresses its settings give, made from the
	// public base URL: here, the test server's.
	b.AtItsAddress()
	ten := b.NewTenant(t, "starter")
	seg := map[string]any{"name": "Shop", "slug": "shop", "systemPrompt": "Help with the shop.", "welcomeMessage": "Hi! Ask me about bikes.",
		"conversationStarters": []any{map[string]any{"text": "When are you open?", "emoji": "🕘"}},
		"formConfig": map[string]any{"enabled": true, "intent": "lead", "confirmationMessage": "Thanks, we will call you back.", "display": "on_open",
			"fields": []any{map[string]any{"name": "full_name", "label": "Name", "type": "text", "required": true},
				map[string]any{"name": "email", "label": "Email", "type": "email", "required": true}}}}
	if st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/segments", ten.Token, seg); st != 201 {
		t.Fatalf("segment: %d %v", st, body)
	}
	if st, body := b.Do(t, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"primaryColor": "#0f766e", "botName": "Spoke",
		"teaserText": "Need a hand with a bike?", "autoOpenDelay": 3, "bookingCtaEnabled": true, "bookingCtaConfig": map[string]any{"headline": "Book a test ride", "subtitle": "30 minutes", "ctaText": "Book", "officeHours": "Mon-Sat"}}); st != 200 {
		t.Fatalf("settings: %d %v", st, body)
	}

	site := tenantSite(t, b, ten.Slug, "shop")

	ctx := webtest.BrowserTab(t)
	openWidgetPage(ctx, t, site.URL)
	const sr = widgetShadow
	run := func(step, js string) {
		t.Helper()
		_, err := chromedp.Run(ctx, chromedp.Evaluate[any](js))
		webtest.MustStep(t, step, err)
	}
	str := func(step, js string) string {
		t.Helper()
		return webtest.MustRunStep(ctx, t, step, chromedp.Evaluate[string](js))
	}

	// The launcher pulses (bubblePulse is on by default) a few times, not
	// forever, and not at all for a visitor who asks for less motion (the tab
	// does, see EmulateMedia).
	if got := str("pulse", `(() => { const l = `+sr+`.querySelector('.launcher');
		const rule = [...`+sr+`.querySelector('style').sheet.cssRules].find(r => r.selectorText === '.launcher.pulse');
		return l.classList.contains('pulse') + ' ' + (rule ? rule.style.animationIterationCount : 'no rule') + ' ' + getComputedStyle(l).animationName; })()`); got != "true 3 none" {
		t.Errorf("launcher pulse, its iteration count and its animation under reduced motion = %q, want true 3 none", got)
	}

	// Closed: the launcher and, after its delay (the shortest allowed, 3 s), the teaser.
	webtest.WaitUntil(ctx, t, "the teaser", `!`+sr+`.querySelector('.teaser').hidden && `+sr+`.querySelector('.panel').hidden`)
	if got := str("teaser", sr+`.querySelector('.teaser').innerText`); got != "Need a hand with a bike?" {
		t.Errorf("teaser = %q", got)
	}
	webtest.SaveScreenshot(ctx, t, "widget-closed")

	run("opening the chat", sr+`.querySelector('.launcher').click()`)
	webtest.WaitUntil(ctx, t, "the panel", `!`+sr+`.querySelector('.panel').hidden && `+sr+`.querySelector('.teaser').hidden`)
	if got := str("welcome", sr+`.querySelector('.msg.bot').innerText`); got != "Hi! Ask me about bikes." {
		t.Errorf("welcome = %q", got)
	}
	if got := str("header", sr+`.querySelector('header .name').innerText`); got != "Spoke" {
		t.Errorf("bot name = %q", got)
	}
	if got := str("booking", sr+`.querySelector('.booking strong')?.innerText || ''`); got != "Book a test ride" {
		t.Errorf("booking call-to-action = %q", got)
	}

	// The segment's lead form posts to /form/{slug}: a submission of channel form.
	run("filling the form", `(() => { const f = `+sr+`.querySelector('form.lead');
		f.elements.full_name.value = 'Ada Lovelace'; f.elements.email.value = 'ada@example.com';
		f.querySelector('button').click(); })()`)
	webtest.WaitUntil(ctx, t, "the form's confirmation", `!`+sr+`.querySelector('form.lead') && [...`+sr+`.querySelectorAll('.msg.bot')].some(m => m.innerText === 'Thanks, we will call you back.')`)
	if n := b.Count(t, `SELECT count(*) FROM submissions WHERE tenant_id = $1 AND channel = 'form' AND input->>'email' = 'ada@example.com'`, ten.ID); n != 1 {
		t.Errorf("%d form submissions stored, want 1", n)
	}

	run("asking a starter", sr+`.querySelector('.starters button').click()`)
	webtest.WaitUntil(ctx, t, "the answer and its votes", `!!`+sr+`.querySelector('.votes')`)
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
	if got := str("javascript link", `String(`+answer+`.querySelectorAll('a').length) + ' ' + String(`+answer+`.innerText.includes('[press](javascript:'))`); got != "1 true" {
		t.Errorf("links and the javascript: one as text = %q, want the one http(s) link and the rest as text", got)
	}
	if got := str("isolation", `getComputedStyle(`+answer+`).color + ' ' + getComputedStyle(`+sr+`.querySelector('form button')).display`); got != "rgb(17, 17, 17) block" {
		t.Errorf("the host page's styles reached the widget: color and button display %q", got)
	}
	// The launcher and the votes draw their icons, hidden from assistive
	// technology (their buttons are labelled): an emoji there showed as an
	// empty box on a system without an emoji font.
	if got := str("icons", `[`+sr+`.querySelector('.launcher'), ...`+answer+`.querySelectorAll('.votes button')].map(b => {
		const r = b.querySelector('svg[aria-hidden="true"]')?.getBoundingClientRect();
		return (r ? Math.round(r.width) + 'x' + Math.round(r.height) : 'no icon') + (b.innerText.trim() ? ' and text' : ''); }).join(' ')`); got != "26x26 14x14 14x14" {
		t.Errorf("the launcher's and the votes' icons = %q, want 26x26 14x14 14x14", got)
	}
	webtest.SaveScreenshot(ctx, t, "widget-open")

	run("voting", sr+`.querySelector('.votes button').click()`)
	webtest.WaitUntil(ctx, t, "the vote to show", sr+`.querySelector('.votes button').getAttribute('aria-pressed') === 'true'`)
	var votes int
	if err := b.DB.Pool().QueryRow(context.Background(), `SELECT count(*) FROM messages m JOIN conversations c ON c.id = m.conversation_id
		WHERE c.tenant_id = $1 AND m.role = 'assistant' AND m.feedback = 1`, ten.ID).Scan(&votes); err != nil || votes != 1 {
		t.Errorf("stored votes = %d (%v)", votes, err)
	}

	// Another page of the site: the conversation is shown again, and goes on
	// in the same session.
	openWidgetPage(ctx, t, site.URL+"/shipping")
	run("reopening the chat", sr+`.querySelector('.launcher').click()`)
	webtest.WaitUntil(ctx, t, "the restored conversation", sr+`.querySelector('.msg.me')?.innerText === 'When are you open?' && !!`+sr+`.querySelector('.votes')`)
	if got := str("starters after a conversation", `String(!!`+sr+`.querySelector('.starters'))`); got != "false" {
		t.Error("starters offered again in a conversation under way")
	}
	if n := b.Count(t, `SELECT count(DISTINCT session_id) FROM conversations WHERE tenant_id = $1`, ten.ID); n != 1 {
		t.Errorf("%d sessions, want the one", n)
	}
}

// tenantSite serves a page of the tenant's site, on another origin than
// Parley, embedding the widget, with styles that would reach any element of
// the page.
func tenantSite(t *testing.T, b *webtest.Bundle, slug, segment string) *httptest.Server {
	t.Helper()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html lang="en"><head><title>Bikes</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>* { color: rgb(255, 0, 0) !important; font-size: 40px !important; } button { display: none !important; }</style></head>
<body><h1>Bikes</h1><script src="%s/widget.js" data-tenant="%s" data-segment="%s" async></script></body></html>`, b.TS.URL, slug, segment)
	}))
	t.Cleanup(site.Close)
	return site
}

// TestWidgetBrowserMobile: on a phone's narrow screen (390 by 844, under
// the widget's 480 px breakpoint) the open chat fills the screen, and
// nothing of the widget's covers its message field or Send button.
func TestWidgetBrowserMobile(t *testing.T) {
	t.Parallel()
	b, _ := webtest.SetupChat(t, nil, llmtest.Turn{Text: []string{"We open at 9."}})
	b.AtItsAddress()
	ten := b.NewTenant(t, "starter")
	if st, body := b.Do(t, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"botName": "Spoke"}); st != 200 {
		t.Fatalf("settings: %d %v", st, body)
	}
	site := tenantSite(t, b, ten.Slug, "default")
	ctx := webtest.BrowserTab(t)
	webtest.MustStep(t, "a phone's screen", chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulatePortrait, chromedp.EmulateMobile, chromedp.EmulateTouch)))
	openWidgetPage(ctx, t, site.URL)
	const sr = widgetShadow
	_, err := chromedp.Run(ctx, chromedp.Evaluate[any](sr+`.querySelector('.launcher').click()`))
	webtest.MustStep(t, "opening the chat", err)
	webtest.WaitUntil(ctx, t, "the panel", `!`+sr+`.querySelector('.panel').hidden`)
	_, err = chromedp.Run(ctx, chromedp.Evaluate[any](`(() => { const i = `+sr+`.querySelector('textarea'); i.value = 'When are you open?';
		`+sr+`.querySelector('form.compose button').click(); })()`))
	webtest.MustStep(t, "asking", err)
	webtest.WaitUntil(ctx, t, "the answer", `!!`+sr+`.querySelector('.votes')`)
	got := webtest.MustRunStep(ctx, t, "the panel's box", chromedp.Evaluate[[]float64](`(() => {
		const r = `+sr+`.querySelector('.panel').getBoundingClientRect();
		return [innerWidth, innerHeight, r.left, r.top, r.width, r.height]; })()`))
	if want := []float64{390, 844, 0, 0, 390, 844}; !slices.Equal(got, want) {
		t.Errorf("viewport width and height, then the panel's left, top, width and height = %v, want %v", got, want)
	}
	// Whatever is on top at the centre of the Send button and of the message
	// field must be that element: the launcher must not cover them.
	covered := webtest.MustRunStep(ctx, t, "hit test", chromedp.Evaluate[[]string](`(() => {
		const root = `+sr+`, out = [];
		for (const sel of ['form.compose button', 'textarea']) {
			const el = root.querySelector(sel), r = el.getBoundingClientRect();
			const top = root.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
			if (top !== el) out.push(sel + ' is covered by ' + (top ? top.className || top.tagName : 'nothing'));
		}
		return out; })()`))
	for _, c := range covered {
		t.Error(c)
	}
	webtest.SaveScreenshot(ctx, t, "widget-mobile")

	// Closed again from the header, the launcher is back, and has the focus.
	_, err = chromedp.Run(ctx, chromedp.Evaluate[any](sr+`.querySelector('header button').click()`))
	webtest.MustStep(t, "closing the chat", err)
	webtest.WaitUntil(ctx, t, "the launcher back, focused", sr+`.querySelector('.panel').hidden && `+sr+`.activeElement === `+sr+`.querySelector('.launcher') &&
		getComputedStyle(`+sr+`.querySelector('.launcher')).display !== 'none'`)
}

// TestWidgetDemoPage: the sample site served by Parley itself shows the
// widget of the tenant named in its address.
func TestWidgetDemoPage(t *testing.T) {
	t.Parallel()
	b, _ := webtest.SetupChat(t, nil)
	b.AtItsAddress()
	ten := b.NewTenant(t, "starter")
	ctx := webtest.BrowserTab(t)
	openWidgetPage(ctx, t, b.TS.URL+"/static/demo.html?tenant="+ten.Slug)
	if got := webtest.MustRunStep(ctx, t, "tenant", chromedp.Evaluate[string](`document.getElementById('which').textContent`)); got != "Tenant: "+ten.Slug {
		t.Errorf("the page names %q", got)
	}
}

// TestWidgetAccessibility runs axe-core over the open widget, with an
// answer and the lead form in it: no serious or critical violation.
func TestWidgetAccessibility(t *testing.T) {
	t.Parallel()
	axe := webtest.AxeScript(t)
	b, _ := webtest.SetupChat(t, nil, llmtest.Turn{Text: []string{"We open at **9**. See https://bikes.example/hours"}})
	b.AtItsAddress()
	ten := b.NewTenant(t, "starter")
	seg := map[string]any{"name": "Shop", "slug": "shop", "systemPrompt": "p", "welcomeMessage": "Hi!",
		"conversationStarters": []any{map[string]any{"text": "Hours?", "emoji": ""}},
		"formConfig": map[string]any{"enabled": true, "intent": "lead",
			"fields": []any{map[string]any{"name": "email", "label": "Email", "type": "email", "required": true}}}}
	if st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/segments", ten.Token, seg); st != 201 {
		t.Fatalf("segment: %d %v", st, body)
	}
	if st, body := b.Do(t, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"showAiBadge": true, "teaserText": "Questions?"}); st != 200 {
		t.Fatalf("settings: %d %v", st, body)
	}
	site := tenantSite(t, b, ten.Slug, "shop")
	ctx := webtest.BrowserTab(t)
	openWidgetPage(ctx, t, site.URL)
	const sr = widgetShadow
	_, err := chromedp.Run(ctx, chromedp.Evaluate[any](sr+`.querySelector('.launcher').click(); `+sr+`.querySelector('.starters button').click()`))
	webtest.MustStep(t, "asking", err)
	webtest.WaitUntil(ctx, t, "the answer", `!!`+sr+`.querySelector('.votes')`)
	_, err = chromedp.Run(ctx, chromedp.Evaluate[any](string(axe)))
	webtest.MustStep(t, "loading axe-core", err)
	found := webtest.MustRunStep(ctx, t, "axe", chromedp.Evaluate[[]string](`axe.run(document.querySelector('parley-widget'),
		{ resultTypes: ['violations'] }).then(r => r.violations
			.filter(v => v.impact === 'serious' || v.impact === 'critical')
			.map(v => v.id + ': ' + v.help + ' (' + v.nodes.map(n => n.target.join(' ')).join(', ') + ')'))`,
		chromedp.EvalAwaitPromise))
	for _, v := range found {
		t.Errorf("axe: %s", v)
	}
}
