// Package stripetest is an in-process stand-in for the part of Stripe's
// API the payment connector uses, for tests: it speaks the real wire
// protocol, so that package stripe's client (stripe-go underneath) runs as
// it does against Stripe.
package stripetest

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server speaks the part of Stripe's API the payment connector uses:
// GET /v1/account and POST /v1/payment_links, with Stripe's form-encoded
// requests, its JSON objects and error shape ({"error": {type, code,
// message, param}}), the Bearer key check, and Idempotency-Key replays.
type Server struct {
	*httptest.Server
	mu sync.Mutex
	// keys are the keys Stripe takes, with the account's name; restricted
	// keys in noAccount may not read the account (403).
	keys      map[string]string
	noAccount map[string]bool
	// fail answers the next requests with these errors, in turn.
	fail []stripeFailure
	// delay holds the next requests this long.
	delay    time.Duration
	requests []Request
	links    int
	replays  map[string]stripeReplay // by Idempotency-Key
}

type stripeFailure struct {
	status          int
	typ, code, text string
}

// Request is one request the fake received.
type Request struct {
	Method, Path, Key, IdempotencyKey, Version string
	Form                                       url.Values
	// HostInfo is stripe-go's X-Stripe-Client-User-Agent, which names the host.
	HostInfo string
}

type stripeReplay struct {
	form url.Values
	body []byte
}

// stripeCurrenciesFake is what the fake charges in (a few).
var stripeCurrenciesFake = []string{"usd", "eur", "gbp", "jpy", "kwd"}

// Start starts a server, closed when the test ends; it takes no key until
// AddKey.
func Start(t *testing.T) *Server {
	t.Helper()
	f := &Server{keys: map[string]string{}, noAccount: map[string]bool{}, replays: map[string]stripeReplay{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

// AddKey makes Stripe take key, for an account named name.
func (f *Server) AddKey(key, name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keys[key] = name
}

// RestrictKey makes key a restricted key, which may not read the account
// (403).
func (f *Server) RestrictKey(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.noAccount[key] = true
}

// FailNext makes the next request fail with Stripe's error.
func (f *Server) FailNext(status int, typ, code, text string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = append(f.fail, stripeFailure{status, typ, code, text})
}

// SetDelay holds the next requests d before answering (0: at once).
func (f *Server) SetDelay(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.delay = d
}

// Received returns the requests received so far.
func (f *Server) Received() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

func stripeError(w http.ResponseWriter, status int, typ, code, msg, param string) {
	e := map[string]any{"type": typ, "message": msg}
	if code != "" {
		e["code"] = code
	}
	if param != "" {
		e["param"] = param
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", "req_fake")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": e})
}

// masked is how Stripe names a key in its messages.
func masked(key string) string {
	if i := strings.LastIndex(key, "_"); i > 0 && len(key) > 4 {
		return key[:i+1] + "****" + key[len(key)-4:]
	}
	return "****"
}

func (f *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := Request{Method: r.Method, Path: r.URL.Path, IdempotencyKey: r.Header.Get("Idempotency-Key"),
		Version: r.Header.Get("Stripe-Version"), HostInfo: r.Header.Get("X-Stripe-Client-User-Agent")}
	req.Key, _ = strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if r.Method == http.MethodPost {
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/x-www-form-urlencoded" {
			stripeError(w, 400, "invalid_request_error", "", "Invalid request: bodies must be form-encoded", "")
			return
		}
		var err error
		if req.Form, err = url.ParseQuery(string(body)); err != nil {
			stripeError(w, 400, "invalid_request_error", "", "Invalid request: malformed form body", "")
			return
		}
	}
	f.mu.Lock()
	f.requests = append(f.requests, req)
	delay := f.delay
	var fail *stripeFailure
	if len(f.fail) > 0 {
		fail = &f.fail[0]
		f.fail = f.fail[1:]
	}
	name, known := f.keys[req.Key]
	noAccount := f.noAccount[req.Key]
	f.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	switch {
	case req.Key == "":
		stripeError(w, 401, "invalid_request_error", "", "You did not provide an API key.", "")
		return
	case !known:
		stripeError(w, 401, "invalid_request_error", "api_key_invalid", "Invalid API Key provided: "+masked(req.Key), "")
		return
	case fail != nil:
		stripeError(w, fail.status, fail.typ, fail.code, fail.text, "")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", "req_fake")
	live := strings.Contains(req.Key, "_live_")
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/v1/account":
		if noAccount {
			stripeError(w, 403, "invalid_request_error", "", "The provided key '"+masked(req.Key)+"' does not have the required permissions for this endpoint on account 'acct_fake'.", "")
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "acct_fake" + strconv.Itoa(len(name)), "object": "account",
			"country": "FR", "charges_enabled": true, "settings": map[string]any{"dashboard": map[string]any{"display_name": name}},
			"business_profile": map[string]any{"name": name}})
	case r.Method == http.MethodPost && r.URL.Path == "/v1/payment_links":
		f.createLink(w, req, live)
	default:
		stripeError(w, 404, "invalid_request_error", "resource_missing", "Unrecognized request URL ("+r.Method+": "+r.URL.Path+").", "")
	}
}

func (f *Server) createLink(w http.ResponseWriter, req Request, live bool) {
	form := req.Form
	if req.IdempotencyKey != "" {
		f.mu.Lock()
		prev, seen := f.replays[req.IdempotencyKey]
		f.mu.Unlock()
		if seen {
			if prev.form.Encode() != form.Encode() {
				stripeError(w, 400, "idempotency_error", "", "Keys for idempotent requests can only be used with the same parameters they were first used with.", "")
				return
			}
			w.Header().Set("Idempotent-Replayed", "true")
			_, _ = w.Write(prev.body)
			return
		}
	}
	currency := form.Get("line_items[0][price_data][currency]")
	amount, err := strconv.ParseInt(form.Get("line_items[0][price_data][unit_amount]"), 10, 64)
	switch {
	case !slices.Contains(stripeCurrenciesFake, currency):
		stripeError(w, 400, "invalid_request_error", "", "Invalid currency: "+currency+".", "line_items[0][price_data][currency]")
		return
	case err != nil || amount < 0:
		stripeError(w, 400, "invalid_request_error", "parameter_invalid_integer", "Invalid integer: "+form.Get("line_items[0][price_data][unit_amount]"), "line_items[0][price_data][unit_amount]")
		return
	case currency == "usd" && amount < 50:
		stripeError(w, 400, "invalid_request_error", "amount_too_small", "The Checkout Session's total amount due must add up to at least $0.50 usd", "")
		return
	case form.Get("line_items[0][price_data][product_data][name]") == "" || form.Get("line_items[0][quantity]") == "":
		stripeError(w, 400, "invalid_request_error", "parameter_missing", "Missing required param: line_items[0][price_data][product_data][name].", "line_items")
		return
	}
	f.mu.Lock()
	f.links++
	id := fmt.Sprintf("plink_fake%d", f.links)
	f.mu.Unlock()
	prefix := "test_"
	if live {
		prefix = ""
	}
	body, _ := json.Marshal(map[string]any{"id": id, "object": "payment_link", "active": true, "livemode": live,
		"url": "https://buy.stripe.com/" + prefix + id, "currency": currency, "metadata": map[string]any{}})
	if req.IdempotencyKey != "" {
		f.mu.Lock()
		f.replays[req.IdempotencyKey] = stripeReplay{form: form, body: body}
		f.mu.Unlock()
	}
	_, _ = w.Write(body)
}
