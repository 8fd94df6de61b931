package public

import (
	"crypto/subtle"
	"net/url"
	"strconv"
	"strings"

	"github.com/parley/parley"
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
