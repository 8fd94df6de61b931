package web_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/web/webtest"
)

// TestWidgetLeadBrowser: the lead form as a visitor meets it in the widget,
// on a page of another origin (issue 38). The form shows after the
// assistant's first answer; a bad email is told beside the email field
// (aria-invalid, aria-describedby), cleared as the visitor fixes it; the
// form sent thanks the visitor and stays sent on the site's next page; the
// submission joins the chat's conversation, which the dashboard shows named
// by the name given. A segment that shows the form only when asked shows it
// once the assistant offers it (offer_contact_form).
func TestWidgetLeadBrowser(t *testing.T) {
	t.Parallel()
	b, _ := webtest.SetupChat(t, nil,
		llmtest.Turn{Text: []string{"We service every brand of bike."}},
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: "offer_contact_form", Arguments: []string{"{}"}}}},
		llmtest.Turn{Text: []string{"Leave your details in the form below."}})
	b.AtOwnAddress()
	ten := b.OwnedTenant(t, "starter")
	fields := []any{map[string]any{"name": "full_name", "label": "Name", "type": "text", "required": true},
		map[string]any{"name": "email", "label": "Email", "type": "email", "required": true}}
	for _, seg := range []map[string]any{
		{"name": "Shop", "slug": "shop", "systemPrompt": "Help with the shop.", "welcomeMessage": "Hi!",
			"formConfig": map[string]any{"enabled": true, "intent": "a service", "confirmationMessage": "Thanks, we will call you back.",
				"fields": fields}},
		{"name": "Asked", "slug": "asked", "systemPrompt": "Help.",
			"formConfig": map[string]any{"enabled": true, "intent": "a call back", "display": "when_asked", "fields": fields}},
	} {
		if st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/segments", ten.Token, seg); st != 201 {
			t.Fatalf("segment: %d %v", st, body)
		}
	}
	site := tenantSite(t, b, ten.Slug, "shop")
	ctx := webtest.BrowserTab(t)
	const sr = widgetShadow
	js := webtest.ScriptsOf(ctx, t)
	run, str := js.Run, js.Str
	ask := func(text string) {
		t.Helper()
		run("asking", `(() => { const s = `+sr+`; s.querySelector('form.compose textarea').value = '`+text+`';
			s.querySelector('form.compose button').click(); })()`)
	}
	// field is one lead form field's state: its value, aria-invalid,
	// aria-describedby and the text of the error it points to.
	field := func(name string) string {
		t.Helper()
		return str("field "+name, `(() => { const s = `+sr+`, i = s.querySelector('form.lead').elements.`+name+`;
			const d = i.getAttribute('aria-describedby');
			return [i.getAttribute('aria-invalid'), d, d ? s.getElementById(d).innerText : '', s.getElementById('pf-`+name+`-error').innerText].join('|'); })()`)
	}

	openWidgetPage(ctx, t, site.URL)
	run("opening the chat", sr+`.querySelector('.launcher').click()`)
	webtest.WaitUntil(ctx, t, "the panel", `!`+sr+`.querySelector('.panel').hidden`)
	if got := str("form before asking", `String(!!`+sr+`.querySelector('form.lead'))`); got != "false" {
		t.Error("the form shows before the visitor asked anything")
	}
	ask("Do you service e-bikes?")
	webtest.WaitUntil(ctx, t, "the answer, then the form", `!!`+sr+`.querySelector('.votes') && !!`+sr+`.querySelector('form.lead')`)
	if got := str("form after the answer", `String(`+sr+`.querySelector('.log').lastElementChild.matches('form.lead'))`); got != "true" {
		t.Error("the form is not below the first answer")
	}

	// A bad email: its problem, in the visitor's words, beside the email field, nothing else.
	run("a bad email", `(() => { const f = `+sr+`.querySelector('form.lead');
		f.elements.full_name.value = 'Ada Lovelace'; f.elements.email.value = 'ada@'; f.querySelector('button.go').click(); })()`)
	webtest.WaitUntil(ctx, t, "the email's error", sr+`.getElementById('pf-email-error').innerText !== ''`)
	if got := field("email"); got != "true|pf-email-error|Enter a valid email address.|Enter a valid email address." {
		t.Errorf("email field = %q, want invalid, described by its error", got)
	}
	if got := field("full_name"); got != "|||" {
		t.Errorf("name field = %q, want valid, no error", got)
	}
	if got := str("focus", ``+sr+`.activeElement?.name || ''`); got != "email" {
		t.Errorf("focus on %q, want the email field", got)
	}
	if got := str("no error box", `String(`+sr+`.querySelectorAll('.msg.error').length)`); got != "0" {
		t.Errorf("%s error boxes in the conversation, want none", got)
	}
	webtest.SaveScreenshot(ctx, t, "widget-lead-error")
	run("loading axe-core", string(webtest.AxeScript(t)))
	found := webtest.MustRunStep(ctx, t, "axe", chromedp.Evaluate[[]string](`axe.run(document.querySelector('parley-widget'),
		{ resultTypes: ['violations'] }).then(r => r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
			.map(v => v.id + ': ' + v.help + ' (' + v.nodes.map(n => n.target.join(' ')).join(', ') + ')'))`,
		chromedp.EvalAwaitPromise))
	for _, v := range found {
		t.Errorf("axe, the form with its error: %s", v)
	}

	// Fixing the field clears its error at once; the form then goes.
	run("fixing the email", `(() => { const i = `+sr+`.querySelector('form.lead').elements.email;
		i.value = 'ada@example.com'; i.dispatchEvent(new Event('input', { bubbles: true })); })()`)
	if got := field("email"); got != "|||" {
		t.Errorf("email field once fixed = %q, want no error", got)
	}
	run("sending", sr+`.querySelector('form.lead button.go').click()`)
	webtest.WaitUntil(ctx, t, "the thanks", `!`+sr+`.querySelector('form.lead') && [...`+sr+`.querySelectorAll('.msg.bot')].some(m => m.innerText === 'Thanks, we will call you back.')`)
	if got := str("nothing red", `String(`+sr+`.querySelectorAll('.msg.error, .field-error, .lead-error').length)`); got != "0" {
		t.Errorf("%s error elements left after a good send", got)
	}

	// The site's next page: the form is still sent.
	openWidgetPage(ctx, t, site.URL+"/pricing")
	run("reopening the chat", sr+`.querySelector('.launcher').click()`)
	webtest.WaitUntil(ctx, t, "the restored conversation", `!!`+sr+`.querySelector('.votes')`)
	if got := str("sent on the next page", `String(!!`+sr+`.querySelector('form.lead')) + ' ' +
		[...`+sr+`.querySelectorAll('.msg.bot')].filter(m => m.innerText === 'Thanks, we will call you back.').length`); got != "false 1" {
		t.Errorf("next page: form shown and thanks count = %q, want false 1", got)
	}

	// The lead is on its conversation, and the conversation names the visitor.
	var conv, sub string
	if err := b.DB.Pool().QueryRow(context.Background(), `SELECT s.conversation_id::text, s.id::text FROM submissions s
		JOIN conversations c ON c.id = s.conversation_id AND c.tenant_id = s.tenant_id
		WHERE s.tenant_id = $1 AND s.channel = 'form' AND s.input->>'email' = 'ada@example.com'`, ten.ID).Scan(&conv, &sub); err != nil {
		t.Fatalf("the submission and its conversation: %v", err)
	}
	admin := b.NewAdminClient(t)
	admin.SignIn(ten)
	p := admin.Get("/admin/conversations/" + conv)
	if p.Status != 200 || p.Text("#conversation-visitor a") != "Ada Lovelace" || !strings.Contains(p.Text("#conversation-submissions"), "a service") ||
		p.Doc.Find(`#conversation-submissions a[href="/admin/submissions/`+sub+`"]`).Length() != 1 {
		t.Errorf("conversation page %d: visitor %q, submissions %q", p.Status, p.Text("#conversation-visitor"), p.Text("#conversation-submissions"))
	}
	p = admin.Get("/admin/submissions/" + sub)
	if p.Text("#submission-channel") != "Chat widget form" || p.Doc.Find(`#open-conversation[href="/admin/conversations/`+conv+`"]`).Length() != 1 {
		t.Errorf("submission page: channel %q, conversation link %d", p.Text("#submission-channel"), p.Doc.Find("#open-conversation").Length())
	}

	// Only when asked: no form until the assistant offers it.
	asked := tenantSite(t, b, ten.Slug, "asked")
	openWidgetPage(ctx, t, asked.URL)
	run("opening the other chat", sr+`.querySelector('.launcher').click()`)
	webtest.WaitUntil(ctx, t, "the other panel", `!`+sr+`.querySelector('.panel').hidden`)
	if got := str("not offered yet", `String(!!`+sr+`.querySelector('form.lead'))`); got != "false" {
		t.Error("a form shown only when asked shows before the assistant offered it")
	}
	ask("Can someone call me?")
	webtest.WaitUntil(ctx, t, "the offer and the form", `!!`+sr+`.querySelector('.votes') && !!`+sr+`.querySelector('form.lead')`)
	if got := str("offer", `[...`+sr+`.querySelectorAll('.msg.bot')].pop().innerText`); got != "Leave your details in the form below." {
		t.Errorf("the answer with the form = %q", got)
	}
}
