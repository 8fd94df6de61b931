package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/web/webtest"
	"github.com/parley/parley/widget"
)

// langSite serves a page of the tenant's site, on another origin than
// Parley, in the language of its query parameter lang, embedding the widget
// with the data-locale of its parameter locale when given.
func langSite(t *testing.T, b *webtest.Bundle, slug, segment string) *httptest.Server {
	t.Helper()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		locale := ""
		if l := q.Get("locale"); l != "" {
			locale = ` data-locale="` + html.EscapeString(l) + `"`
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html lang="%s"><head><title>Bikes</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><h1>Bikes</h1><script src="%s/widget.js" data-tenant="%s" data-segment="%s"%s async></script></body></html>`,
			html.EscapeString(q.Get("lang")), b.TS.URL, slug, segment, locale)
	}))
	t.Cleanup(site.Close)
	return site
}

// lastPrompt is the whole of the last request the scripted model got.
func lastPrompt(t *testing.T, llm *llmtest.OpenAI) string {
	t.Helper()
	reqs := llm.Requests()
	if len(reqs) == 0 {
		t.Fatal("the model got no request")
	}
	return string(reqs[len(reqs)-1].Body)
}

// TestWidgetLanguagesBrowser: a French page gets the widget's French words,
// and the visitor's messages carry the locale fr (the model is told to
// answer in French); data-locale wins over the page's language; an Arabic
// page lays the widget out right to left; and axe-core finds nothing
// serious in English, French and Arabic, on a phone and on a desktop.
func TestWidgetLanguagesBrowser(t *testing.T) {
	t.Parallel()
	axe := webtest.AxeScript(t)
	b, llm := webtest.SetupChat(t, nil, llmtest.Turn{Text: []string{"Nous ouvrons à **9 h**. ", "Voir https://bikes.example/horaires"}},
		llmtest.Turn{Text: []string{"Wir öffnen um 9 Uhr:\n\n- Montag\n- Dienstag"}},
		llmtest.Turn{Text: []string{"نفتح في الساعة 9."}})
	b.AtOwnAddress()
	ten := b.NewTenant(t, "starter")
	seg := map[string]any{"name": "Shop", "slug": "shop", "systemPrompt": "Help with the shop.", "welcomeMessage": "Bonjour !",
		"conversationStarters": []any{map[string]any{"text": "Horaires ?", "emoji": ""}},
		"formConfig": map[string]any{"enabled": true, "intent": "lead",
			"fields": []any{map[string]any{"name": "email", "label": "E-mail", "type": "email", "required": true}}}}
	if st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/segments", ten.Token, seg); st != 201 {
		t.Fatalf("segment: %d %v", st, body)
	}
	if st, body := b.Do(t, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"botName": "Spoke", "showAiBadge": true}); st != 200 {
		t.Fatalf("settings: %d %v", st, body)
	}
	site := langSite(t, b, ten.Slug, "shop")
	ctx := webtest.BrowserTab(t)
	const sr = widgetShadow
	str := webtest.ScriptsOf(ctx, t).Str
	// words is the widget's own words a visitor meets first, and the
	// language and direction of its panel.
	const words = `(() => { const r = ` + sr + `, p = r.querySelector('.panel');
		return [r.querySelector('.launcher').getAttribute('aria-label'), r.querySelector('textarea').placeholder,
			r.querySelector('form.compose button').innerText, r.querySelector('header .badge').innerText,
			p.getAttribute('aria-label'), p.lang, getComputedStyle(p).direction].join(' | '); })()`

	// A French page: French words, and the model told to answer in French.
	openWidgetPage(ctx, t, site.URL+"/?lang=fr")
	if got, want := str("French words", words), "Ouvrir le chat | Écrivez un message… | Envoyer | Assistant IA | Discuter avec Spoke | fr | ltr"; got != want {
		t.Errorf("on a French page the widget reads %q, want %q", got, want)
	}
	_, err := chromedp.Run(ctx, chromedp.Evaluate[any](sr+`.querySelector('.launcher').click(); `+sr+`.querySelector('.starters button').click()`))
	webtest.MustStep(t, "asking in French", err)
	webtest.WaitUntil(ctx, t, "the answer", `!!`+sr+`.querySelector('.votes')`)
	if p := lastPrompt(t, llm); !strings.Contains(p, "Reply in French.") {
		t.Errorf("the model was not told to answer in French: %.400s", p)
	}
	if got := str("votes", `[...`+sr+`.querySelectorAll('.votes button')].map(b => b.getAttribute('aria-label')).join(' | ')`); got != "Utile | Pas utile" {
		t.Errorf("the votes read %q", got)
	}

	// data-locale wins over the page's language, its region goes with the
	// messages (the model hears German), and the conversation goes on.
	openWidgetPage(ctx, t, site.URL+"/?lang=fr&locale=de-AT")
	if got, want := str("German words", words), "Chat öffnen | Nachricht schreiben… | Senden | KI-Assistent | Chat mit Spoke | de | ltr"; got != want {
		t.Errorf("with data-locale de-AT the widget reads %q, want %q", got, want)
	}
	askWidget(ctx, t, "Öffnungszeiten?", 2)
	if p := lastPrompt(t, llm); !strings.Contains(p, "Reply in German.") {
		t.Errorf("the model was not told to answer in German: %.400s", p)
	}

	// An Arabic page: Arabic words, laid out right to left: the launcher and
	// the panel on the left, the visitor's messages on the left and the
	// assistant's on the right, Send left of the message field.
	webtest.MustStep(t, "a desktop's screen", chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)))
	openWidgetPage(ctx, t, site.URL+"/?lang=ar")
	askWidget(ctx, t, "متى تفتحون؟", 3)
	if p := lastPrompt(t, llm); !strings.Contains(p, `Reply in the language of locale \"ar\".`) {
		t.Errorf("the model was not told the Arabic locale: %.400s", p)
	}
	if got, want := str("Arabic words", words), "فتح المحادثة | اكتب رسالة… | إرسال | مساعد ذكاء اصطناعي | الدردشة مع Spoke | ar | rtl"; got != want {
		t.Errorf("on an Arabic page the widget reads %q, want %q", got, want)
	}
	layout := webtest.MustRunStep(ctx, t, "the layout", chromedp.Evaluate[map[string]float64](`(() => { const r = `+sr+`;
		const box = (sel) => r.querySelector(sel).getBoundingClientRect();
		const me = [...r.querySelectorAll('.msg.me')].pop().getBoundingClientRect(), bot = [...r.querySelectorAll('.msg.bot')].pop().getBoundingClientRect();
		const log = box('.log');
		return { launcherLeft: box('.launcher').left, panelLeft: box('.panel').left, meLeft: me.left - log.left, botRight: log.right - bot.right,
			meRight: log.right - me.right, sendRight: box('form.compose button').right, fieldLeft: box('textarea').left }; })()`))
	if layout["launcherLeft"] != 20 || layout["panelLeft"] != 20 || layout["meLeft"] > 20 || layout["botRight"] > 30 ||
		layout["meRight"] < 30 || layout["sendRight"] > layout["fieldLeft"] {
		t.Errorf("right-to-left layout: %v", layout)
	}
	webtest.SaveScreenshot(ctx, t, "widget-arabic")

	// Hebrew by data-locale, right to left too; and a page without a lang
	// takes the browser's language.
	openWidgetPage(ctx, t, site.URL+"/?lang=en&locale=he-IL")
	if got, want := str("Hebrew words", words), "פתיחת הצ'אט | כתבו הודעה… | שליחה | עוזר בינה מלאכותית | צ'אט עם Spoke | he | rtl"; got != want {
		t.Errorf("with data-locale he-IL the widget reads %q, want %q", got, want)
	}
	ua := str("the user agent", `navigator.userAgent`)
	_, err = chromedp.Call(ctx, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{UserAgent: ua, AcceptLanguage: "es-MX,es"})
	webtest.MustStep(t, "a Spanish browser", err)
	openWidgetPage(ctx, t, site.URL+"/")
	if got, want := str("Spanish words", words), "Abrir el chat | Escribe un mensaje… | Enviar | Asistente de IA | Chatear con Spoke | es | ltr"; got != want {
		t.Errorf("in a Spanish browser, on a page without a lang, the widget reads %q, want %q", got, want)
	}
	_, err = chromedp.Call(ctx, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{UserAgent: ua})
	webtest.MustStep(t, "the browser's own language", err)

	// axe-core over the open widget, its answers and form, in each language
	// and on each screen.
	for _, size := range []struct {
		w, h int64
		opts []chromedp.EmulateViewportOption
	}{{390, 844, []chromedp.EmulateViewportOption{chromedp.EmulatePortrait, chromedp.EmulateMobile, chromedp.EmulateTouch}}, {1280, 800, nil}} {
		webtest.MustStep(t, "the screen", chromedp.Do(ctx, chromedp.EmulateViewport(size.w, size.h, size.opts...)))
		for _, lang := range []string{"en", "fr", "de", "es", "ar", "he"} {
			openWidgetPage(ctx, t, site.URL+"/?lang="+lang)
			_, err := chromedp.Run(ctx, chromedp.Evaluate[any](sr+`.querySelector('.launcher').click()`))
			webtest.MustStep(t, "opening the chat", err)
			webtest.WaitUntil(ctx, t, "the conversation", `!`+sr+`.querySelector('.panel').hidden && `+sr+`.querySelectorAll('.votes').length === 3`)
			for _, v := range webtest.AxeViolations(ctx, t, axe) {
				t.Errorf("axe, %s at %d px: %s", lang, size.w, v)
			}
		}
	}
}

