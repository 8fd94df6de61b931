package web

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parley/parley/agent/outbound/stripe/stripetest"
)

// The payments page in Chromium against the fake Stripe: a bad key is
// refused next to its field, a test key connects (test mode shown, the key
// never), "Test connection" shows the account Stripe names, the fixed
// amount is saved, and Disconnect deletes the connector after a question.
func TestAdminPaymentsBrowser(t *testing.T) {
	t.Parallel()
	stripe := stripetest.Start(t)
	stripe.AddKey(testStripeKey, "Acme Bikes")
	b, _ := setupChat(t, map[string]string{"PARLEY_STRIPE_API_URL": stripe.URL})
	ten := b.ownedTenant(t, "starter")
	ctx := browserTab(t)
	watchCSP(ctx, t)
	openSignedIn(ctx, t, b, ten, "/admin/integrations/payments")

	mustStep(t, "filling a publishable key", chromedp.Do(ctx,
		fillField("secretKey", "pk_test_51NotASecretKey000"),
	))
	if status := submitForm(ctx, t, "#save-payments"); status != http.StatusUnprocessableEntity {
		t.Fatalf("a publishable key: status %d, want 422", status)
	}
	if msg := mustRunStep(ctx, t, "key error", chromedp.Text(chromedp.ID("err-secretKey"))); !strings.Contains(msg, "publishable key") {
		t.Errorf("key error = %q", msg)
	}

	mustStep(t, "filling the form", chromedp.Do(ctx,
		fillField("secretKey", testStripeKey),
		fillField("currency", "eur"),
		fillField("defaultAmount", "49,50"),
		fillField("defaultDescription", "Workshop deposit"),
	))
	if status := submitForm(ctx, t, "#save-payments"); status != http.StatusOK {
		t.Fatalf("connecting: status %d", status)
	}
	if msg := okFlash(ctx, t); !strings.Contains(msg, "Stripe connected") {
		t.Errorf("flash = %q", msg)
	}
	if mode := mustRunStep(ctx, t, "mode", chromedp.Text(chromedp.ID("payments-mode"))); !strings.Contains(mode, "Test mode") {
		t.Errorf("mode = %q", mode)
	}
	if key := mustRunStep(ctx, t, "key", chromedp.Text(chromedp.ID("payments-key"))); !strings.Contains(key, "abcd") {
		t.Errorf("key = %q", key)
	}
	if html := mustRunStep(ctx, t, "page", chromedp.OuterHTML(chromedp.CSS("html"))); strings.Contains(html, "51FakeKey") {
		t.Error("the key is shown")
	}
	if v := mustRunStep(ctx, t, "amount", chromedp.Value(chromedp.ID("defaultAmount"))); v != "49.50" {
		t.Errorf("amount field = %q", v)
	}

	calls := len(stripe.Received())
	mustStep(t, "testing", chromedp.Do(ctx, chromedp.Click(chromedp.ID("test-payments"))))
	waitUntil(ctx, t, "the test's result", `(document.getElementById('payment-test-result')?.innerText || '').includes('Acme Bikes')`)
	if got := stripe.Received(); len(got) != calls+1 || got[len(got)-1].Path != "/v1/account" {
		t.Errorf("Stripe got %d requests, want GET /v1/account", len(got)-calls)
	}

	// Pausing keeps the key.
	mustStep(t, "pausing", chromedp.Do(ctx, chromedp.Click(chromedp.ID("isActive"))))
	if status := submitForm(ctx, t, "#save-payments"); status != http.StatusOK {
		t.Fatalf("pausing: status %d", status)
	}
	p, err := b.db.PaymentConnector(context.Background(), ten.ID)
	mustStep(t, "reading the connector", err)
	if plain, err := b.box.Open(p.SealedKey); err != nil || string(plain) != testStripeKey || p.IsActive || p.DefaultAmount == nil || *p.DefaultAmount != 4950 {
		t.Errorf("after pausing: active %v, amount %v, key kept %v", p.IsActive, p.DefaultAmount, string(plain) == testStripeKey)
	}

	if msg := clickAndConfirm(ctx, t, "#remove-payments"); !strings.Contains(msg, "Disconnect Stripe?") {
		t.Errorf("confirmation = %q", msg)
	}
	waitUntil(ctx, t, "the page", `document.readyState === 'complete' && (document.querySelector('.flash.ok') || {}).textContent === 'Stripe disconnected.'`)
	if n := b.count(t, `SELECT count(*) FROM payment_connectors WHERE tenant_id = $1`, ten.ID); n != 0 {
		t.Errorf("the connector outlived Disconnect")
	}
	for _, v := range cspViolations(ctx, t) {
		t.Errorf("refused by the Content-Security-Policy: %s", v)
	}
}
