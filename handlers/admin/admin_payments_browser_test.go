package admin_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parley/parley/agent/outbound/stripe/stripetest"
	"github.com/parley/parley/web/webtest"
)

// The payments page in Chromium against the fake Stripe: a bad key is
// refused next to its field, a test key connects (test mode shown, the key
// never), "Test connection" shows the account Stripe names, the fixed
// amount is saved, and Disconnect deletes the connector after a question.
func TestAdminPaymentsBrowser(t *testing.T) {
	t.Parallel()
	stripe := stripetest.Start(t)
	stripe.AddKey(webtest.StripeTestKey, "Acme Bikes")
	b, _ := webtest.SetupChat(t, map[string]string{"PARLEY_STRIPE_API_URL": stripe.URL})
	ten := b.OwnedTenant(t, "starter")
	ctx := webtest.BrowserTab(t)
	webtest.WatchCSP(ctx, t)
	webtest.OpenSignedIn(ctx, t, b, ten, "/admin/integrations/payments")

	webtest.MustStep(t, "filling a publishable key", chromedp.Do(ctx,
		webtest.FillField("secretKey", "pk_test_51NotASecretKey000"),
	))
	if status := webtest.SubmitForm(ctx, t, "#save-payments"); status != http.StatusUnprocessableEntity {
		t.Fatalf("a publishable key: status %d, want 422", status)
	}
	if msg := webtest.MustRunStep(ctx, t, "key error", chromedp.Text(chromedp.ID("err-secretKey"))); !strings.Contains(msg, "publishable key") {
		t.Errorf("key error = %q", msg)
	}

	webtest.MustStep(t, "filling the form", chromedp.Do(ctx,
		webtest.FillField("secretKey", webtest.StripeTestKey),
		webtest.FillField("currency", "eur"),
		webtest.FillField("defaultAmount", "49,50"),
		webtest.FillField("defaultDescription", "Workshop deposit"),
	))
	if status := webtest.SubmitForm(ctx, t, "#save-payments"); status != http.StatusOK {
		t.Fatalf("connecting: status %d", status)
	}
	if msg := webtest.OkFlash(ctx, t); !strings.Contains(msg, "Stripe connected") {
		t.Errorf("flash = %q", msg)
	}
	if mode := webtest.MustRunStep(ctx, t, "mode", chromedp.Text(chromedp.ID("payments-mode"))); !strings.Contains(mode, "Test mode") {
		t.Errorf("mode = %q", mode)
	}
	if key := webtest.MustRunStep(ctx, t, "key", chromedp.Text(chromedp.ID("payments-key"))); !strings.Contains(key, "abcd") {
		t.Errorf("key = %q", key)
	}
	if html := webtest.MustRunStep(ctx, t, "page", chromedp.OuterHTML(chromedp.CSS("html"))); strings.Contains(html, "51FakeKey") {
		t.Error("the key is shown")
	}
	if v := webtest.MustRunStep(ctx, t, "amount", chromedp.Value(chromedp.ID("defaultAmount"))); v != "49.50" {
		t.Errorf("amount field = %q", v)
	}

	calls := len(stripe.Received())
	webtest.MustStep(t, "testing", chromedp.Do(ctx, chromedp.Click(chromedp.ID("test-payments"))))
	webtest.WaitUntil(ctx, t, "the test's result", `(document.getElementById('payment-test-result')?.innerText || '').includes('Acme Bikes')`)
	if got := stripe.Received(); len(got) != calls+1 || got[len(got)-1].Path != "/v1/account" {
		t.Errorf("Stripe got %d requests, want GET /v1/account", len(got)-calls)
	}

	// Pausing keeps the key. The click waits for htmx to settle after the
	// test's swap (a click while the page still moves can miss the box), and
	// the box must then be clear before the form is sent.
	webtest.WaitUntil(ctx, t, "the page to settle", `!document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling')`)
	webtest.MustStep(t, "pausing", chromedp.Do(ctx, chromedp.Click(chromedp.ID("isActive"))))
	webtest.WaitUntil(ctx, t, "the box to be cleared", `!document.getElementById('isActive').checked`)
	if status := webtest.SubmitForm(ctx, t, "#save-payments"); status != http.StatusOK {
		t.Fatalf("pausing: status %d", status)
	}
	p, err := b.DB.PaymentConnector(context.Background(), ten.ID)
	webtest.MustStep(t, "reading the connector", err)
	if plain, err := b.Box.Open(p.SealedKey); err != nil || string(plain) != webtest.StripeTestKey || p.IsActive || p.DefaultAmount == nil || *p.DefaultAmount != 4950 {
		t.Errorf("after pausing: active %v, amount %v, key kept %v", p.IsActive, p.DefaultAmount, string(plain) == webtest.StripeTestKey)
	}

	if msg := webtest.ClickAndConfirm(ctx, t, "#remove-payments"); !strings.Contains(msg, "Disconnect Stripe?") {
		t.Errorf("confirmation = %q", msg)
	}
	webtest.WaitUntil(ctx, t, "the page", `document.readyState === 'complete' && (document.querySelector('.flash.ok') || {}).textContent === 'Stripe disconnected.'`)
	if n := b.Count(t, `SELECT count(*) FROM payment_connectors WHERE tenant_id = $1`, ten.ID); n != 0 {
		t.Errorf("the connector outlived Disconnect")
	}
	for _, v := range webtest.CSPViolations(ctx, t) {
		t.Errorf("refused by the Content-Security-Policy: %s", v)
	}
}
