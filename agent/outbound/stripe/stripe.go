// Package stripe is the payment connector's client of Stripe's API: payment
// links and key checks, through the SSRF-guarded client. Its failures are
// *PaymentError, whose message never holds the tenant's key.
package stripe

import (
	"cmp"
	"context"
	"errors"
	"net"
	"net/http"
	"regexp"
	"strings"
	"time"

	stripego "github.com/stripe/stripe-go/v83"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound"
)

// Client is the payment connector's way to the Stripe API, built from the
// official stripe-go with a backend of its own (never the package's global
// key or backend): the operator's base URL (PARLEY_STRIPE_API_URL), the
// SSRF-guarded client bounded by Timeout, one network retry (requests
// that create carry an Idempotency-Key, so a retry never makes a second
// link), and the SDK's logger silenced, since its lines would carry Stripe's
// messages past our own redaction.
type Client struct {
	URL   string
	Guard *outbound.Guard
	// Timeout bounds one request; 0 means the package's Timeout.
	Timeout time.Duration
}

// Timeout bounds one Stripe request; with its one retry, a payment link
// costs a turn at most about twice as long.
const Timeout = 10 * time.Second

// DefaultURL is Stripe's API.
const DefaultURL = "https://api.stripe.com"

// client is a Stripe client for one tenant's key.
func (s *Client) client(key string) *stripego.Client {
	hc := s.Guard.Client(cmp.Or(s.Timeout, Timeout))
	hc.Transport = withoutHostInfo{hc.Transport}
	backend := stripego.GetBackendWithConfig(stripego.APIBackend, &stripego.BackendConfig{
		HTTPClient:        hc,
		URL:               stripego.String(s.URL),
		MaxNetworkRetries: stripego.Int64(1),
		LeveledLogger:     &stripego.LeveledLogger{Level: stripego.LevelNull},
	})
	return stripego.NewClient(key, stripego.WithBackends(&stripego.Backends{API: backend, Connect: backend, Uploads: backend, MeterEvents: backend}))
}

// withoutHostInfo drops the X-Stripe-Client-User-Agent header stripe-go
// adds to every request, which carries the output of `uname -a` (the
// server's host name and kernel): nothing Stripe needs to know.
type withoutHostInfo struct{ base http.RoundTripper }

func (w withoutHostInfo) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Del("X-Stripe-Client-User-Agent")
	return w.base.RoundTrip(r)
}

// Account is what a connection test learnt of the key's account.
type Account struct {
	ID             string
	Name           string
	Country        string
	ChargesEnabled bool
	Livemode       bool
	// Restricted: the key works but may not read the account (a restricted
	// key without the Account permission); the other fields are empty.
	Restricted bool
}

// CheckKey asks Stripe for the key's account (GET /v1/account). A refused
// key or an unreachable Stripe is a *PaymentError.
func (s *Client) CheckKey(ctx context.Context, key string) (Account, error) {
	acct, err := s.client(key).V1Accounts.Retrieve(ctx, nil)
	if err != nil {
		var se *stripego.Error
		if errors.As(err, &se) && se.HTTPStatusCode == http.StatusForbidden {
			// A restricted key that may not read the account: Stripe took
			// the key, which is what the test is about.
			return Account{Restricted: true}, nil
		}
		return Account{}, paymentError(err, key)
	}
	a := Account{ID: acct.ID, Country: acct.Country, ChargesEnabled: acct.ChargesEnabled}
	if acct.Settings != nil && acct.Settings.Dashboard != nil {
		a.Name = acct.Settings.Dashboard.DisplayName
	}
	if a.Name == "" && acct.BusinessProfile != nil {
		a.Name = acct.BusinessProfile.Name
	}
	return a, nil
}

// PaymentLinkRequest is one payment link to create.
type PaymentLinkRequest struct {
	Currency       string // lowercase ISO 4217
	Amount         int64  // in the currency's smallest unit
	Description    string
	SuccessMessage string
	Metadata       map[string]string
	// IdempotencyKey makes a repeated request give back the same link.
	IdempotencyKey string
}

// PaymentLink is a link Stripe made.
type PaymentLink struct {
	ID       string
	URL      string
	Livemode bool
}

