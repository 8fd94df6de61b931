package handlers

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
)

// The gates POST /chat/{slug} passes before the agent runs. Each is a plain
// function of its inputs so that it can be tested without a request.

// originAllowed reports whether a chat request may come from the page that
// sent it, against the tenant's allowedDomains.
//
//   - An empty list allows every origin.
//   - The page is the Origin header's, else the Referer's scheme and host.
//     Only http and https pages count; an Origin of "null" (sandboxed frame,
//     file:// page) or one that does not parse is refused, since it cannot
//     be checked. Origin is not retried with Referer: a browser that sends
//     Origin means it.
//   - A request with neither header is allowed: browsers always send Origin
//     on a cross-origin POST (and on a same-origin one), so its absence means
//     a server-side caller such as an external AI agent, which the spec
//     serves on this endpoint and which could forge any header anyway. The
//     gate keeps other sites from embedding the widget, nothing more.
//   - Hosts compare case-insensitively, without a trailing dot. An entry
//     without a port matches any port; one with a port matches only that
//     port, the scheme's default port counting (example.com:443 matches
//     https://example.com).
//   - Entry forms: "*.example.com" matches every subdomain at any depth but
//     not example.com itself; any other entry matches that host and its www.
//     form, so the bare domain example.com covers example.com and
//     www.example.com, and an exact host such as shop.example.com covers
//     itself (and www.shop.example.com, which only its owner can serve). A
//     bare domain does not cover other subdomains: list *.example.com too.
func originAllowed(allowed []string, origin, referer string) bool {
	if len(allowed) == 0 {
		return true
	}
	page := strings.TrimSpace(origin)
	if page == "" {
		page = strings.TrimSpace(referer)
	}
	if page == "" {
		return true
	}
	host, port, ok := pageHost(page)
	if !ok {
		return false
	}
	for _, entry := range allowed {
		if domainEntryMatches(entry, host, port) {
			return true
		}
	}
	return false
}

// pageHost returns the lower-cased host and effective port of an http(s)
// origin or URL.
func pageHost(raw string) (host string, port int, ok bool) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil {
		return "", 0, false
	}
	host = strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "" {
		return "", 0, false
	}
	switch p := u.Port(); {
	case p != "":
		port, err = strconv.Atoi(p)
		if err != nil || port < 1 || port > 65535 {
			return "", 0, false
		}
	case u.Scheme == "https":
		port = 443
	default:
		port = 80
	}
	return host, port, true
}

// domainEntryMatches applies one allowedDomains entry; see originAllowed.
func domainEntryMatches(entry, host string, port int) bool {
	entry = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(entry)), ".")
	if h, p, found := strings.Cut(entry, ":"); found {
		want, err := strconv.Atoi(p)
		if err != nil || want != port {
			return false
		}
		entry = strings.TrimSuffix(h, ".")
	}
	if entry == "" {
		return false
	}
	if parent, ok := strings.CutPrefix(entry, "*."); ok {
		return parent != "" && strings.HasSuffix(host, "."+parent)
	}
	return host == entry || host == "www."+entry
}

// checkWidgetKey enforces the tenant's widget key, when it has one. The key
// travels in header X-Widget-Key (the widget reads it from the script tag's
// data-widget-key) or, for callers that cannot set headers, in the body field
// widgetKey; a non-empty header wins. The key is public on the tenant's pages,
// so it only keeps casual callers out; it is still compared in constant time.
func checkWidgetKey(t parley.Tenant, header, bodyKey string) error {
	if t.WidgetKey == nil || *t.WidgetKey == "" {
		return nil
	}
	given := strings.TrimSpace(header)
	if given == "" {
		given = strings.TrimSpace(bodyKey)
	}
	if given == "" || subtle.ConstantTimeCompare([]byte(given), []byte(*t.WidgetKey)) != 1 {
		return &parley.Error{Kind: parley.KindForbidden, Message: "Invalid or missing widget key"}
	}
	return nil
}

// CaptchaVerifier checks bot-challenge tokens against a siteverify endpoint:
// Cloudflare Turnstile's by default (PARLEY_CAPTCHA_VERIFY_URL), or any
// service speaking the same protocol (form secret, response, remoteip in;
// JSON {success, error-codes} out).
type CaptchaVerifier struct {
	URL string
	// Client makes the call; nil means a plain client with a 5-second
	// timeout. The address is the operator's, not a tenant's, so it needs
	// no SSRF guard.
	Client *http.Client
}

// maxCaptchaToken is Turnstile's documented maximum token length; longer
// tokens are refused without a call.
const maxCaptchaToken = 2048

// siteverifyResponse is the part of a siteverify answer Parley reads.
type siteverifyResponse struct {
	Success    bool     `json:"success"`
	ErrorCodes []string `json:"error-codes"`
}

// Verify reports whether the challenge service accepts token, solved by the
// visitor at remoteIP (optional), for the site whose secret is given. An
// error means the service could not give an answer.
func (v *CaptchaVerifier) Verify(ctx context.Context, secret, token, remoteIP string) (bool, error) {
	r, err := v.siteverify(ctx, secret, token, remoteIP)
	return r.Success, err
}

