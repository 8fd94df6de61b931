package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/golang-jwt/jwt/v5"

	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/views"
	"github.com/parley/parley/web/webtest"
)

// scriptedSite serves the pages of a tenant's site (another origin than
// Parley's) that script the widget: its own "Chat with us" button, no
// launcher (data-launcher="none"), the snippet the dashboard documents
// (views.ParleySnippet) and, before widget.js,
// the calls in queued (JavaScript, by page path). The widget's script tag
// is there twice, as a site that pasted the embed code twice has it.
func scriptedSite(t *testing.T, b *webtest.Bundle, slug string, queued map[string]string) *httptest.Server {
	t.Helper()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		tag := fmt.Sprintf(`<script src="%s/widget.js" data-tenant="%s" data-launcher="none" async></script>`, b.TS.URL, slug)
		fmt.Fprintf(w, `<!doctype html><html lang="en"><head><title>Bikes</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><h1>Bikes</h1><button id="chat-with-us" type="button">Chat with us</button>
<script>%s
window.seen = [];
%s
document.getElementById('chat-with-us').addEventListener('click', function () { Parley.open(); });
</script>%s%s</body></html>`, views.ParleySnippet, queued[r.URL.Path], tag, tag)
	}))
	t.Cleanup(site.Close)
	return site
}