// CreatePaymentLink creates a Stripe Payment Link for one line at a fixed
// price, which may be paid once. Errors are *PaymentError.
//
// A Payment Link rather than a Checkout Session: a session expires within 24
// hours, while a visitor often pays later from the link kept in the chat; a
// link shows Stripe's own confirmation page with the tenant's success
// message, where a session needs a success URL the tenant would have to
// host; and "restrictions.completed_sessions.limit = 1" makes the link
// payable once, like a session.
func (s *Client) CreatePaymentLink(ctx context.Context, key string, r PaymentLinkRequest) (PaymentLink, error) {
	params := &stripego.PaymentLinkCreateParams{
		LineItems: []*stripego.PaymentLinkCreateLineItemParams{{
			PriceData: &stripego.PaymentLinkCreateLineItemPriceDataParams{
				Currency:    stripego.String(r.Currency),
				UnitAmount:  stripego.Int64(r.Amount),
				ProductData: &stripego.PaymentLinkCreateLineItemPriceDataProductDataParams{Name: stripego.String(r.Description)},
			},
			Quantity: stripego.Int64(1),
		}},
		Restrictions: &stripego.PaymentLinkCreateRestrictionsParams{
			CompletedSessions: &stripego.PaymentLinkCreateRestrictionsCompletedSessionsParams{Limit: stripego.Int64(1)},
		},
		Metadata: r.Metadata,
	}
	if r.SuccessMessage != "" {
		params.AfterCompletion = &stripego.PaymentLinkCreateAfterCompletionParams{
			Type:               stripego.String("hosted_confirmation"),
			HostedConfirmation: &stripego.PaymentLinkCreateAfterCompletionHostedConfirmationParams{CustomMessage: stripego.String(r.SuccessMessage)},
		}
	}
	if r.IdempotencyKey != "" {
		params.SetIdempotencyKey(r.IdempotencyKey)
	}
	link, err := s.client(key).V1PaymentLinks.Create(ctx, params)
	if err != nil {
		return PaymentLink{}, paymentError(err, key)
	}
	if link.URL == "" {
		return PaymentLink{}, &PaymentError{Kind: PaymentUnavailable, Message: "Stripe answered without a payment link URL"}
	}
	return PaymentLink{ID: link.ID, URL: link.URL, Livemode: link.Livemode}, nil
}

// PaymentErrorKind says why a Stripe call failed, in terms the visitor can
// be told about.
type PaymentErrorKind string

// Ways a Stripe call fails.
const (
	PaymentKeyRefused  PaymentErrorKind = "key_refused"  // 401, 403: the tenant's key
	PaymentRefused     PaymentErrorKind = "refused"      // 400, 402: the request (amount too small, ...)
	PaymentRateLimited PaymentErrorKind = "rate_limited" // 429
	PaymentTimeout     PaymentErrorKind = "timeout"
	PaymentUnavailable PaymentErrorKind = "unavailable" // 5xx, unreachable
)

// PaymentError is a failed Stripe call. Its message is Stripe's, with any
// key-like text redacted, or ours: never the tenant's key.
type PaymentError struct {
	Kind    PaymentErrorKind
	Code    string // Stripe's error code, when it gave one
	Message string
}

func (e *PaymentError) Error() string { return "stripe: " + string(e.Kind) + ": " + e.Message }

// stripeKeyText is anything shaped like a Stripe key, in an error message.
var stripeKeyText = regexp.MustCompile(`\b(sk|rk|pk)_(test|live)_[0-9A-Za-z*]+`)

// redactKey removes key, and anything shaped like a Stripe key, from s.
func redactKey(s, key string) string {
	if key != "" {
		s = strings.ReplaceAll(s, key, "[redacted]")
	}
	return stripeKeyText.ReplaceAllString(s, "[redacted key]")
}

// paymentError turns what stripe-go returned into a *PaymentError.
func paymentError(err error, key string) *PaymentError {
	var se *stripego.Error
	if errors.As(err, &se) {
		pe := &PaymentError{Code: string(se.Code), Message: redactKey(parley.Clip(se.Msg, 300), key)}
		switch {
		case se.HTTPStatusCode == http.StatusUnauthorized || se.HTTPStatusCode == http.StatusForbidden:
			pe.Kind = PaymentKeyRefused
		case se.HTTPStatusCode == http.StatusTooManyRequests || se.Type == "rate_limit_error":
			pe.Kind = PaymentRateLimited
		case se.HTTPStatusCode >= 500:
			pe.Kind = PaymentUnavailable
		default:
			pe.Kind = PaymentRefused
		}
		if pe.Message == "" {
			pe.Message = "Stripe gave no message (HTTP " + http.StatusText(se.HTTPStatusCode) + ")"
		}
		return pe
	}
	var ne net.Error
	var oe *outbound.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout(),
		errors.As(err, &oe) && oe.Kind == outbound.Timeout:
		return &PaymentError{Kind: PaymentTimeout, Message: "Stripe did not answer in time"}
	case errors.As(err, &oe):
		return &PaymentError{Kind: PaymentUnavailable, Message: "Stripe could not be reached: " + redactKey(oe.Error(), key)}
	}
	return &PaymentError{Kind: PaymentUnavailable, Message: "Stripe could not be reached"}
}
