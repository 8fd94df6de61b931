package api_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/parley/parley/agent/outbound/stripe/stripetest"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/web/webtest"
)

// The payment connector's API: a key is required to connect and is never
// echoed (hasSecretKey, mode, last 4 only) and is stored sealed; bad input
// gets 400 with the fields named, at each limit and one past it; the test
// asks the fake Stripe; scopes and tenants are kept apart.
func TestPaymentConnectorAPI(t *testing.T) {
	t.Parallel()
	stripe := stripetest.Start(t)
	stripe.AddKey(webtest.StripeTestKey, "Acme Test")
	b, _ := webtest.SetupChat(t, map[string]string{"PARLEY_STRIPE_API_URL": stripe.URL})
	ten := b.NewTenant(t, "starter")
	other := b.NewTenant(t, "starter")
	path := "/tenants/" + ten.Slug + "/integrations/payments"

	st, body := b.Do(t, "GET", path, ten.Token, nil)
	if st != 200 || body["connected"] != false || body["hasSecretKey"] != false || body["mode"] != nil {
		t.Fatalf("GET before connecting: %d %v", st, body)
	}
	st, body = b.Do(t, "POST", path+"/test", ten.Token, nil)
	if st != 404 {
		t.Errorf("test without a connector or a key: %d %v", st, body)
	}
	if st, body = b.Do(t, "DELETE", path, ten.Token, nil); st != 404 {
		t.Errorf("DELETE without a connector: %d %v", st, body)
	}

	long := func(n int) string { return strings.Repeat("x", n) }
	for _, tc := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"no key", map[string]any{"currency": "EUR"}, "secretKey"},
		{"publishable key", map[string]any{"secretKey": "pk_test_51abcdefghijklmnop"}, "secretKey"},
		{"not a key", map[string]any{"secretKey": "hello"}, "secretKey"},
		{"empty key", map[string]any{"secretKey": ""}, "secretKey"},
		{"key too long", map[string]any{"secretKey": "sk_test_" + strings.Repeat("a", 248)}, "secretKey"},
		{"key of the wrong type", map[string]any{"secretKey": 42}, "secretKey"},
		{"unknown currency", map[string]any{"secretKey": webtest.StripeTestKey, "currency": "XYZ"}, "currency"},
		{"amount without currency", map[string]any{"secretKey": webtest.StripeTestKey, "defaultAmount": 10}, "currency"},
		{"zero amount", map[string]any{"secretKey": webtest.StripeTestKey, "currency": "EUR", "defaultAmount": 0}, "defaultAmount"},
		{"negative amount", map[string]any{"secretKey": webtest.StripeTestKey, "currency": "EUR", "defaultAmount": -5}, "defaultAmount"},
		{"three decimals in EUR", map[string]any{"secretKey": webtest.StripeTestKey, "currency": "EUR", "defaultAmount": 1.234}, "defaultAmount"},
		{"decimals in JPY", map[string]any{"secretKey": webtest.StripeTestKey, "currency": "JPY", "defaultAmount": 10.5}, "defaultAmount"},
		{"amount too large", map[string]any{"secretKey": webtest.StripeTestKey, "currency": "EUR", "defaultAmount": 1000000}, "defaultAmount"},
		{"amount as text", map[string]any{"secretKey": webtest.StripeTestKey, "currency": "EUR", "defaultAmount": "12"}, "defaultAmount"},
		{"isActive as text", map[string]any{"secretKey": webtest.StripeTestKey, "isActive": "yes"}, "isActive"},
		{"isActive null", map[string]any{"secretKey": webtest.StripeTestKey, "isActive": nil}, "isActive"},
		{"description 201", map[string]any{"secretKey": webtest.StripeTestKey, "defaultDescription": long(201)}, "defaultDescription"},
		{"success message 501", map[string]any{"secretKey": webtest.StripeTestKey, "successMessage": long(501)}, "successMessage"},
	} {
		st, body := b.Do(t, "PUT", path, ten.Token, tc.body)
		details, _ := body["details"].(map[string]any)
		if st != 400 || details[tc.field] == nil {
			t.Errorf("%s: %d %v, want 400 naming %s", tc.name, st, body, tc.field)
		}
		if strings.Contains(webtest.ToJSON(body), "51FakeKey") {
			t.Errorf("%s: the key is echoed: %v", tc.name, body)
		}
	}
	if n := b.Count(t, `SELECT count(*) FROM payment_connectors WHERE tenant_id = $1`, ten.ID); n != 0 {
		t.Fatalf("a refused save stored a connector")
	}

	// At each limit: saved.
	st, body = b.Do(t, "PUT", path, ten.Token, map[string]any{"secretKey": webtest.StripeTestKey, "currency": "eur", "defaultAmount": 999999.99,
		"defaultDescription": long(200), "successMessage": long(500)})
	if st != 200 || body["connected"] != true || body["hasSecretKey"] != true || body["mode"] != "test" || body["keyType"] != "secret" ||
		body["keyLast4"] != "abcd" || body["currency"] != "EUR" || body["defaultAmount"] != 999999.99 || body["isActive"] != true {
		t.Fatalf("PUT at the limits: %d %v", st, body)
	}
	if strings.Contains(webtest.ToJSON(body), "51FakeKey") {
		t.Errorf("the key is echoed: %v", body)
	}
	var sealed []byte
	if err := b.DB.Pool().QueryRow(context.Background(), `SELECT secret_key FROM payment_connectors WHERE tenant_id = $1`, ten.ID).Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("51FakeKey")) {
		t.Errorf("the key is stored in clear")
	}
	if opened, err := b.Box.Open(sealed); err != nil || string(opened) != webtest.StripeTestKey {
		t.Errorf("the stored key does not open to the key sent")
	}

	// Only the fields sent change; a new currency keeps the amount's value.
	st, body = b.Do(t, "PUT", path, ten.Token, map[string]any{"defaultAmount": 49.5, "defaultDescription": "Deposit", "successMessage": nil})
	if st != 200 || body["defaultAmount"] != 49.5 || body["currency"] != "EUR" || body["successMessage"] != nil || body["keyLast4"] != "abcd" {
		t.Fatalf("partial PUT: %d %v", st, body)
	}
	if st, body = b.Do(t, "PUT", path, ten.Token, map[string]any{"currency": "JPY"}); st != 400 || !strings.Contains(webtest.ToJSON(body["details"]), "defaultAmount") {
		t.Errorf("49.5 EUR to JPY: %d %v, want 400 on defaultAmount", st, body)
	}
	if st, body = b.Do(t, "PUT", path, ten.Token, map[string]any{"currency": "KWD"}); st != 200 || body["defaultAmount"] != 49.5 || body["currency"] != "KWD" {
		t.Errorf("49.5 EUR to KWD: %d %v", st, body)
	}
	if st, body = b.Do(t, "PUT", path, ten.Token, map[string]any{"currency": nil}); st != 400 {
		t.Errorf("removing the currency of an amount: %d %v", st, body)
	}
	b.MustDo(t, 200, "PUT", path, ten.Token, map[string]any{"currency": "EUR", "defaultAmount": 49.5})

	// The test asks Stripe with the saved key and keeps the outcome.
	st, body = b.Do(t, "POST", path+"/test", ten.Token, nil)
	acct, _ := body["account"].(map[string]any)
	if st != 200 || body["ok"] != true || body["mode"] != "test" || acct["name"] != "Acme Test" || !strings.Contains(body["message"].(string), "Test mode") {
		t.Fatalf("test of the saved key: %d %v", st, body)
	}
	got := stripe.Received()
	if last := got[len(got)-1]; last.Path != "/v1/account" || last.Key != webtest.StripeTestKey || last.Version == "" {
		t.Errorf("Stripe got %+v", last)
	}
	_, body = b.Do(t, "GET", path, ten.Token, nil)
	if lt, _ := body["lastTest"].(map[string]any); lt["ok"] != true || !strings.Contains(lt["message"].(string), "Acme Test") {
		t.Errorf("lastTest after a test: %v", body)
	}
	// A key Stripe does not take: ok false, Stripe's message, never the key.
	st, body = b.Do(t, "POST", path+"/test", ten.Token, map[string]any{"secretKey": "rk_live_51UnknownKeyForParleyTests9x7Q"})
	if st != 200 || body["ok"] != false || body["reason"] != "key_refused" || body["mode"] != "live" || body["keyLast4"] != "9x7Q" {
		t.Fatalf("test of a refused key: %d %v", st, body)
	}
	if strings.Contains(webtest.ToJSON(body), "51UnknownKey") {
		t.Errorf("the tested key is echoed: %v", body)
	}
	// A restricted key that may not read the account is still accepted.
	const restricted = "rk_test_51RestrictedKeyForTests0042"
	stripe.AddKey(restricted, "")
	stripe.RestrictKey(restricted)
	st, body = b.Do(t, "POST", path+"/test", ten.Token, map[string]any{"secretKey": restricted})
	if st != 200 || body["ok"] != true || body["account"] != nil || !strings.Contains(body["message"].(string), "restricted key") {
		t.Errorf("test of a restricted key without the Account permission: %d %v", st, body)
	}
	// A key tried before saving is not saved, nor its outcome.
	if _, body = b.Do(t, "GET", path, ten.Token, nil); body["keyLast4"] != "abcd" || body["lastTest"].(map[string]any)["ok"] != true {
		t.Errorf("a tested key changed the connector: %v", body)
	}
	if st, body = b.Do(t, "POST", path+"/test", ten.Token, map[string]any{"secretKey": "pk_live_nope12345678"}); st != 400 {
		t.Errorf("test of a publishable key: %d %v", st, body)
	}
	// A new key forgets the old key's test.
	stripe.AddKey(webtest.OtherStripeKey, "Other")
	if st, body = b.Do(t, "PUT", path, ten.Token, map[string]any{"secretKey": webtest.OtherStripeKey}); st != 200 || body["lastTest"] != nil || body["keyLast4"] != "wxyz" {
		t.Errorf("new key: %d %v", st, body)
	}

	// Scopes and tenants.
	read := b.Token(t, ten.ID, auth.ScopeSettingsRead)
	if st, _ := b.Do(t, "GET", path, read, nil); st != 200 {
		t.Errorf("GET with settings:read: %d", st)
	}
	for _, m := range []string{"PUT", "DELETE"} {
		if st, body := b.Do(t, m, path, read, map[string]any{"isActive": false}); st != 403 {
			t.Errorf("%s with settings:read: %d %v", m, st, body)
		}
	}
	if st, body := b.Do(t, "POST", path+"/test", read, nil); st != 403 {
		t.Errorf("test with settings:read: %d %v", st, body)
	}
	for _, m := range []string{"GET", "PUT", "DELETE"} {
		if st, body := b.Do(t, m, path, other.Token, map[string]any{"secretKey": webtest.StripeTestKey}); st != 404 {
			t.Errorf("%s of another tenant's connector: %d %v", m, st, body)
		}
	}
	if st, body := b.Do(t, "POST", path+"/test", other.Token, nil); st != 404 {
		t.Errorf("test of another tenant's key: %d %v", st, body)
	}
	if st, body := b.Do(t, "GET", "/tenants/"+other.Slug+"/integrations/payments", other.Token, nil); st != 200 || body["connected"] != false {
		t.Errorf("the other tenant sees a connector: %d %v", st, body)
	}

	if st, body := b.Do(t, "DELETE", path, ten.Token, nil); st != 200 || body["deleted"] != true {
		t.Fatalf("DELETE: %d %v", st, body)
	}
	if n := b.Count(t, `SELECT count(*) FROM payment_connectors WHERE tenant_id = $1`, ten.ID); n != 0 {
		t.Errorf("the connector outlived DELETE")
	}
}