// TestWidgetAPIBrowser scripts the widget from a page of another origin in
// Chromium: the site's own button opens it through Parley.open() (there is
// no launcher), calls queued before widget.js loaded run once it has, in
// both forms; the page hears open, message, lead and close; identify makes
// the next message carry the signed-in visitor's token; a second copy of
// the script changes nothing.
func TestWidgetAPIBrowser(t *testing.T) {
	t.Parallel()
	b, _ := webtest.SetupChat(t, nil, llmtest.Turn{Text: []string{"We open at ", "9."}}, llmtest.Turn{Text: []string{"Hello Ada."}})
	b.AtOwnAddress()
	ten := b.NewTenant(t, "starter")
	patchDefaultSegment(t, b, ten, map[string]any{"welcomeMessage": "Hi!",
		"formConfig": map[string]any{"enabled": true, "intent": "lead", "confirmationMessage": "Thanks!",
			"fields": []any{map[string]any{"name": "email", "label": "Email", "type": "email", "required": true}}}})
	b.Exec(t, `UPDATE tenants SET visitor_auth_mode = 'jwt' WHERE id = $1`, ten.ID)
	token := webtest.SignVisitor(t, jwt.SigningMethodHS256, b.VisitorKey(t, ten.ID),
		jwt.MapClaims{"sub": "ext-ada", "name": "Ada", "exp": time.Now().Add(time.Hour).Unix()})

	site := scriptedSite(t, b, ten.Slug, map[string]string{
		// Listeners queued both ways.
		"/": `Parley('on', 'open', function () { seen.push('open'); });
Parley.on('close', function () { seen.push('close'); });
Parley.on('message', function (m) { seen.push('message ' + m.role + ' ' + m.text + ' ' + (m.id ? 'id' : 'no id')); });
Parley('on', 'lead', function (l) { seen.push('lead ' + l.source + ' ' + l.submissionId); });
Parley.on('nonsense', function () {});
var dropped = function () { seen.push('dropped listener'); };
Parley.on('open', dropped); Parley('off', 'open', dropped);`,
		// An action queued as a method.
		"/queued": `Parley.on('open', function () { seen.push('open'); });
Parley.open();`,
	})

	ctx := webtest.BrowserTab(t)
	const sr = widgetShadow
	str := webtest.ScriptsOf(ctx, t).Str
	run := func(step, js string) {
		t.Helper()
		_, err := chromedp.Run(ctx, chromedp.Evaluate[any](js, chromedp.EvalAwaitPromise))
		webtest.MustStep(t, step, err)
	}
	openWidgetHost(ctx, t, site.URL)
	if got := str("what loaded", `String(document.querySelectorAll('parley-widget').length) + ' ' + String(!!`+sr+`.querySelector('.launcher')) + ' ' +
		String(`+sr+`.querySelector('.panel').hidden) + ' ' + typeof Parley.open + ' ' + String(Parley.q === undefined)`); got != "1 false true function true" {
		t.Errorf("widgets, a launcher, panel hidden, Parley.open, Parley.q = %q, want one widget, no launcher, hidden, the API, no queue", got)
	}

	// The site's own button opens the chat; the focus goes into it.
	webtest.MustStep(t, "clicking Chat with us", chromedp.Do(ctx, chromedp.Click(chromedp.ID("chat-with-us"))))
	webtest.WaitUntil(ctx, t, "the open panel and the open event", `!`+sr+`.querySelector('.panel').hidden && seen.includes('open')`)
	if got := str("heard", `seen.join('|')`); got != "open" {
		t.Errorf("events heard on opening = %q, want open once (and not the listener taken off)", got)
	}
	if got := str("welcome", sr+`.querySelector('.msg.bot').innerText`); got != "Hi!" {
		t.Errorf("welcome = %q", got)
	}
	// The panel sits where a launcher would have been: not above an empty corner.
	if got := str("panel bottom", `String(innerHeight - `+sr+`.querySelector('.panel').getBoundingClientRect().bottom)`); got != "20" {
		t.Errorf("the panel is %s px above the bottom, want 20 without a launcher", got)
	}

	// send asks as the visitor would; the page hears the complete answer once.
	run("sending", `Parley.send('When are you open?')`)
	webtest.WaitUntil(ctx, t, "the message event", `seen.some(s => s.startsWith('message'))`)
	if got := str("the visitor's message", `[...`+sr+`.querySelectorAll('.msg.me')].map(m => m.innerText).join('|')`); got != "When are you open?" {
		t.Errorf("the visitor's messages = %q", got)
	}
	if got := str("messages heard", `seen.filter(s => s.startsWith('message')).join('|')`); got != "message assistant We open at 9. id" {
		t.Errorf("message events = %q", got)
	}

	// The lead form sent: the page hears the submission's id, nothing of its values.
	run("sending the form", `(() => { const f = `+sr+`.querySelector('form.lead'); f.elements.email.value = 'ada@example.com'; f.querySelector('button').click(); })()`)
	webtest.WaitUntil(ctx, t, "the lead event", `seen.some(s => s.startsWith('lead'))`)
	var submission string
	webtest.MustStep(t, "reading the submission", b.DB.Pool().QueryRow(context.Background(),
		`SELECT id::text FROM submissions WHERE tenant_id = $1 AND input->>'email' = 'ada@example.com'`, ten.ID).Scan(&submission))
	if got := str("lead heard", `seen.find(s => s.startsWith('lead'))`); got != "lead form "+submission {
		t.Errorf("lead event = %q, want the submission %s", got, submission)
	}

	// identify: the next message carries the signed-in visitor's token.
	// The server verifies it, knows the visitor from then on, and links the
	// conversation's anonymous visitor to them.
	linkedTo := `SELECT coalesce(w.external_id, '') FROM conversations c JOIN visitors v ON v.id = c.visitor_id
		LEFT JOIN visitors w ON w.id = v.linked_visitor_id WHERE c.tenant_id = $1`
	if got := b.Count(t, `SELECT count(*) FROM visitors WHERE tenant_id = $1 AND external_id = 'ext-ada'`, ten.ID); got != 0 {
		t.Fatal("the signed-in visitor is known before identify")
	}
	run("identifying", `Parley.identify({ visitorToken: `+webtest.JSString(token)+` })`)
	run("sending again", `Parley('send', 'Who am I?')`)
	webtest.WaitUntil(ctx, t, "the second answer", `seen.filter(s => s.startsWith('message')).length === 2`)
	var linked string
	webtest.MustStep(t, "reading the conversation's visitor", b.DB.Pool().QueryRow(context.Background(), linkedTo, ten.ID).Scan(&linked))
	if linked != "ext-ada" {
		t.Errorf("after identify, the conversation's visitor is linked to %q, want the token's ext-ada", linked)
	}

	// close hides the panel, is heard, and gives the focus back to the site's button.
	run("closing", `Parley.close()`)
	webtest.WaitUntil(ctx, t, "the close event", `seen.includes('close') && `+sr+`.querySelector('.panel').hidden`)
	if got := str("focus", `document.activeElement.id`); got != "chat-with-us" {
		t.Errorf("after closing, the focus is on %q, want the site's button", got)
	}
	run("toggling", `Parley.toggle()`)
	webtest.WaitUntil(ctx, t, "the panel again", `!`+sr+`.querySelector('.panel').hidden`)

	// A call queued as a method before the script loaded opens the chat once it has.
	openWidgetHost(ctx, t, site.URL+"/queued")
	webtest.WaitUntil(ctx, t, "the queued open", `!`+sr+`.querySelector('.panel').hidden && seen.includes('open')`)
	if got := str("focus in the chat", `String(`+sr+`.activeElement === `+sr+`.querySelector('textarea'))`); got != "true" {
		t.Error("the chat opened by a queued call does not have the focus")
	}
	if got := str("restored", `[...`+sr+`.querySelectorAll('.msg.me')].map(m => m.innerText).join('|')`); got != "When are you open?|Who am I?" {
		t.Errorf("the conversation on the next page = %q", got)
	}
}

