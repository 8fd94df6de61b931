package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/web/webtest"
)

// TestWidgetRefusedOriginBrowser: on a page of a site the tenant has not
// allowed, the widget shows visitors nothing (no element in the page) and
// tells the site's developer in the console which origin to allow; the
// owner's overview lists the site (0 serious axe findings on a phone), and
// "Allow this site" makes the widget work there at the next page load, a
// question answered.
func TestWidgetRefusedOriginBrowser(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil, llmtest.Turn{Text: []string{"We open at 9."}})
	b.AtOwnAddress()
	ten := b.OwnedTenant(t, "starter")
	if st, body := b.Do(t, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"allowedDomains": []string{"shop.example.com"}}); st != 200 {
		t.Fatalf("allowedDomains: %d %v", st, body)
	}
	site := tenantSite(t, b, ten.Slug, "default")
	ctx := webtest.BrowserTab(t)
	_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: `window.__warns = []; const warn = console.warn; console.warn = (...a) => { window.__warns.push(a.join(' ')); warn(...a); };`})
	webtest.MustStep(t, "recording the console's warnings", err)
	_, err = chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{}})
	webtest.MustStep(t, "dropping the tab's own address", err)
	webtest.MustStep(t, "opening the refused page", chromedp.Do(ctx, chromedp.Navigate(site.URL)))
	webtest.WaitUntil(ctx, t, "the developer's warning", `window.__warns.some(w => w.startsWith('Parley widget:'))`)
	got := webtest.MustRunStep(ctx, t, "what the page shows", chromedp.Evaluate[[]string](`[String(document.querySelectorAll('parley-widget').length),
		window.__warns.find(w => w.startsWith('Parley widget:'))]`))
	if got[0] != "0" {
		t.Errorf("%s widget elements in the refused page, want none", got[0])
	}
	if !strings.Contains(got[1], site.URL) || !strings.Contains(got[1], "Allow this site") {
		t.Errorf("the console's warning %q names neither the origin %s nor where to allow it", got[1], site.URL)
	}

	// The owner, on a phone, sees the site on the overview.
	webtest.MustStep(t, "a phone's screen", chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulatePortrait, chromedp.EmulateMobile, chromedp.EmulateTouch)))
	webtest.OpenSignedIn(ctx, t, b, ten, "/admin")
	if listed := webtest.MustRunStep(ctx, t, "the refused sites", chromedp.Evaluate[string](
		`[...document.querySelectorAll('#refused-site-list .refused-origin')].map(e => e.innerText).join(' ')`)); listed != site.URL {
		t.Fatalf("the overview lists %q, want %s", listed, site.URL)
	}
	for _, v := range webtest.AxeViolations(ctx, t, webtest.AxeScript(t)) {
		t.Errorf("overview with a refused site, 390 px: axe: %s", v)
	}
	webtest.SaveScreenshot(ctx, t, "overview-refused-sites-phone")
	if status := webtest.SubmitForm(ctx, t, `#refused-site-list button[aria-label^="Allow this site"]`); status != http.StatusOK {
		t.Fatalf("after allowing: status %d", status)
	}
	if flash := webtest.MustRunStep(ctx, t, "the flash", chromedp.Evaluate[string](`document.querySelector('.flash.ok')?.innerText || ''`)); flash != site.URL+" is allowed: its visitors see your chat now." {
		t.Errorf("after allowing, the flash says %q", flash)
	}

	// The page loaded again shows the launcher, and the chat answers.
	openWidgetPage(ctx, t, site.URL)
	const sr = widgetShadow
	_, err = chromedp.Run(ctx, chromedp.Evaluate[any](`(() => { `+sr+`.querySelector('.launcher').click();
		const i = `+sr+`.querySelector('textarea'); i.value = 'When are you open?'; `+sr+`.querySelector('form.compose button').click(); })()`))
	webtest.MustStep(t, "asking", err)
	webtest.WaitUntil(ctx, t, "the answer", `[...`+sr+`.querySelectorAll('.msg')].some(m => m.innerText.includes('We open at 9.'))`)
	if n := len(llm.Requests()); n != 1 {
		t.Errorf("%d model calls, want the one question's", n)
	}
}
