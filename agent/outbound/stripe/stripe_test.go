package stripe

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	stripego "github.com/stripe/stripe-go/v83"

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
		{&stripego.Error{HTTPStatusCode: 401, Type: "invalid_request_error", Msg: "Invalid API Key provided: " + key}, PaymentKeyRefused},
		{&stripego.Error{HTTPStatusCode: 403, Type: "invalid_request_error", Msg: "The provided key 'rk_live_****abcd' lacks permissions"}, PaymentKeyRefused},
		{&stripego.Error{HTTPStatusCode: 429, Type: "rate_limit_error", Msg: "Too many requests"}, PaymentRateLimited},
		{&stripego.Error{HTTPStatusCode: 402, Type: "card_error", Code: "card_declined", Msg: "Your card was declined."}, PaymentRefused},
		{&stripego.Error{HTTPStatusCode: 503, Type: "api_error"}, PaymentUnavailable},
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
	if pe := paymentError(&stripego.Error{HTTPStatusCode: http.StatusBadRequest, Code: "amount_too_small", Msg: "too small"}, key); pe.Code != "amount_too_small" {
		t.Errorf("code %q", pe.Code)
	}
}
