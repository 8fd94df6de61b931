package agent

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stripe/stripe-go/v83"

	"github.com/parley/parley/agent/outbound"
)

// Stripe's errors become kinds the model can explain, and no key, the
// tenant's or one Stripe names, survives in their messages.
func TestPaymentError(t *testing.T) {
	t.Parallel()
	const key = "sk_live_51SecretKeyOfTheTenant99"
	for _, tc := range []struct {
		err  error
		kind PaymentErrorKind
	}{
		{&stripe.Error{HTTPStatusCode: 401, Type: "invalid_request_error", Msg: "Invalid API Key provided: " + key}, PaymentKeyRefused},
		{&stripe.Error{HTTPStatusCode: 403, Type: "invalid_request_error", Msg: "The provided key 'rk_live_****abcd' lacks permissions"}, PaymentKeyRefused},
		{&stripe.Error{HTTPStatusCode: 429, Type: "rate_limit_error", Msg: "Too many requests"}, PaymentRateLimited},
		{&stripe.Error{HTTPStatusCode: 402, Type: "card_error", Code: "card_declined", Msg: "Your card was declined."}, PaymentRefused},
		{&stripe.Error{HTTPStatusCode: 503, Type: "api_error"}, PaymentUnavailable},
		{fmt.Errorf("Post: %w", context.DeadlineExceeded), PaymentTimeout},
		{&outbound.Error{Kind: outbound.Timeout, Host: "api.stripe.com"}, PaymentTimeout},
		{&outbound.Error{Kind: outbound.Refused, Host: "10.0.0.1"}, PaymentUnavailable},
	} {
		pe := paymentError(tc.err, key)
		if pe.Kind != tc.kind || pe.Message == "" {
			t.Errorf("%v: %+v, want %s", tc.err, pe, tc.kind)
		}
		if strings.Contains(pe.Error(), "51SecretKey") || strings.Contains(pe.Error(), "rk_live_") {
			t.Errorf("a key in %q", pe.Error())
		}
	}
	if pe := paymentError(&stripe.Error{HTTPStatusCode: http.StatusBadRequest, Code: "amount_too_small", Msg: "too small"}, key); pe.Code != "amount_too_small" {
		t.Errorf("code %q", pe.Code)
	}
}

func TestMinorFromCents(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cents    int64
		decimals int
		want     int64
		ok       bool
	}{{6000, 2, 6000, true}, {100000, 0, 1000, true}, {100050, 0, 0, false}, {1234, 3, 12340, true}} {
		got, ok := minorFromCents(tc.cents, tc.decimals)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("minorFromCents(%d, %d) = %d %v", tc.cents, tc.decimals, got, ok)
		}
	}
}
