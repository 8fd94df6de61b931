package handlers

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/parley/parley"
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
