package auth

import (
	"context"
	"net/url"
	"slices"
	"strings"

	"github.com/parley/parley/db/accounts"
)

// MaxStateLen bounds an authorization request's state (spec, Limits).
const MaxStateLen = 1000

// AuthorizationRequest is a valid authorization request (RFC 6749 4.1.1,
// with PKCE and a resource indicator).
type AuthorizationRequest struct {
	Client      accounts.OAuthClient
	RedirectURI string
	State       string
	Challenge   string
	Resource    string
	Scopes      []string
}

// AuthorizationError is a refused authorization request. Untrusted means the
// redirect URI is not (yet) known to be the client's: the error is shown as
// a page and never sent there. Otherwise it goes back to the client as
// error and error_description on the redirect URI.
type AuthorizationError struct {
	Untrusted   bool
	Code        string
	Description string
}

// ParseAuthorization validates an authorization request: the query of GET
// /oauth/authorize, or the dashboard's consent form carrying it; get reads
// one of its parameters.
func (o *OAuth) ParseAuthorization(ctx context.Context, get func(string) string) (AuthorizationRequest, *AuthorizationError) {
	var r AuthorizationRequest
	clientID := get("client_id")
	if clientID == "" {
		return r, &AuthorizationError{Untrusted: true, Description: "The request names no client (client_id is missing)."}
	}
	client, err := o.DB.OAuthClientByID(ctx, clientID)
	if err != nil {
		return r, &AuthorizationError{Untrusted: true, Description: "The app asking for access is not registered here (unknown client_id)."}
	}
	r.Client = client
	r.RedirectURI = get("redirect_uri")
	if r.RedirectURI == "" {
		return r, &AuthorizationError{Untrusted: true, Description: "The request names no redirect_uri."}
	}
	if !slices.Contains(client.RedirectURIs, r.RedirectURI) {
		return r, &AuthorizationError{Untrusted: true, Description: "The redirect_uri is not one this app registered (it must match exactly)."}
	}
	r.State = get("state")
	if len(r.State) > MaxStateLen {
		r.State = ""
		return r, &AuthorizationError{Code: "invalid_request", Description: "state is longer than 1000 characters"}
	}
	if rt := get("response_type"); rt != "code" {
		return r, &AuthorizationError{Code: "unsupported_response_type", Description: "response_type must be code"}
	}
	if m := get("code_challenge_method"); m != "S256" {
		return r, &AuthorizationError{Code: "invalid_request", Description: "code_challenge_method must be S256 (PKCE is required; plain is refused)"}
	}
	r.Challenge = get("code_challenge")
	if len(r.Challenge) != 43 || strings.ContainsFunc(r.Challenge, func(c rune) bool {
		return !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_')
	}) {
		return r, &AuthorizationError{Code: "invalid_request", Description: "code_challenge must be the base64url SHA-256 of the code verifier (43 characters)"}
	}
	// With a resource indicator (RFC 8707) the token is bound to it; without
	// one, its audience follows the scopes granted (OAuth.AudienceOf).
	r.Resource = get("resource")
	if r.Resource != "" && !slices.Contains(o.Resources(), r.Resource) {
		return r, &AuthorizationError{Code: "invalid_target", Description: "resource must be " + strings.Join(o.Resources(), " or ")}
	}
	for _, s := range FilterOAuthScopes(get("scope")) {
		if slices.Contains(client.Scopes, s) {
			r.Scopes = append(r.Scopes, s)
		}
	}
	if len(r.Scopes) == 0 {
		// No known scope asked for: the scopes the client registered, those
		// of the resource when it named one.
		for _, s := range client.Scopes {
			mcp := strings.HasPrefix(s, "mcp:")
			if r.Resource == "" || mcp == (r.Resource == o.MCPResource()) {
				r.Scopes = append(r.Scopes, s)
			}
		}
	}
	if r.Resource == "" && len(r.Scopes) > 0 {
		r.Resource = o.AudienceOf(r.Scopes)
	}
	if len(r.Scopes) == 0 {
		return r, &AuthorizationError{Code: "invalid_scope", Description: "none of the scopes asked for is one this app registered"}
	}
	return r, nil
}

// RedirectWith is the client's redirect URI with params added to its query.
func RedirectWith(redirectURI string, params url.Values) string {
	u, _ := url.Parse(redirectURI)
	q := u.Query()
	for k, v := range params {
		q[k] = v
	}
	u.RawQuery = q.Encode()
	return u.String()
}
