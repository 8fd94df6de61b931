package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parley/parley/web/webtest"
)

// TestDocsBrowser is the API reference in Chromium, as an integrator meets
// it: a documentation address they guess leads to /docs; on a phone and on
// a laptop it scrolls no sideways, the Content-Security-Policy refuses
// nothing and axe-core finds no serious or critical violation; an API
// token pasted into Authorize and one "Try it out" of GET /tenants/{slug}
// show this instance's real answer.
func TestDocsBrowser(t *testing.T) {
	t.Parallel()
	axe := webtest.AxeScript(t)
	b := webtest.Setup(t)
	ten := b.NewTenant(t, "starter")

	ctx := webtest.BrowserTab(t)
	webtest.WatchCSP(ctx, t)
	webtest.MustStep(t, "opening /api/docs on a phone", chromedp.Do(ctx, chromedp.EmulateViewport(390, 844),
		chromedp.Navigate(b.TS.URL+"/api/docs")))
	if loc := webtest.MustRunStep(ctx, t, "location", chromedp.Location()); loc != b.TS.URL+"/docs" {
		t.Errorf("/api/docs led to %s, want /docs", loc)
	}
	webtest.WaitUntil(ctx, t, "the reference rendered", `document.querySelectorAll('.swagger-ui .opblock-tag').length > 10`)
	check := func(size string) {
		t.Helper()
		if over := webtest.MustRunStep(ctx, t, "width", chromedp.Evaluate[int](`document.documentElement.scrollWidth - innerWidth`)); over > 0 {
			t.Errorf("%s: the reference scrolls sideways by %d px", size, over)
		}
		for _, v := range webtest.AxeViolations(ctx, t, axe) {
			t.Errorf("%s: axe: %s", size, v)
		}
		for _, v := range webtest.CSPViolations(ctx, t) {
			t.Errorf("%s: Content-Security-Policy: %s", size, v)
		}
		webtest.SaveScreenshot(ctx, t, "docs "+size)
	}
	if server := webtest.MustRunStep(ctx, t, "the server", chromedp.Evaluate[string](`document.getElementById('servers').value`)); server != b.TS.URL {
		t.Errorf("the reference sends its requests to %q, want this instance %s", server, b.TS.URL)
	}

	// Authorize with the token, then try GET /tenants/{slug}.
	const op = `#operations-Tenant-getTenant`
	js := func(step, script string) {
		t.Helper()
		webtest.MustRunStep(ctx, t, step, chromedp.Evaluate[any](script))
	}
	js("opening Authorize", `document.querySelector('.swagger-ui .btn.authorize').click()`)
	webtest.WaitUntil(ctx, t, "the Authorize dialog", `!!document.getElementById('auth-bearer-value')`)
	webtest.MustStep(t, "pasting the token", chromedp.Do(ctx, webtest.KeyIn(chromedp.ID("auth-bearer-value"), ten.Token)))
	js("authorizing", `document.getElementById('auth-bearer-value').closest('form').querySelector('button[type=submit]').click()`)
	webtest.WaitUntil(ctx, t, "authorized", `[...document.querySelectorAll('.dialog-ux h6')].some(h => h.textContent === 'Authorized')`)
	js("closing the dialog", `document.querySelector('.dialog-ux .btn-done').click()`)
	js("opening the Tenant operations", `document.querySelector('#operations-tag-Tenant').click()`)
	webtest.WaitUntil(ctx, t, "GET /tenants/{slug}", `!!document.querySelector('`+op+` .opblock-summary-control')`)
	js("opening GET /tenants/{slug}", `document.querySelector('`+op+` .opblock-summary-control').click()`)
	webtest.WaitUntil(ctx, t, "Try it out", `!!document.querySelector('`+op+` .try-out__btn')`)
	js("trying it out", `document.querySelector('`+op+` .try-out__btn').click()`)
	webtest.WaitUntil(ctx, t, "the slug field", `!!document.querySelector('`+op+` tr[data-param-name="slug"] input')`)
	js("clearing the slug's example", `document.querySelector('`+op+` tr[data-param-name="slug"] input').select()`)
	webtest.MustStep(t, "typing the slug", chromedp.Do(ctx, webtest.KeyIn(chromedp.CSS(op+` tr[data-param-name="slug"] input`), ten.Slug)))
	// The field reports its value when it loses the focus (else 0.3 s
	// after the last key).
	js("leaving the slug field", `document.activeElement.blur()`)
	js("executing", `document.querySelector('`+op+` .execute').click()`)
	webtest.WaitUntil(ctx, t, "the answer", `!!document.querySelector('`+op+` .live-responses-table tbody .response-col_status')`)
	status := webtest.MustRunStep(ctx, t, "the answer's status", chromedp.Evaluate[string](`document.querySelector('`+op+` .live-responses-table tbody .response-col_status').textContent.trim()`))
	body := webtest.MustRunStep(ctx, t, "the answer's body", chromedp.Evaluate[string](`document.querySelector('`+op+` .live-responses-table tbody .response-col_description pre').textContent`))
	if status != "200" || !strings.Contains(body, `"slug": "`+ten.Slug+`"`) || !strings.Contains(body, ten.Name) {
		t.Errorf("Try it out answered %q: %.300s", status, body)
	}
	curl := webtest.MustRunStep(ctx, t, "the curl line", chromedp.Evaluate[string](`document.querySelector('`+op+` .curl-command').textContent`))
	if !strings.Contains(curl, "Authorization: Bearer "+ten.Token) || !strings.Contains(curl, b.TS.URL+"/tenants/"+ten.Slug) {
		t.Errorf("the request's curl line = %q", curl)
	}
	check("phone")

	webtest.MustStep(t, "a laptop", chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)))
	check("laptop")
}
