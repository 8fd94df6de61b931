package admin_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/web/webtest"
)

// TestBrowserCorrection: on a phone, an owner opens "Improve this answer"
// under an answer of a transcript (inline, the page's refresh held while it
// is open), writes the right answer and saves it; then in the test chat
// asks the question again and sees the new entry cited as the answer's
// source, with "Improve this answer" under that answer too. The page fits
// the screen, the policy refuses nothing, axe-core finds nothing serious.
func TestBrowserCorrection(t *testing.T) {
	t.Parallel()
	axe := webtest.AxeScript(t)
	b, llm := webtest.SetupChat(t, nil, llmtest.Turn{Text: []string{"I am not sure we go that far."}})
	ten := b.OwnedTenant(t, "scale")
	b.MustDo(t, 201, "POST", "/tenants/"+ten.Slug+"/corpus", ten.Token,
		map[string]any{"title": "Delivery", "content": "We deliver bikes assembled within 25 km of the shop."})
	r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "Do you deliver to Lyon?", "sessionId": "fix-browser"},
		map[string]string{"X-Agent-Model": "corrections-test"})
	if r.Status != 200 {
		t.Fatalf("chat: %d %v", r.Status, r.Body)
	}
	conv, answer := r.Body["conversationId"].(string), r.Body["messageId"].(string)

	ctx := webtest.BrowserTab(t)
	webtest.MustStep(t, "a phone's screen", chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile)))
	webtest.WatchCSP(ctx, t)
	webtest.OpenSignedIn(ctx, t, b, ten, "/admin/conversations/"+conv)
	str := webtest.ScriptsOf(ctx, t).Str

	// Inline under the answer.
	webtest.MustStep(t, "opening the form", chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#correction-"+answer+" a"))))
	webtest.WaitUntil(ctx, t, "the form under the answer", `!!document.querySelector('#message-`+answer+` form.correction-form textarea')`)
	if got := str("inline", `location.pathname + ' | ' + document.getElementById('correction-question-`+answer+`').innerText`); got != "/admin/conversations/"+conv+" | Do you deliver to Lyon?" {
		t.Errorf("the form shows %q, want it inline with the question", got)
	}
	// Nothing scrolls sideways, and the open form takes the transcript's
	// width (an answer's bubble is narrower).
	if got := str("width", `(() => { const w = el => el.getBoundingClientRect().width;
		return [document.documentElement.scrollWidth <= window.innerWidth,
			w(document.querySelector('#message-`+answer+` form.correction-form')) >= 0.9 * w(document.querySelector('ol.transcript'))].join(' '); })()`); got != "true true" {
		t.Errorf("fits the screen, form as wide as the transcript = %s", got)
	}
	for _, v := range webtest.AxeViolations(ctx, t, axe) {
		t.Errorf("axe, the form open: %s", v)
	}
	webtest.SaveScreenshot(ctx, t, "correction form phone")
	right := "We deliver to Lyon on Thursdays, for 35 euros."
	webtest.MustStep(t, "writing the right answer", chromedp.Do(ctx, webtest.FillField("answer-"+answer, right),
		chromedp.Click(chromedp.CSS(`#message-`+answer+` form.correction-form button[type=submit]`))))
	webtest.WaitUntil(ctx, t, "saved", `!!document.querySelector('#correction-`+answer+` .correction-saved')`)
	if got := str("saved", `document.querySelector('#correction-`+answer+` .correction-saved').innerText`); !strings.Contains(got, "Saved to your knowledge base as Do you deliver to Lyon?") {
		t.Errorf("after saving: %q", got)
	}

	// The test chat: the question again, the new entry cited.
	llm.Push(llmtest.Turn{Text: []string{"Yes, on Thursdays, for 35 euros [1]."}})
	webtest.MustStep(t, "opening the test chat", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin/test-chat")))
	const sr = `document.querySelector('#test-chat parley-widget').shadowRoot`
	webtest.WaitUntil(ctx, t, "the chat", `!!`+sr+`?.querySelector('textarea')`)
	_, err := chromedp.Run(ctx, chromedp.Evaluate[any](`(() => { `+sr+`.querySelector('textarea').value = 'do you deliver to Lyon';
		`+sr+`.querySelector('form.compose button').click(); })()`))
	webtest.MustStep(t, "asking again", err)
	const lastBot = `[...` + sr + `.querySelectorAll('.msg.bot')].pop()`
	webtest.WaitUntil(ctx, t, "the answer", `!!`+lastBot+`?.querySelector('details.used')`)
	if got := str("answer", lastBot+`.querySelector('p').innerText + ' | ' + (`+lastBot+`.querySelector('.sources')?.innerText || 'no sources')`); got != "Yes, on Thursdays, for 35 euros. | Sources: Do you deliver to Lyon?" {
		t.Errorf("the test chat's answer = %q, want the correction cited", got)
	}
	if got := str("improve", lastBot+`.querySelector('a.improve')?.getAttribute('href') || 'none'`); !strings.HasPrefix(got, b.TS.URL+"/admin/conversations/") ||
		!strings.HasSuffix(got, "/correction?back=test-chat") {
		t.Errorf("the test chat's \"Improve this answer\" = %q", got)
	}
	for _, v := range webtest.AxeViolations(ctx, t, axe) {
		t.Errorf("axe, the test chat: %s", v)
	}
	webtest.SaveScreenshot(ctx, t, "correction cited in the test chat phone")
	if v := webtest.CSPViolations(ctx, t); len(v) > 0 {
		t.Errorf("refused by the Content-Security-Policy: %v", v)
	}
}
