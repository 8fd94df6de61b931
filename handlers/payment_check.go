package handlers

// The payment connector's body, answer and live key test, which the REST
// API and the dashboard's payments page share.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/stripe"
)

// paymentJSON is the connector as the API shows it; a tenant without one
// gets connected false and nulls.
type paymentJSON struct {
	Provider           string           `json:"provider"`
	Connected          bool             `json:"connected"`
	IsActive           bool             `json:"isActive"`
	HasSecretKey       bool             `json:"hasSecretKey"`
	Mode               *string          `json:"mode"`
	KeyType            *string          `json:"keyType"`
	KeyLast4           *string          `json:"keyLast4"`
	Currency           *string          `json:"currency"`
	DefaultAmount      *float64         `json:"defaultAmount"`
	DefaultDescription *string          `json:"defaultDescription"`
	SuccessMessage     *string          `json:"successMessage"`
	LastTest           *paymentTestJSON `json:"lastTest"`
	CreatedAt          *time.Time       `json:"createdAt"`
	UpdatedAt          *time.Time       `json:"updatedAt"`
}

// paymentTestJSON is the outcome of the last connection test.
type paymentTestJSON struct {
	At      time.Time `json:"at"`
	OK      bool      `json:"ok"`
	Message string    `json:"message"`
}

func NewPaymentJSON(p *parley.PaymentConnector) paymentJSON {
	out := paymentJSON{Provider: "stripe"}
	if p == nil {
		return out
	}
	out.Connected, out.IsActive, out.HasSecretKey = true, p.IsActive, len(p.SealedKey) > 0
	out.Mode, out.KeyType, out.KeyLast4 = &p.KeyMode, &p.KeyType, &p.KeyLast4
	out.DefaultDescription, out.SuccessMessage = p.DefaultDescription, p.SuccessMessage
	out.CreatedAt, out.UpdatedAt = &p.CreatedAt, &p.UpdatedAt
	if p.Currency != nil {
		cur, dec, _ := parley.PaymentCurrency(*p.Currency)
		up := strings.ToUpper(cur)
		out.Currency = &up
		if p.DefaultAmount != nil {
			a := parley.MajorUnits(*p.DefaultAmount, dec)
			out.DefaultAmount = &a
		}
	}
	if p.CheckedAt != nil && p.CheckOK != nil {
		out.LastTest = &paymentTestJSON{At: *p.CheckedAt, OK: *p.CheckOK}
		if p.CheckMessage != nil {
			out.LastTest.Message = *p.CheckMessage
		}
	}
	return out
}

// PaymentBody is a payment connector save: only sent fields change.
type PaymentBody struct {
	SecretKey          parley.Opt[string]  `json:"secretKey"`
	IsActive           parley.Opt[bool]    `json:"isActive"`
	Currency           parley.Opt[string]  `json:"currency"`
	DefaultAmount      parley.Opt[float64] `json:"defaultAmount"`
	DefaultDescription parley.Opt[string]  `json:"defaultDescription"`
	SuccessMessage     parley.Opt[string]  `json:"successMessage"`
}

// paymentKey is a checked key: its mode, type and last 4 characters.
type paymentKey struct {
	key, mode, typ, last4 string
}

// checkPaymentKey checks a key's shape and length, adding its problem under field.
func checkPaymentKey(errs parley.FieldErrors, field, key string) (paymentKey, bool) {
	mode, typ, err := parley.ParseStripeKey(key)
	if err != nil {
		errs.Add(field, err.Error())
		return paymentKey{}, false
	}
	return paymentKey{key: key, mode: mode, typ: typ, last4: parley.KeyLast4(key)}, true
}

// Input is the save as the management operations take it; problems holds
// what could not be read of it.
func (b PaymentBody) Input(problems parley.FieldErrors) parley.PaymentInput {
	return parley.PaymentInput{SecretKey: b.SecretKey, IsActive: b.IsActive, Currency: b.Currency, DefaultAmount: b.DefaultAmount,
		DefaultDescription: b.DefaultDescription, SuccessMessage: b.SuccessMessage, Problems: problems}
}