// TestWidgetPseudoLocaleBrowser keeps every word of the widget in its
// table: in the test-only locale qps each word of the table reads
// "⟦English⟧", and through every state reached (closed, open, a streamed
// answer with votes, an answer that failed, the lead form refused, a
// person awaited then answering), any text, label, title, placeholder or
// alternative text of the widget that is neither so wrapped nor the
// owner's or the conversation's fails the test. On the way: Escape closes
// the panel and gives the launcher the focus back, Tab and Shift+Tab go
// round the open panel, and an answer and a person's message are each
// announced once, whole.
func TestWidgetPseudoLocaleBrowser(t *testing.T) {
	t.Parallel()
	const answer = "We open at nine on weekdays."
	b, llm := webtest.SetupChat(t, nil, llmtest.Turn{Text: []string{"We open ", "at nine ", "on weekdays."}})
	b.AtOwnAddress()
	ten := b.NewTenant(t, "starter")
	seg := map[string]any{"name": "Shop", "slug": "shop", "systemPrompt": "Help with the shop.", "welcomeMessage": "Hello there, rider.",
		"conversationStarters": []any{map[string]any{"text": "When are you open?", "emoji": ""}},
		"formConfig": map[string]any{"enabled": true, "intent": "lead",
			"fields": []any{map[string]any{"name": "email", "label": "Your email", "type": "email", "required": true}}}}
	if st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/segments", ten.Token, seg); st != 201 {
		t.Fatalf("segment: %d %v", st, body)
	}
	if st, body := b.Do(t, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"botName": "Spoke", "botTitle": "Bike helper", "showAiBadge": true,
		"bookingCtaEnabled": true, "bookingCtaConfig": map[string]any{"headline": "Book a test ride", "subtitle": "Thirty minutes"}}); st != 200 {
		t.Fatalf("settings: %d %v", st, body)
	}
	// The owner's and the conversation's words, shown as they are.
	known, _ := json.Marshal([]string{"Spoke", "Bike helper", "Hello there, rider.", "When are you open?", "Your email", "Book a test ride",
		"Thirty minutes", answer, "Are you there?", "I would like a person", "Maya", "Hi, Maya here."})
	site := langSite(t, b, ten.Slug, "shop")
	ctx := webtest.BrowserTab(t)
	const sr = widgetShadow
	js := webtest.ScriptsOf(ctx, t)
	run, str := js.Run, js.Str
	key := func(step string, k string, shift bool) {
		t.Helper()
		var opts []chromedp.KeyOption
		if shift {
			opts = append(opts, chromedp.KeyModifiers(chromedp.ModifierShift))
		}
		webtest.MustStep(t, step, chromedp.Do(ctx, chromedp.KeyEvent(k, opts...)))
	}

	openWidgetPage(ctx, t, site.URL+"/?lang=en&locale=qps")
	// Every string of the widget now and from now on: its text nodes and
	// the attributes read to a visitor, checked at once and on every change
	// (a typing indicator lasts an instant). The avatar's initial is the
	// bot name's; the start of a known text is the answer as it streams.
	run("watching the widget's words", `(() => {
		const root = `+sr+`, known = `+string(known)+`.sort((a, b) => b.length - a.length), bad = window.__untranslated = [];
		const check = (where, s) => {
			if (s.trim() === 'S' || known.some((k) => k.startsWith(s))) return;
			let rest = s.replace(/⟦[^⟧]*⟧/g, '');
			for (const k of known) rest = rest.split(k).join('');
			if (/\p{L}/u.test(rest)) bad.push(where + ': ' + JSON.stringify(s));
		};
		const attrs = ['aria-label', 'title', 'placeholder', 'alt', 'aria-description', 'aria-roledescription'];
		const visit = (n) => {
			if (n.nodeType === 3) { if (n.parentNode?.localName !== 'style') check('text of ' + (n.parentNode?.className || n.parentNode?.localName), n.data); return; }
			if (n.nodeType !== 1) return;
			for (const a of attrs) if (n.hasAttribute(a)) check(a + ' of ' + n.localName, n.getAttribute(a));
			n.childNodes.forEach(visit);
		};
		root.childNodes.forEach(visit);
		new MutationObserver((records) => { for (const r of records) {
			if (r.type === 'childList') r.addedNodes.forEach(visit);
			else if (r.type === 'characterData') visit(r.target);
			else if (attrs.includes(r.attributeName) && r.target.hasAttribute(r.attributeName)) check(r.attributeName + ' of ' + r.target.localName, r.target.getAttribute(r.attributeName));
		} }).observe(root, { subtree: true, childList: true, characterData: true, attributes: true });
		// What the widget announces to screen readers, each time.
		window.__announced = [];
		const said = root.querySelector('.sr[role=status]');
		new MutationObserver(() => { if (said.textContent) window.__announced.push(said.textContent); })
			.observe(said, { subtree: true, childList: true, characterData: true });
	})()`)
	if got := str("pseudo-localized", sr+`.querySelector('.launcher').getAttribute('aria-label')`); got != "⟦Open chat⟧" {
		t.Fatalf("the launcher in the pseudo-locale reads %q, want ⟦Open chat⟧", got)
	}

	// Open, then closed by Escape: the launcher has the focus back.
	run("opening the chat", sr+`.querySelector('.launcher').click()`)
	webtest.WaitUntil(ctx, t, "the panel, the message field focused", `!`+sr+`.querySelector('.panel').hidden && `+sr+`.activeElement === `+sr+`.querySelector('textarea')`)
	key("Escape", kb.Escape, false)
	webtest.WaitUntil(ctx, t, "the panel closed, the launcher focused", sr+`.querySelector('.panel').hidden && `+sr+`.activeElement === `+sr+`.querySelector('.launcher') &&
		`+sr+`.querySelector('.launcher').getAttribute('aria-expanded') === 'false'`)

	// Tab from the panel's last control goes to its first (the close
	// button), Shift+Tab from the first to the last (Send).
	run("opening the chat again", sr+`.querySelector('.launcher').click()`)
	webtest.WaitUntil(ctx, t, "the panel", `!`+sr+`.querySelector('.panel').hidden`)
	run("focusing Send", sr+`.querySelector('form.compose button').focus()`)
	key("Tab", kb.Tab, false)
	if got := str("after Tab", sr+`.activeElement?.getAttribute('aria-label') || ''`); got != "⟦Close chat⟧" {
		t.Errorf("Tab from Send went to %q, want the close button", got)
	}
	key("Shift+Tab", kb.Tab, true)
	if got := str("after Shift+Tab", sr+`.activeElement?.innerText || ''`); got != "⟦Send⟧" {
		t.Errorf("Shift+Tab from the close button went to %q, want Send", got)
	}

	// A streamed answer, with its votes, read to screen readers once, whole;
	// the log itself is not a live region.
	run("asking", sr+`.querySelector('.starters button').click()`)
	webtest.WaitUntil(ctx, t, "the answer", `!!`+sr+`.querySelector('.votes')`)
	if got := str("announced", `JSON.stringify(window.__announced) + ' ' + `+sr+`.querySelector('.log').getAttribute('aria-live')`); got != `["`+answer+`"] off` {
		t.Errorf("announced %s, want the answer once and the log not live", got)
	}

	// The lead form refused (a bad address past the browser's own check).
	run("sending a bad address", `(() => { const f = `+sr+`.querySelector('form.lead'); f.noValidate = true;
		f.elements.email.value = 'not-an-address'; f.querySelector('button').click(); })()`)
	webtest.WaitUntil(ctx, t, "the form's refusal", `[...`+sr+`.querySelectorAll('form.lead .field-error')].some(e => e.innerText !== '')`)

	// An answer that failed: the network is down.
	setOffline(ctx, t, true)
	askWidgetNoAnswer(ctx, t, "Are you there?")
	webtest.WaitUntil(ctx, t, "the failure", sr+`.querySelectorAll('.msg.error').length === 1 && !!`+sr+`.querySelector('.msg.error:last-child button')`)
	setOffline(ctx, t, false)

	// A person awaited, then answering.
	var conv string
	if err := b.DB.Pool().QueryRow(t.Context(), `SELECT id FROM conversations WHERE tenant_id = $1`, ten.ID).Scan(&conv); err != nil {
		t.Fatal(err)
	}
	move(t, b, ten.ID, conv, parley.StatusEscalated)
	askWidgetNoAnswer(ctx, t, "I would like a person")
	webtest.WaitUntil(ctx, t, "the wait", `!`+sr+`.querySelector('.presence').hidden`)
	reply(t, b, ten.ID, conv, "Hi, Maya here.")
	webtest.WaitUntil(ctx, t, "Maya's message", `!!`+sr+`.querySelector('.msg.person')`)
	webtest.WaitUntil(ctx, t, "Maya's message announced", `window.__announced.length >= 2`)
	if got := str("announced", `JSON.stringify(window.__announced.slice(1))`); got != `["Maya: Hi, Maya here."]` {
		t.Errorf("announced %s, want Maya's message", got)
	}
	webtest.SaveScreenshot(ctx, t, "widget-pseudo-locale")

	for _, s := range webtest.MustRunStep(ctx, t, "the widget's words", chromedp.Evaluate[[]string](`window.__untranslated`)) {
		t.Errorf("a word outside the widget's table: %s", s)
	}
	if n := len(llm.Requests()); n != 1 {
		t.Errorf("%d model calls, want the one answer", n)
	}
}