// patchDefaultSegment changes the tenant's default segment through the API.
func patchDefaultSegment(t *testing.T, b *webtest.Bundle, ten webtest.Tenant, patch map[string]any) {
	t.Helper()
	var id string
	webtest.MustStep(t, "reading the default segment", b.DB.Pool().QueryRow(context.Background(),
		`SELECT id::text FROM segments WHERE tenant_id = $1 AND is_default`, ten.ID).Scan(&id))
	if st, body := b.Do(t, "PATCH", "/tenants/"+ten.Slug+"/segments/"+id, ten.Token, patch); st != 200 {
		t.Fatalf("default segment: %d %v", st, body)
	}
}

// openWidgetHost opens a page of a site that scripts the widget and waits
// for the widget (drawn without a launcher).
func openWidgetHost(ctx context.Context, t *testing.T, url string) {
	t.Helper()
	webtest.MustStep(t, "opening "+url, chromedp.Do(ctx, chromedp.Navigate(url)))
	webtest.WaitUntil(ctx, t, "the widget", `!!document.querySelector('parley-widget')?.shadowRoot?.querySelector('.panel')`)
}

// testChatShadow is the shadow root of the widget in the dashboard's test chat.
const testChatShadow = `document.querySelector('#test-chat parley-widget').shadowRoot`

