package parley

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"unicode/utf8"
)

// A registered OAuth client's limits, chosen here.
const (
	MaxRedirectURIs   = 10
	MaxRedirectURILen = 2000 // bytes
	MaxClientName     = 200
)

// OAuthClientInput is a public client's metadata as it registers itself
// (RFC 7591), under the wire names its problems are reported with:
// client_name, redirect_uris, grant_types, response_types,
// token_endpoint_auth_method. Scope is not checked: unknown scopes are
// dropped silently, by the vocabulary's owner.
type OAuthClientInput struct {
	ClientName              string
	RedirectURIs            []string
	GrantTypes              []string
	ResponseTypes           []string
	TokenEndpointAuthMethod string
	Scope                   string
}

// Check normalises in (the name trimmed; without one, the host of the
// first redirect URI) and returns its problems: per field, the first
// found. Only public clients using the authorization code with PKCE and
// refresh tokens are registered.
func (in *OAuthClientInput) Check() FieldErrors {
	errs := FieldErrors{}
	if n := len(in.RedirectURIs); n == 0 || n > MaxRedirectURIs {
		errs.Add("redirect_uris", fmt.Sprintf("give between 1 and %d redirect URIs", MaxRedirectURIs))
	}
	for _, u := range in.RedirectURIs {
		if len(u) > MaxRedirectURILen {
			errs.Add("redirect_uris", fmt.Sprintf("at most %d characters each", MaxRedirectURILen))
		}
		if why := RedirectURIProblem(u); why != "" {
			errs.Add("redirect_uris", clipEllipsis(u, 100)+" "+why)
		}
	}
	switch in.TokenEndpointAuthMethod {
	case "", "none":
	default:
		errs.Add("token_endpoint_auth_method", `only public clients are registered here: use "none" (PKCE protects the code)`)
	}
	for _, g := range in.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			errs.Add("grant_types", "only authorization_code and refresh_token are supported")
		}
	}
	for _, r := range in.ResponseTypes {
		if r != "code" {
			errs.Add("response_types", "only code is supported")
		}
	}
	in.ClientName = strings.TrimSpace(in.ClientName)
	if _, bad := errs["redirect_uris"]; bad {
		return errs // the name may be the first redirect URI's host
	}
	if in.ClientName == "" {
		u, _ := url.Parse(in.RedirectURIs[0])
		in.ClientName = u.Hostname()
	}
	if utf8.RuneCountInString(in.ClientName) > MaxClientName || !storableText(in.ClientName) {
		errs.Add("client_name", fmt.Sprintf("at most %d characters of text", MaxClientName))
	}
	return errs
}

// RedirectURIProblem says why uri cannot be a client's redirect URI, or ""
// when it can: an absolute https URI, or http on the loopback (127.0.0.1,
// [::1], localhost) for native apps; no fragment, no user info.
func RedirectURIProblem(uri string) string {
	u, err := url.Parse(uri)
	switch {
	case err != nil || !u.IsAbs() || u.Host == "":
		return "must be an absolute URI"
	case u.Fragment != "" || strings.Contains(uri, "#"):
		return "must not have a fragment"
	case u.User != nil:
		return "must not carry user information"
	case u.Scheme == "https":
		return ""
	case u.Scheme == "http":
		h := u.Hostname()
		if h == "localhost" || net.ParseIP(h) != nil && net.ParseIP(h).IsLoopback() {
			return ""
		}
		return "must use https (plain http only on the loopback: 127.0.0.1, [::1] or localhost)"
	}
	return "must use https (plain http only on the loopback)"
}

// storableText reports whether s is text PostgreSQL stores (no NUL, no
// control characters).
func storableText(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || r == 0xfffd })
}

// clipEllipsis cuts s to n characters, marking the cut, for a value quoted
// in a problem.
func clipEllipsis(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