func (v *CaptchaVerifier) siteverify(ctx context.Context, secret, token, remoteIP string) (siteverifyResponse, error) {
	var out siteverifyResponse
	if v == nil || v.URL == "" {
		return out, errors.New("no siteverify address configured")
	}
	form := url.Values{"secret": {secret}, "response": {token}}
	if remoteIP != "" {
		form.Set("remoteip", remoteIP)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, v.URL, strings.NewReader(form.Encode()))
	if err != nil {
		return out, fmt.Errorf("building siteverify request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	client := v.Client
	if client == nil {
		client = &http.Client{Timeout: 5 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		return out, fmt.Errorf("calling siteverify: %w", err)
	}
	defer resp.Body.Close()
	body := io.LimitReader(resp.Body, 64<<10)
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, body)
		return out, fmt.Errorf("siteverify answered %s", resp.Status)
	}
	if err := json.NewDecoder(body).Decode(&out); err != nil {
		return siteverifyResponse{}, fmt.Errorf("reading siteverify answer: %w", err)
	}
	return out, nil
}

// checkCaptchaToken is the bot-challenge gate: nothing to do unless the
// tenant enabled it; then a missing token is CAPTCHA_REQUIRED and a refused
// one CAPTCHA_FAILED. When the token cannot be checked (service down or
// answering garbage, tenant secret missing or unreadable) the gate fails
// closed with CAPTCHA_FAILED and a message saying verification is
// unavailable, never a 5xx: the visitor can retry, and the cause is logged
// for the operator.
func checkCaptchaToken(ctx context.Context, v *CaptchaVerifier, box *auth.Box, logger *slog.Logger, t parley.Tenant, token, remoteIP string) error {
	if !t.CaptchaEnabled {
		return nil
	}
	token = strings.TrimSpace(token)
	if token == "" {
		return &parley.Error{Kind: parley.KindForbidden, Code: "CAPTCHA_REQUIRED",
			Message: "Bot challenge required: solve the challenge and send its token as captchaToken"}
	}
	failed := &parley.Error{Kind: parley.KindForbidden, Code: "CAPTCHA_FAILED", Message: "Bot challenge failed: solve it again"}
	if len(token) > maxCaptchaToken {
		return failed
	}
	unavailable := &parley.Error{Kind: parley.KindForbidden, Code: "CAPTCHA_FAILED",
		Message: "Bot challenge could not be verified right now (verification unavailable); try again shortly"}
	if len(t.CaptchaSecretKey) == 0 || box == nil {
		logger.Error("bot-challenge gate is on but the secret key is missing", "tenant", t.Slug)
		return unavailable
	}
	secret, err := box.Open(t.CaptchaSecretKey)
	if err != nil {
		logger.Error("cannot open the bot-challenge secret key", "tenant", t.Slug, "err", err)
		return unavailable
	}
	r, err := v.siteverify(ctx, string(secret), token, remoteIP)
	if err != nil {
		logger.Warn("bot-challenge verification unavailable", "tenant", t.Slug, "err", err)
		return unavailable
	}
	if !r.Success {
		// The codes tell a misconfigured secret (invalid-input-secret) from
		// a replayed or expired token; they are for the operator, not the visitor.
		logger.Info("bot challenge refused", "tenant", t.Slug, "error_codes", r.ErrorCodes)
		return failed
	}
	return nil
}

// Per-address chat limits (spec, Limits).
const (
	chatPerMinute = 20
	chatPerHour   = 200
)

// chatRateDetails is the details payload of a per-address rate-limit error;
// the handler copies RetryAfter into the Retry-After header.
type chatRateDetails struct {
	RetryAfter int `json:"retryAfter"`
}

// chatRateLimit counts one chat message from ip against 20 a minute and 200
// an hour, in fixed windows kept in Postgres so that every instance shares
// them. Both counters are read first and a refused message counts against
// neither, so a client retrying while blocked is not blocked for longer; an
// accepted message adds one to each. The counts returned by that addition
// decide again, so concurrent requests racing past the read still cannot
// exceed a limit. An IPv6 address counts as its /64, which one subscriber
// usually holds whole.
func chatRateLimit(ctx context.Context, store *db.DB, ip string, now time.Time) error {
	who := rateLimitAddr(ip)
	windows := []db.Window{
		{Key: "chat:ip:min:" + who, Length: time.Minute, Limit: chatPerMinute},
		{Key: "chat:ip:hour:" + who, Length: time.Hour, Limit: chatPerHour},
	}
	counts, counted, err := store.HitWithin(ctx, windows, now)
	if err != nil {
		return err
	}
	var wait time.Duration
	for i, w := range windows {
		// Refused before counting: at the limit. Counted: past it (a race).
		if !counted && counts[i] >= w.Limit || counted && counts[i] > w.Limit {
			wait = max(wait, windowLeft(now, w.Length))
		}
	}
	if wait == 0 {
		return nil
	}
	secs := max(1, int(math.Ceil(wait.Seconds())))
	return &parley.Error{
		Kind: parley.KindRateLimited,
		Message: fmt.Sprintf("Too many messages: at most %d a minute and %d an hour from one address; retry in %d seconds",
			chatPerMinute, chatPerHour, secs),
		Details: chatRateDetails{RetryAfter: secs},
	}
}

// windowLeft is the time from now to the end of the fixed window holding now.
func windowLeft(now time.Time, window time.Duration) time.Duration {
	return now.Truncate(window).Add(window).Sub(now)
}

// rateLimitAddr is what a per-address limit counts against: the IPv4 address
// (IPv4-mapped IPv6 included), or the /64 of an IPv6 address. Anything that
// is not an address is used as given.
func rateLimitAddr(ip string) string {
	a, err := netip.ParseAddr(strings.TrimSpace(ip))
	if err != nil {
		return ip
	}
	a = a.Unmap().WithZone("")
	if a.Is4() {
		return a.String()
	}
	p, err := a.Prefix(64)
	if err != nil {
		return a.String()
	}
	return p.String()
}

// retryAfterSeconds returns the wait a chat rate-limit error asks for, for
// the Retry-After header.
func retryAfterSeconds(err error) (int, bool) {
	var e *parley.Error
	if !errors.As(err, &e) || e.Kind != parley.KindRateLimited {
		return 0, false
	}
	d, ok := e.Details.(chatRateDetails)
	return d.RetryAfter, ok
}
