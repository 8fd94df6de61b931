package parley

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// The rules of a save of the tenant's payment connector (Stripe), which
// the REST API and the dashboard share through the management operations.

// NoPaymentConnector is the refusal of a request about the payment
// connector of a tenant without one.
func NoPaymentConnector() error { return Errorf(KindNotFound, "No payment connector is set up") }

// PaymentInput is a save of the tenant's payment connector: only set
// fields change; the secret key is required to connect Stripe the first
// time. Problems holds what the surface could not read of it, reported
// first.
type PaymentInput struct {
	SecretKey          Opt[string]
	IsActive           Opt[bool]
	Currency           Opt[string]
	DefaultAmount      Opt[float64]
	DefaultDescription Opt[string]
	SuccessMessage     Opt[string]
	Problems           FieldErrors
}

// Key is the secret key the save gives, trimmed; "" when none.
func (in *PaymentInput) Key() string {
	if !in.SecretKey.Set || in.SecretKey.Null {
		return ""
	}
	return strings.TrimSpace(in.SecretKey.Value)
}

// Apply applies the save to cur (nil: no connector yet) and returns the
// connector to store and the save's problems, Problems first. A key given
// sets the key's mode, type and last 4 characters; sealing it is the
// caller's (SealedKey is cur's).
func (in *PaymentInput) Apply(tenantID string, cur *PaymentConnector) (PaymentConnector, FieldErrors) {
	errs := in.Problems.Copy()
	p := PaymentConnector{TenantID: tenantID, IsActive: true}
	if cur != nil {
		p = *cur
	}
	switch {
	case !in.SecretKey.Set:
		if cur == nil {
			errs.Add("secretKey", "is required to connect Stripe: a secret key (sk_test_... or sk_live_...) or a restricted key (rk_...)")
		}
	case in.SecretKey.Null || strings.TrimSpace(in.SecretKey.Value) == "":
		errs.Add("secretKey", "cannot be empty; to disconnect Stripe, DELETE the connector")
	default:
		key := in.Key()
		if mode, typ, err := ParseStripeKey(key); err != nil {
			errs.Add("secretKey", err.Error())
		} else {
			p.KeyMode, p.KeyType, p.KeyLast4 = mode, typ, KeyLast4(key)
		}
	}
	if in.IsActive.Set {
		if in.IsActive.Null {
			errs.Add("isActive", "must be true or false")
		} else {
			p.IsActive = in.IsActive.Value
		}
	}
	oldDecimals := 2
	if p.Currency != nil {
		_, oldDecimals, _ = PaymentCurrency(*p.Currency)
	}
	decimals := oldDecimals
	if in.Currency.Set {
		if in.Currency.Null || strings.TrimSpace(in.Currency.Value) == "" {
			p.Currency = nil
		} else if cur, dec, ok := PaymentCurrency(in.Currency.Value); !ok {
			errs.Add("currency", fmt.Sprintf("%q is not a currency Stripe charges in: use an ISO 4217 code such as EUR, USD or GBP", Clip(in.Currency.Value, 20)))
		} else {
			p.Currency, decimals = &cur, dec
		}
	}
	switch {
	case in.DefaultAmount.Set && in.DefaultAmount.Null:
		p.DefaultAmount = nil
	case in.DefaultAmount.Set:
		if minor, ok := MinorUnits(in.DefaultAmount.Value, decimals); ok {
			p.DefaultAmount = &minor
		} else {
			errs.Add("defaultAmount", amountRule(decimals))
		}
	case p.DefaultAmount != nil && decimals != oldDecimals:
		// The amount is kept in the smallest unit: a new currency keeps its value.
		if minor, ok := MinorUnits(MajorUnits(*p.DefaultAmount, oldDecimals), decimals); ok {
			p.DefaultAmount = &minor
		} else {
			errs.Add("defaultAmount", "does not fit the new currency: "+amountRule(decimals)+"; send defaultAmount with the currency")
		}
	}
	if p.DefaultAmount != nil && p.Currency == nil && errs["currency"] == "" {
		errs.Add("currency", "is required with defaultAmount")
	}
	p.DefaultDescription = optText(errs, "defaultDescription", in.DefaultDescription, p.DefaultDescription, MaxPaymentDescription)
	p.SuccessMessage = optText(errs, "successMessage", in.SuccessMessage, p.SuccessMessage, MaxPaymentSuccessMessage)
	return p, errs
}

func amountRule(decimals int) string {
	return fmt.Sprintf("must be a positive amount with at most %d decimals, up to %s", decimals, FormatMinor(MaxPaymentMinor, decimals))
}

// optText applies an optional text field: null or blank clears it.
func optText(errs FieldErrors, field string, o Opt[string], cur *string, max int) *string {
	if !o.Set {
		return cur
	}
	v := strings.TrimSpace(o.Value)
	switch {
	case o.Null || v == "":
		return nil
	case utf8.RuneCountInString(v) > max:
		errs.Add(field, TooLong(max))
		return cur
	}
	return &v
}