// paymentTestResult is a connection test's answer.
type paymentTestResult struct {
	OK       bool                `json:"ok"`
	Mode     string              `json:"mode"`
	KeyLast4 string              `json:"keyLast4"`
	Message  string              `json:"message"`
	Reason   *string             `json:"reason"`
	Account  *paymentAccountJSON `json:"account"`
	TestedAt time.Time           `json:"testedAt"`
}

type paymentAccountJSON struct {
	ID             string `json:"id"`
	Name           string `json:"name"`
	Country        string `json:"country"`
	ChargesEnabled bool   `json:"chargesEnabled"`
}

// testPaymentKey asks Stripe whether it takes k.
func (h *Base) testPaymentKey(ctx context.Context, k paymentKey) paymentTestResult {
	res := paymentTestResult{Mode: k.mode, KeyLast4: k.last4, TestedAt: h.Clock().UTC()}
	acct, err := h.Stripe.CheckKey(ctx, k.key)
	if err != nil {
		var pe *stripe.PaymentError
		if !errors.As(err, &pe) {
			pe = &stripe.PaymentError{Kind: stripe.PaymentUnavailable, Message: "Stripe could not be reached"}
		}
		reason := string(pe.Kind)
		res.Reason = &reason
		switch pe.Kind {
		case stripe.PaymentKeyRefused:
			res.Message = "Stripe refused the key: " + pe.Message
		case stripe.PaymentTimeout:
			res.Message = "Stripe did not answer in time; try again."
		case stripe.PaymentRateLimited:
			res.Message = "Stripe is rate limiting requests; try again in a moment."
		default:
			res.Message = pe.Message
		}
		return res
	}
	res.OK = true
	switch {
	case acct.Restricted:
		res.Message = "Stripe accepted the restricted key (it may not read the account's details)."
	default:
		res.Account = &paymentAccountJSON{ID: acct.ID, Name: acct.Name, Country: acct.Country, ChargesEnabled: acct.ChargesEnabled}
		name := acct.Name
		if name == "" {
			name = acct.ID
		}
		res.Message = "Connected to the Stripe account " + name
		if acct.Country != "" {
			res.Message += " (" + acct.Country + ")"
		}
		res.Message += "."
		if !acct.ChargesEnabled {
			res.Message += " The account cannot take payments yet: finish its activation in Stripe."
		}
	}
	if k.mode == parley.StripeModeTest {
		res.Message += " Test mode: payment links charge no real money."
	}
	return res
}

// RunPaymentTest tests the key sent (secretKey, not saved) or else the
// stored one, whose outcome is kept; errs gets the problems of a sent key.
func (h *Base) RunPaymentTest(ctx context.Context, tenantID, sent string, errs parley.FieldErrors) (paymentTestResult, error) {
	if sent != "" {
		k, ok := checkPaymentKey(errs, "secretKey", sent)
		if !ok {
			return paymentTestResult{}, errs.Err()
		}
		return h.testPaymentKey(ctx, k), nil
	}
	cur, err := h.Manage.PaymentConnector(ctx, tenantID)
	if err != nil {
		return paymentTestResult{}, err
	}
	if cur == nil {
		return paymentTestResult{}, parley.Errorf(parley.KindNotFound, "No payment connector is set up: send secretKey to test a key before saving it")
	}
	key, err := h.Box.Open(cur.SealedKey)
	if err != nil {
		return paymentTestResult{}, fmt.Errorf("opening the payment key: %w", err)
	}
	res := h.testPaymentKey(ctx, paymentKey{key: string(key), mode: cur.KeyMode, typ: cur.KeyType, last4: cur.KeyLast4})
	if err := h.DB.RecordPaymentCheck(ctx, tenantID, cur.SealedKey, res.OK, res.Message, res.TestedAt); err != nil {
		return paymentTestResult{}, err
	}
	return res, nil
}
