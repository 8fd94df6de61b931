package parley_test

import (
	"strings"
	"testing"

	"github.com/parley/parley"
)

// The payment connector's rules: limits at N and N+1, the key's shape,
// the key required to connect, the amount in the currency's decimals, and
// the surface's problems first.
func TestPaymentRules(t *testing.T) {
	t.Parallel()
	key := "sk_test_" + strings.Repeat("a", 24)
	eur := "eur"
	amount := int64(4950)
	stored := &parley.PaymentConnector{IsActive: true, KeyMode: "test", KeyType: parley.StripeKeySecret, KeyLast4: "aaaa", Currency: &eur, DefaultAmount: &amount}
	for name, c := range map[string]struct {
		in    parley.PaymentInput
		cur   *parley.PaymentConnector
		field string
		want  string
	}{
		"Connect":            {parley.PaymentInput{SecretKey: parley.Some(" " + key + " ")}, nil, "", ""},
		"KeyRequired":        {parley.PaymentInput{Currency: parley.Some("EUR")}, nil, "secretKey", "is required to connect Stripe: a secret key (sk_test_... or sk_live_...) or a restricted key (rk_...)"},
		"KeyKept":            {parley.PaymentInput{Currency: parley.Some("USD")}, stored, "", ""},
		"KeyEmpty":           {parley.PaymentInput{SecretKey: parley.Some("  ")}, stored, "secretKey", "cannot be empty; to disconnect Stripe, DELETE the connector"},
		"KeyPublishable":     {parley.PaymentInput{SecretKey: parley.Some("pk_test_abc")}, nil, "secretKey", "is a publishable key (pk_...); use a secret key (sk_...) or a restricted key (rk_...)"},
		"KeyPast":            {parley.PaymentInput{SecretKey: parley.Some("sk_test_" + strings.Repeat("a", parley.MaxStripeKey-7))}, nil, "secretKey", "must be at most 255 characters"},
		"ActiveNull":         {parley.PaymentInput{IsActive: parley.Opt[bool]{Set: true, Null: true}}, stored, "isActive", "must be true or false"},
		"BadCurrency":        {parley.PaymentInput{Currency: parley.Some("XXX")}, stored, "currency", `"XXX" is not a currency Stripe charges in: use an ISO 4217 code such as EUR, USD or GBP`},
		"AmountAtLimit":      {parley.PaymentInput{DefaultAmount: parley.Some(999999.99)}, stored, "", ""},
		"AmountPast":         {parley.PaymentInput{DefaultAmount: parley.Some(1000000.00)}, stored, "defaultAmount", "must be a positive amount with at most 2 decimals, up to 999999.99"},
		"AmountDecimals":     {parley.PaymentInput{DefaultAmount: parley.Some(1.005)}, stored, "defaultAmount", "must be a positive amount with at most 2 decimals, up to 999999.99"},
		"AmountNoCurrency":   {parley.PaymentInput{Currency: parley.Opt[string]{Set: true, Null: true}}, stored, "currency", "is required with defaultAmount"},
		"DescriptionAtLimit": {parley.PaymentInput{DefaultDescription: parley.Some(strings.Repeat("é", parley.MaxPaymentDescription))}, stored, "", ""},
		"DescriptionPast":    {parley.PaymentInput{DefaultDescription: parley.Some(strings.Repeat("é", parley.MaxPaymentDescription+1))}, stored, "defaultDescription", "must be at most 200 characters"},
		"MessageAtLimit":     {parley.PaymentInput{SuccessMessage: parley.Some(strings.Repeat("m", parley.MaxPaymentSuccessMessage))}, stored, "", ""},
		"MessagePast":        {parley.PaymentInput{SuccessMessage: parley.Some(strings.Repeat("m", parley.MaxPaymentSuccessMessage+1))}, stored, "successMessage", "must be at most 500 characters"},
		"ProblemsFirst":      {parley.PaymentInput{DefaultAmount: parley.Some(-1.0), Problems: parley.FieldErrors{"defaultAmount": "must be a number, such as 49.50"}}, stored, "defaultAmount", "must be a number, such as 49.50"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, errs := c.in.Apply("t1", c.cur)
			if c.field == "" {
				if len(errs) > 0 {
					t.Fatalf("problems: %v", errs)
				}
				return
			}
			if got := errs[c.field]; got != c.want || len(errs) != 1 {
				t.Fatalf("problems %v, want only %s: %q", errs, c.field, c.want)
			}
		})
	}
}

// A save's connector: the key's details set (sealing it is manage's), the
// stored amount kept in value when the currency changes.
func TestPaymentApply(t *testing.T) {
	t.Parallel()
	in := parley.PaymentInput{SecretKey: parley.Some(" rk_live_" + strings.Repeat("b", 20) + "wxyz ")}
	p, errs := in.Apply("t1", nil)
	if len(errs) > 0 || p.TenantID != "t1" || !p.IsActive || p.KeyMode != "live" || p.KeyType != parley.StripeKeyRestricted || p.KeyLast4 != "wxyz" || p.SealedKey != nil {
		t.Fatalf("connector %+v, problems %v", p, errs)
	}
	eur, amount := "eur", int64(4900)
	in = parley.PaymentInput{Currency: parley.Some("JPY")}
	p, errs = in.Apply("t1", &parley.PaymentConnector{Currency: &eur, DefaultAmount: &amount})
	if len(errs) > 0 || *p.Currency != "jpy" || *p.DefaultAmount != 49 {
		t.Fatalf("connector %+v, problems %v", p, errs)
	}
	amount = 4950
	if _, errs = in.Apply("t1", &parley.PaymentConnector{Currency: &eur, DefaultAmount: &amount}); errs["defaultAmount"] == "" {
		t.Fatalf("problems %v, want 49.50 not to fit yen", errs)
	}
}