// askWidgetNoAnswer sends text from the open widget, expecting no answer.
func askWidgetNoAnswer(ctx context.Context, t *testing.T, text string) {
	t.Helper()
	_, err := chromedp.Run(ctx, chromedp.Evaluate[any](`(() => { const r = `+widgetShadow+`;
		r.querySelector('textarea').value = `+webtest.JSString(text)+`; r.querySelector('form.compose button').click(); })()`))
	webtest.MustStep(t, "asking "+text, err)
}

// TestWidgetMarkdownBrowser runs the widget's Markdown renderer in
// Chromium, through its preview mode (a welcome message shown from settings
// handed to it, nothing sent): lists, emphasis, code, and what must stay
// text.
func TestWidgetMarkdownBrowser(t *testing.T) {
	t.Parallel()
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/widget.js" {
			w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
			w.Write(widget.Script)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><html lang="en"><head><title>Markdown</title></head><body>
<div id="pv" style="position: relative; height: 600px" data-settings='{"name": "Shop", "bot": {"name": "Spoke"}, "launcher": {},
	"segment": {"welcomeMessage": "Hi", "conversationStarters": []}, "endpoints": {}}'></div>
<script src="/widget.js" data-tenant="shop" data-preview="pv"></script></body></html>`)
	}))
	t.Cleanup(page.Close)
	ctx := webtest.BrowserTab(t)
	webtest.MustStep(t, "opening the page", chromedp.Do(ctx, chromedp.Navigate(page.URL)))
	webtest.WaitUntil(ctx, t, "the preview", `!!document.querySelector('#pv parley-widget')?.shadowRoot?.querySelector('.msg.bot')`)
	cases := []struct{ name, in, want string }{
		{"paragraphs and lines", "One\ntwo\n\nThree", "<p>One<br>two</p><p>Three</p>"},
		{"bullets", "Colours:\n- **red** and *dark*\n* _blue_\n\nDone", "<p>Colours:</p><ul><li><strong>red</strong> and <em>dark</em></li><li><em>blue</em></li></ul><p>Done</p>"},
		{"numbered", "1. one\n2. `two`\n\n3. three", "<ol><li>one</li><li><code>two</code></li><li>three</li></ol>"},
		{"numbered from 4", "4. four\n5. five", `<ol start="4"><li>four</li><li>five</li></ol>`},
		{"a continued item", "- first\n  more\n- second", "<ul><li>first<br>more</li><li>second</li></ul>"},
		{"nested emphasis", "- **bold *and italic* [link](https://x.example/a)**", `<ul><li><strong>bold <em>and italic</em> <a href="https://x.example/a" target="_blank" rel="noopener noreferrer">link</a></strong></li></ul>`},
		{"a script in code", "Run `<script>window.pwned=1</script>` now", "<p>Run <code>&lt;script&gt;window.pwned=1&lt;/script&gt;</code> now</p>"},
		{"a code block", "Try:\n```html\n<b>**not bold**</b>\n\n- not a list\n```\nok", "<p>Try:</p><pre><code>&lt;b&gt;**not bold**&lt;/b&gt;\n\n- not a list</code></pre><p>ok</p>"},
		{"an unclosed code block", "```\n<img src=x onerror=window.pwned=2>", "<pre><code>&lt;img src=x onerror=window.pwned=2&gt;</code></pre>"},
		{"unclosed markers", "**half *half _half `half", "<p>**half *half _half `half</p>"},
		{"a javascript: link", "[press](javascript:window.pwned=3) and [x](data:text/html,hi)", "<p>[press](javascript:window.pwned=3) and [x](data:text/html,hi)</p>"},
		{"snake_case and arithmetic", "my_var_name is 2 * 3 * 4", "<p>my_var_name is 2 * 3 * 4</p>"},
		{"a bare link", "See https://x.example/a_b_c.", `<p>See <a href="https://x.example/a_b_c" target="_blank" rel="noopener noreferrer">https://x.example/a_b_c</a>.</p>`},
		{"markup as text", `<img src=x onerror="window.pwned=4"> & <b>`, "<p>&lt;img src=x onerror=\"window.pwned=4\"&gt; &amp; &lt;b&gt;</p>"},
	}
	for _, c := range cases {
		settings, _ := json.Marshal(map[string]any{"name": "Shop", "bot": map[string]any{"name": "Spoke"}, "launcher": map[string]any{},
			"segment": map[string]any{"welcomeMessage": c.in, "conversationStarters": []any{}}, "endpoints": map[string]any{}})
		got := webtest.MustRunStep(ctx, t, c.name, chromedp.Evaluate[string](`(() => { const pv = document.getElementById('pv');
			pv.dataset.settings = `+webtest.JSString(string(settings))+`; pv.dispatchEvent(new Event('parley-preview'));
			return pv.querySelector('parley-widget').shadowRoot.querySelector('.msg.bot').innerHTML; })()`))
		if got != c.want {
			t.Errorf("%s: %q renders\n%s\nwant\n%s", c.name, c.in, got, c.want)
		}
	}
	if got := webtest.MustRunStep(ctx, t, "scripts", chromedp.Evaluate[string](`String(window.pwned || '') + document.querySelectorAll('#pv parley-widget img, script:not([src])').length`)); got != "0" {
		t.Errorf("markup ran or became elements: %q", got)
	}
}