// TestWidgetTestChatBrowser: the dashboard's test chat is the real widget,
// inline, with the segment's welcome and starters; an answer shows what the
// bot used; after a reload the conversation is still there; it is stored
// as a test; and on a phone axe-core finds nothing serious.
func TestWidgetTestChatBrowser(t *testing.T) {
	t.Parallel()
	axe := webtest.AxeScript(t)
	b, _ := webtest.SetupChat(t, nil, llmtest.Turn{Text: []string{"We open at **9**. [1]"}})
	ten := b.OwnedTenant(t, "starter")
	patchDefaultSegment(t, b, ten, map[string]any{"welcomeMessage": "Hi! Ask me about bikes.",
		"conversationStarters": []any{map[string]any{"text": "When are you open?", "emoji": "🕘"}}})
	if st, body := b.Do(t, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"botName": "Spoke", "primaryColor": "#0f766e"}); st != 200 {
		t.Fatalf("settings: %d %v", st, body)
	}
	if st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/corpus", ten.Token, map[string]any{"title": "Opening hours", "content": "We open at 9."}); st != 201 {
		t.Fatalf("corpus: %d %v", st, body)
	}
	ctx := webtest.BrowserTab(t)
	webtest.MustStep(t, "a phone's screen", chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)))
	webtest.OpenSignedIn(ctx, t, b, ten, "/admin/test-chat")
	const sr = testChatShadow
	str := webtest.ScriptsOf(ctx, t).Str
	webtest.WaitUntil(ctx, t, "the widget", `!!document.querySelector('#test-chat parley-widget')?.shadowRoot?.querySelector('.starters button')`)
	if got := str("the widget's look", sr+`.querySelector('header .name').innerText + ' | ' + `+sr+`.querySelector('.msg.bot').innerText + ' | ' +
		`+sr+`.querySelector('.starters button').innerText + ' | ' + String(!!`+sr+`.querySelector('.launcher')) + ' | ' + getComputedStyle(`+sr+`.querySelector('header')).backgroundColor`); got != "Spoke | Hi! Ask me about bikes. | 🕘 When are you open? | false | rgb(15, 118, 110)" {
		t.Errorf("the test chat shows %q", got)
	}
	if got := str("inline", `(() => { const p = `+sr+`.querySelector('.panel').getBoundingClientRect(), c = document.getElementById('test-chat').getBoundingClientRect();
		return [p.left === c.left, p.top === c.top, p.width === c.width, getComputedStyle(`+sr+`.querySelector('.panel')).position].join(' '); })()`); got != "true true true static" {
		t.Errorf("the panel in the page (left, top, width as its box, position) = %q", got)
	}

	_, err := chromedp.Run(ctx, chromedp.Evaluate[any](sr+`.querySelector('.starters button').click()`))
	webtest.MustStep(t, "asking a starter", err)
	webtest.WaitUntil(ctx, t, "the answer and what the bot used", `!!`+sr+`.querySelector('.msg.bot details.used')`)
	answer := `[...` + sr + `.querySelectorAll('.msg.bot')].pop()`
	if got := str("answer", answer+`.querySelector('p').innerText + ' | ' + `+answer+`.querySelector('strong').innerText + ' | ' + `+answer+`.querySelector('details.used summary').innerText`); got != "We open at 9. | 9 | What the bot used" {
		t.Errorf("the answer = %q", got)
	}
	if got := str("used", answer+`.querySelector('details.used li')?.textContent || 'no entry'`); got != "Opening hourscited in the answer" {
		t.Errorf("what the bot used names %q, want the entry marked cited", got)
	}
	// The test chat shows every entry cited as a source, with or without a
	// source address (visitors see those with one).
	if got := str("sources", answer+`.querySelector('.sources')?.innerText || 'none'`); got != "Sources: Opening hours" {
		t.Errorf("the answer's sources = %q", got)
	}
	if got := str("no votes", `String(!!`+sr+`.querySelector('.votes'))`); got != "false" {
		t.Error("a test answer offers votes")
	}
	var session string
	var test bool
	webtest.MustStep(t, "reading the conversation", b.DB.Pool().QueryRow(context.Background(),
		`SELECT session_id, is_test FROM conversations WHERE tenant_id = $1`, ten.ID).Scan(&session, &test))
	if !strings.HasPrefix(session, "test-") || !test {
		t.Errorf("the conversation: session %q, test %v", session, test)
	}

	// Reloaded, the conversation is still there, with what the bot used.
	webtest.MustStep(t, "reloading", chromedp.Do(ctx, chromedp.Reload()))
	webtest.WaitUntil(ctx, t, "the conversation again", sr+`?.querySelector('.msg.me')?.innerText === 'When are you open?' && !!`+sr+`.querySelector('details.used')`)
	if got := str("starters after a conversation", `String(!!`+sr+`.querySelector('.starters'))`); got != "false" {
		t.Error("starters offered again in a conversation under way")
	}
	for _, v := range webtest.AxeViolations(ctx, t, axe) {
		t.Errorf("axe at 390 px: %s", v)
	}
	webtest.SaveScreenshot(ctx, t, "test-chat-widget")

	// Start over: a new conversation, with the welcome and starters again.
	webtest.MustStep(t, "starting over", chromedp.Do(ctx, chromedp.Click(chromedp.ID("test-chat-reset"))))
	webtest.WaitUntil(ctx, t, "a new conversation", `!`+sr+`.querySelector('.msg.me') && !!`+sr+`.querySelector('.starters button')`)
}
