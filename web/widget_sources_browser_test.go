package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parley/parley/web/webtest"
)

// TestWidgetSourcesAndHandoverBrowser: with no language model, a visitor
// asks on a page of another origin and reads the knowledge base's answer in
// plain words, with the entry it rests on as a "Sources" link (kept on the
// next page); then "Talk to a person" hands the conversation over through
// the segment's ESCALATE_TO_HUMAN tool, and the button goes while a person
// is awaited.
func TestWidgetSourcesAndHandoverBrowser(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	b.AtOwnAddress()
	ten := b.NewTenant(t, "starter")
	b.MustDo(t, 201, "POST", "/tenants/"+ten.Slug+"/corpus", ten.Token, map[string]any{"title": "Opening hours",
		"content": "The shop opens at nine every weekday.", "sourceUrl": "https://bikes.example/hours"})
	b.MustDo(t, 201, "POST", "/tenants/"+ten.Slug+"/corpus", ten.Token, map[string]any{"title": "Returns",
		"content": "Returns are free for 30 days."})
	b.MustDo(t, 201, "POST", "/tenants/"+ten.Slug+"/tools", ten.Token, map[string]any{"name": "Human", "description": "Hand over",
		"type": "ESCALATE_TO_HUMAN", "config": map[string]any{"handoffMessage": "Sam from the shop will answer here."}})
	site := langSite(t, b, ten.Slug, "")
	ctx := webtest.BrowserTab(t)
	const sr = widgetShadow
	str := webtest.ScriptsOf(ctx, t).Str

	openWidgetPage(ctx, t, site.URL+"/?lang=en")
	_, err := chromedp.Run(ctx, chromedp.Evaluate[any](sr+`.querySelector('.launcher').click()`))
	webtest.MustStep(t, "opening the widget", err)
	if got := str("the button", sr+`.querySelector('button.handover').hidden ? 'hidden' : `+sr+`.querySelector('button.handover').innerText`); got != "Talk to a person" {
		t.Errorf("the hand-over button = %q", got)
	}
	askWidget(ctx, t, "When do you open?", 1)
	webtest.WaitUntil(ctx, t, "the sources", `!!`+sr+`.querySelector('.msg.bot .sources a')`)
	answer := str("the answer", `[...`+sr+`.querySelectorAll('.msg.bot')].pop().innerText`)
	if !strings.Contains(answer, "The shop opens at nine every weekday.") || strings.Contains(answer, "[1]") ||
		strings.Contains(answer, "language model") || strings.Contains(answer, "Returns") {
		t.Errorf("the answer reads %q", answer)
	}
	link := str("the link", `(() => { const a = `+sr+`.querySelector('.msg.bot .sources a'); return a.parentNode.innerText + ' -> ' + a.href; })()`)
	if link != "Sources: Opening hours -> https://bikes.example/hours" {
		t.Errorf("the sources line = %q", link)
	}

	// Another page of the site: the answer comes back with its sources.
	openWidgetPage(ctx, t, site.URL+"/?lang=en&page=2")
	if got := str("the sources again", `(() => { const a = `+sr+`.querySelector('.msg.bot .sources a'); return a ? a.href : ''; })()`); got != "https://bikes.example/hours" {
		t.Errorf("on the next page the sources link = %q", got)
	}

	// The way to a person, without a model.
	_, err = chromedp.Run(ctx, chromedp.Evaluate[any](sr+`.querySelector('.launcher').click(); `+sr+`.querySelector('button.handover').click()`))
	webtest.MustStep(t, "asking for a person", err)
	webtest.WaitUntil(ctx, t, "the hand-over", `[...`+sr+`.querySelectorAll('.msg.bot')].some(m => m.innerText.includes('Sam from the shop will answer here.'))`)
	webtest.WaitUntil(ctx, t, "the button gone", sr+`.querySelector('button.handover').hidden`)
	if got := str("the presence", sr+`.querySelector('.presence').innerText`); got != "Waiting for a person…" {
		t.Errorf("presence = %q", got)
	}
	var status string
	if err := b.DB.Pool().QueryRow(t.Context(), `SELECT status FROM conversations WHERE tenant_id = $1 ORDER BY created_at DESC LIMIT 1`,
		ten.ID).Scan(&status); err != nil || status != "ESCALATED" {
		t.Errorf("the conversation's status = %q (%v), want ESCALATED", status, err)
	}
}
