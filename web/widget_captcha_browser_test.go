package web_test

import (
	"slices"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/web/webtest"
)

// TestWidgetBrowserCaptcha drives the bot challenge in Chromium, with a fake
// provider on an origin of its own and a fake siteverify wired into the
// server: nothing is loaded from the provider for a tenant without the
// gate; with it, a challenge that fails to load says so and can be retried,
// every chat message and form post carries a fresh token the server
// verifies, and a refused token says so plainly, with a retry that works.
func TestWidgetBrowserCaptcha(t *testing.T) {
	t.Parallel()
	const secret = "captcha-secret-of-the-shop"
	provider := webtest.NewChallengeProvider(t)
	verify := webtest.NewSiteverify(t, secret)
	b, llm := webtest.SetupChat(t, map[string]string{"PARLEY_CAPTCHA_VERIFY_URL": verify.URL,
		"PARLEY_CAPTCHA_SCRIPT_URL": provider.URL + "/turnstile/v0/api.js?render=explicit"},
		llmtest.Turn{Text: []string{"No challenge here."}},
		llmtest.Turn{Text: []string{"First answer."}},
		llmtest.Turn{Text: []string{"Second answer."}},
		llmtest.Turn{Text: []string{"Third answer."}})
	b.AtOwnAddress()
	ctx := webtest.BrowserTab(t)
	const sr = widgetShadow
	str := func(t *testing.T, step, js string) string {
		t.Helper()
		return webtest.MustRunStep(ctx, t, step, chromedp.Evaluate[string](js))
	}
	run := func(t *testing.T, step, js string) {
		t.Helper()
		_, err := chromedp.Run(ctx, chromedp.Evaluate[any](js))
		webtest.MustStep(t, step, err)
	}
	// The last bot message's text, without its votes.
	lastBot := `[...` + sr + `.querySelectorAll('.msg.bot')].pop()?.firstChild?.textContent`
	say := func(t *testing.T, text string) {
		t.Helper()
		// The send button is a plain click away only once a token is ready.
		webtest.WaitUntil(ctx, t, "the send button", `!`+sr+`.querySelector('form.compose button').disabled`)
		run(t, "sending "+text, `(() => { const i = `+sr+`.querySelector('textarea'); i.value = `+webtest.JSString(text)+`;
			`+sr+`.querySelector('form.compose button').click(); })()`)
	}

	t.Run("OffLoadsNothing", func(t *testing.T) {
		plain := b.NewTenant(t, "starter")
		openWidgetPage(ctx, t, tenantSite(t, b, plain.Slug, "default").URL)
		run(t, "opening the chat", sr+`.querySelector('.launcher').click()`)
		say(t, "Hello")
		webtest.WaitUntil(ctx, t, "the answer", lastBot+` === 'No challenge here.'`)
		if got := str(t, "the page", `String(document.querySelectorAll('script').length) + ' ' + String(!!window.turnstile) + ' ' +
			String(document.querySelector('parley-widget').children.length) + ' ' + String(!`+sr+`.querySelector('.captcha').hidden)`); got != "1 false 0 false" {
			t.Errorf("scripts, turnstile, light-DOM children of the widget, challenge row = %q, want the page's one script and nothing else", got)
		}
		if n := provider.Hits.Load(); n != 0 {
			t.Errorf("%d requests to the challenge provider from a tenant without the gate", n)
		}
		if n := len(verify.Seen()); n != 0 {
			t.Errorf("%d siteverify calls for a tenant without the gate", n)
		}
	})
	if t.Failed() {
		return
	}

	ten := b.NewTenant(t, "starter")
	seg := map[string]any{"name": "Shop", "slug": "shop", "systemPrompt": "Help.", "welcomeMessage": "Hi!",
		"formConfig": map[string]any{"enabled": true, "intent": "lead", "confirmationMessage": "We will call you.",
			"fields": []any{map[string]any{"name": "email", "label": "Email", "type": "email", "required": true}}}}
	if st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/segments", ten.Token, seg); st != 201 {
		t.Fatalf("segment: %d %v", st, body)
	}
	if st, body := b.Do(t, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{
		"captchaEnabled": true, "captchaSiteKey": "0x4AAA-shop-site", "captchaSecretKey": secret}); st != 200 {
		t.Fatalf("captcha settings: %d %v", st, body)
	}
	site := tenantSite(t, b, ten.Slug, "shop")
	issued := func(t *testing.T) []string {
		t.Helper()
		return webtest.MustRunStep(ctx, t, "issued tokens", chromedp.Evaluate[[]string](`window.fakeTurnstileIssued || []`))
	}

	t.Run("LoadFailureAndRetry", func(t *testing.T) {
		provider.Down.Store(true)
		openWidgetPage(ctx, t, site.URL)
		if n := provider.Hits.Load(); n != 0 {
			t.Errorf("%d requests to the provider before the chat was opened", n)
		}
		run(t, "opening the chat", sr+`.querySelector('.launcher').click()`)
		webtest.WaitUntil(ctx, t, "the load failure", sr+`.querySelector('.captcha [role=status]').innerText.startsWith('The check that you are not a robot could not load.')`)
		if got := str(t, "send", `String(`+sr+`.querySelector('form.compose button').disabled)`); got != "true" {
			t.Error("the send button is enabled without a token")
		}
		provider.Down.Store(false)
		run(t, "retrying", sr+`.querySelector('.captcha button').click()`)
		webtest.WaitUntil(ctx, t, "a token", `!`+sr+`.querySelector('form.compose button').disabled`)
		if got := str(t, "challenge", `document.querySelector('parley-widget > [slot=captcha] .fake-challenge')?.innerText || ''`); got != "Fake challenge for 0x4AAA-shop-site" {
			t.Errorf("challenge rendered as %q, want it in the widget's light-DOM slot with the tenant's site key", got)
		}
		if got := str(t, "scripts", `String(document.querySelectorAll('script[src*="/turnstile/v0/api.js"]').length) + ' ' + `+sr+`.querySelector('.captcha [role=status]').innerText`); got != "1 " {
			t.Errorf("provider scripts and note after the retry = %q, want one script and no note", got)
		}
		webtest.SaveScreenshot(ctx, t, "widget-captcha")
	})
	if t.Failed() {
		return
	}

	t.Run("FreshTokenEachMessage", func(t *testing.T) {
		say(t, "When are you open?")
		webtest.WaitUntil(ctx, t, "the first answer", lastBot+` === 'First answer.'`)
		say(t, "And on Sunday?")
		webtest.WaitUntil(ctx, t, "the second answer", lastBot+` === 'Second answer.'`)
		got, all := verify.Seen(), issued(t)
		if len(got) != 2 || got[0] == got[1] {
			t.Fatalf("siteverify saw %q, want two different tokens", got)
		}
		for _, tok := range got {
			if !slices.Contains(all, tok) {
				t.Errorf("verified token %q is not one the provider issued (%q)", tok, all)
			}
		}
		if n := len(llm.Requests()); n != 3 {
			t.Errorf("%d model calls, want 3", n)
		}
	})

	t.Run("LeadForm", func(t *testing.T) {
		run(t, "filling the form", `(() => { const f = `+sr+`.querySelector('form.lead');
			f.elements.email.value = 'ada@example.com'; f.querySelector('button').click(); })()`)
		webtest.WaitUntil(ctx, t, "the confirmation", `!`+sr+`.querySelector('form.lead') && [...`+sr+`.querySelectorAll('.msg.bot')].some(m => m.innerText === 'We will call you.')`)
		got := verify.Seen()
		if len(got) != 3 || slices.Contains(got[:2], got[2]) || !slices.Contains(issued(t), got[2]) {
			t.Errorf("siteverify saw %q, want a third, fresh token from the provider", got)
		}
		if n := b.Count(t, `SELECT count(*) FROM submissions WHERE tenant_id = $1 AND channel = 'form'`, ten.ID); n != 1 {
			t.Errorf("%d form submissions, want 1", n)
		}
	})

	t.Run("Refused", func(t *testing.T) {
		verify.Refuse.Store(true)
		say(t, "Do you rent bikes?")
		webtest.WaitUntil(ctx, t, "the refusal", sr+`.querySelector('.msg.error')?.innerText.startsWith('We could not confirm that you are not a robot. Please try again.')`)
		if n := len(llm.Requests()); n != 3 {
			t.Errorf("%d model calls, want none for the refused message", n)
		}
		webtest.SaveScreenshot(ctx, t, "widget-captcha-refused")
		verify.Refuse.Store(false)
		run(t, "retrying", sr+`.querySelector('.msg.error button').click()`)
		webtest.WaitUntil(ctx, t, "the answer after the retry", lastBot+` === 'Third answer.' && !`+sr+`.querySelector('.msg.error')`)
		got := verify.Seen()
		if len(got) != 5 || got[3] == got[4] || slices.Contains(got[:3], got[4]) {
			t.Errorf("siteverify saw %q, want the refused token and then a fresh one", got)
		}
		if n := len(llm.Requests()); n != 4 {
			t.Errorf("%d model calls, want 4", n)
		}
	})
}
