package parley_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/parley/parley"
)

// A client's registration rules: redirect URIs at their limits and one
// past, refused kinds of URI, the metadata only a public code client may
// send, and the name's default and limit.
func TestOAuthClientRules(t *testing.T) {
	t.Parallel()
	const cb = "https://app.example/cb"
	uris := func(n int) []string {
		u := make([]string, n)
		for i := range u {
			u[i] = fmt.Sprintf("%s%d", cb, i)
		}
		return u
	}
	long := func(n int) string { return cb + "?q=" + strings.Repeat("x", n-len(cb)-3) }
	for name, c := range map[string]struct {
		in    parley.OAuthClientInput
		field string
		want  string
	}{
		"OneURI":             {parley.OAuthClientInput{RedirectURIs: uris(1)}, "", ""},
		"NoURI":              {parley.OAuthClientInput{ClientName: "x"}, "redirect_uris", "give between 1 and 10 redirect URIs"},
		"URIsAtLimit":        {parley.OAuthClientInput{RedirectURIs: uris(parley.MaxRedirectURIs)}, "", ""},
		"URIsPastLimit":      {parley.OAuthClientInput{RedirectURIs: uris(parley.MaxRedirectURIs + 1)}, "redirect_uris", "give between 1 and 10 redirect URIs"},
		"URIAtLength":        {parley.OAuthClientInput{RedirectURIs: []string{long(parley.MaxRedirectURILen)}}, "", ""},
		"URIPastLength":      {parley.OAuthClientInput{RedirectURIs: []string{long(parley.MaxRedirectURILen + 1)}}, "redirect_uris", "at most 2000 characters each"},
		"PlainHTTP":          {parley.OAuthClientInput{RedirectURIs: []string{"http://app.example/cb"}}, "redirect_uris", "http://app.example/cb must use https"},
		"Fragment":           {parley.OAuthClientInput{RedirectURIs: []string{cb + "#x"}}, "redirect_uris", cb + "#x must not have a fragment"},
		"Relative":           {parley.OAuthClientInput{RedirectURIs: []string{"/cb"}}, "redirect_uris", "/cb must be an absolute URI"},
		"SecondURIBad":       {parley.OAuthClientInput{RedirectURIs: []string{cb, "https://u:p@app.example/cb"}}, "redirect_uris", "https://u:p@app.example/cb must not carry user information"},
		"BadURIClipped":      {parley.OAuthClientInput{RedirectURIs: []string{"/" + strings.Repeat("c", 150)}}, "redirect_uris", "/" + strings.Repeat("c", 99) + "… must be an absolute URI"},
		"PublicClient":       {parley.OAuthClientInput{RedirectURIs: uris(1), TokenEndpointAuthMethod: "none"}, "", ""},
		"Confidential":       {parley.OAuthClientInput{RedirectURIs: uris(1), TokenEndpointAuthMethod: "client_secret_basic"}, "token_endpoint_auth_method", `only public clients are registered here: use "none"`},
		"CodeGrants":         {parley.OAuthClientInput{RedirectURIs: uris(1), GrantTypes: []string{"authorization_code", "refresh_token"}}, "", ""},
		"ClientCredentials":  {parley.OAuthClientInput{RedirectURIs: uris(1), GrantTypes: []string{"authorization_code", "client_credentials"}}, "grant_types", "only authorization_code and refresh_token are supported"},
		"Implicit":           {parley.OAuthClientInput{RedirectURIs: uris(1), ResponseTypes: []string{"token"}}, "response_types", "only code is supported"},
		"NameAtLimit":        {parley.OAuthClientInput{RedirectURIs: uris(1), ClientName: strings.Repeat("é", parley.MaxClientName)}, "", ""},
		"NamePastLimit":      {parley.OAuthClientInput{RedirectURIs: uris(1), ClientName: strings.Repeat("é", parley.MaxClientName+1)}, "client_name", "at most 200 characters of text"},
		"NameControl":        {parley.OAuthClientInput{RedirectURIs: uris(1), ClientName: "Claude\x00"}, "client_name", "at most 200 characters of text"},
		"NameNotUTF8":        {parley.OAuthClientInput{RedirectURIs: uris(1), ClientName: "Cl\xffaude"}, "client_name", "at most 200 characters of text"},
		"DefaultNamePastMax": {parley.OAuthClientInput{RedirectURIs: []string{"https://" + strings.Repeat("h", parley.MaxClientName+1) + ".example/cb"}}, "client_name", "at most 200 characters of text"},
	} {
		errs := c.in.Check()
		if c.field == "" {
			if len(errs) != 0 {
				t.Errorf("%s: %v", name, errs)
			}
			continue
		}
		if !strings.HasPrefix(errs[c.field], c.want) {
			t.Errorf("%s: %s is %q, want %q (all: %v)", name, c.field, errs[c.field], c.want, errs)
		}
	}

	t.Run("NameDefaultsToHost", func(t *testing.T) {
		t.Parallel()
		in := parley.OAuthClientInput{ClientName: "  ", RedirectURIs: []string{"https://app.example:8443/cb"}}
		if errs := in.Check(); len(errs) != 0 || in.ClientName != "app.example" {
			t.Errorf("name %q (%v)", in.ClientName, errs)
		}
		in = parley.OAuthClientInput{ClientName: " Claude ", RedirectURIs: []string{cb}}
		if errs := in.Check(); len(errs) != 0 || in.ClientName != "Claude" {
			t.Errorf("name %q (%v)", in.ClientName, errs)
		}
	})
}

// Redirect URIs: https anywhere, plain http only on the loopback; never a
// fragment or user information.
func TestRedirectURIProblem(t *testing.T) {
	t.Parallel()
	for uri, ok := range map[string]bool{
		"https://app.example/cb":          true,
		"https://app.example:8443/cb?x=1": true,
		"http://127.0.0.1:3000/cb":        true,
		"http://[::1]:3000/cb":            true,
		"http://localhost/cb":             true,
		"http://app.example/cb":           false,
		"http://127.0.0.1.evil.example/":  false,
		"http://localhost.evil.example/":  false,
		"https://app.example/cb#frag":     false,
		"https://app.example/cb#":         false,
		"https://user:pw@app.example/cb":  false,
		"/cb":                             false,
		"javascript:alert(1)":             false,
		"custom-app:/cb":                  false,
		"":                                false,
	} {
		if got := parley.RedirectURIProblem(uri) == ""; got != ok {
			t.Errorf("RedirectURIProblem(%q) accepts = %v, want %v", uri, got, ok)
		}
	}
}
