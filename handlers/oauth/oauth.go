// Package oauth is Parley's OAuth 2.1 authorization server: its metadata,
// client registration, authorization, token and revocation endpoints. The
// consent page between authorization and token is the dashboard's.
package oauth

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/manage"
)

// Handler answers the authorization server's endpoints.
type Handler struct {
	*handlers.Runtime
	DB *db.DB
	// Manage registers clients.
	Manage *manage.Service
	// OAuth issues and verifies the tokens.
	OAuth *auth.OAuth
}

// The authorization server's endpoints (RFC 8414, 7591, 6749, 7636, 7009,
// 8707; RFC 9728 for the resources' metadata).
const (
	oauthAuthorizePath = "/oauth/authorize"
	oauthTokenPath     = "/oauth/token"
	oauthRegisterPath  = "/oauth/register"
	oauthRevokePath    = "/oauth/revoke"
	oauthJWKSPath      = "/.well-known/jwks.json"
)

// Limits of the endpoints' input (the registration's own are the root
// package's, with its rules).
const (
	maxOAuthForm = 16 << 10
)

// oauthError is an error body of RFC 6749 section 5.2 (and RFC 7591 3.2.2).
type oauthError struct {
	Error       string `json:"error"`
	Description string `json:"error_description,omitempty"`
}

// oauthFail answers an OAuth error; 401 invalid_client also gets its
// WWW-Authenticate challenge.
func oauthFail(c echo.Context, status int, code, description string) error {
	h := c.Response().Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	return c.JSON(status, oauthError{Error: code, Description: description})
}

// authServerMetadata is RFC 8414's document.
type authServerMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint"`
	RevocationEndpoint                string   `json:"revocation_endpoint"`
	JWKSURI                           string   `json:"jwks_uri"`
	ScopesSupported                   []string `json:"scopes_supported"`
	ResponseTypesSupported            []string `json:"response_types_supported"`
	ResponseModesSupported            []string `json:"response_modes_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	RevocationEndpointAuthMethods     []string `json:"revocation_endpoint_auth_methods_supported"`
	AuthorizationResponseIssParameter bool     `json:"authorization_response_iss_parameter_supported"`
	ServiceDocumentation              string   `json:"service_documentation"`
}

// ShowAuthServerMetadata is /.well-known/oauth-authorization-server.
func (h *Handler) ShowAuthServerMetadata(c echo.Context) error {
	b := h.BaseURL
	return c.JSON(http.StatusOK, authServerMetadata{
		Issuer: b, AuthorizationEndpoint: b + oauthAuthorizePath, TokenEndpoint: b + oauthTokenPath,
		RegistrationEndpoint: b + oauthRegisterPath, RevocationEndpoint: b + oauthRevokePath, JWKSURI: b + oauthJWKSPath,
		ScopesSupported: auth.OAuthScopes, ResponseTypesSupported: []string{"code"}, ResponseModesSupported: []string{"query"},
		GrantTypesSupported:               []string{"authorization_code", "refresh_token"},
		CodeChallengeMethodsSupported:     []string{"S256"},
		TokenEndpointAuthMethodsSupported: []string{"none"}, RevocationEndpointAuthMethods: []string{"none"},
		AuthorizationResponseIssParameter: true, ServiceDocumentation: b + "/openapi.json",
	})
}

// resourceMetadata is RFC 9728's document.
type resourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name"`
	// ResourceDocumentation is the OpenAPI document, whose oauth2 scheme
	// says how a token's audience is chosen.
	ResourceDocumentation string `json:"resource_documentation"`
}

// ShowResourceMetadata is /.well-known/oauth-protected-resource: the
// management REST API, with the REST scopes.
func (h *Handler) ShowResourceMetadata(c echo.Context) error {
	return c.JSON(http.StatusOK, resourceMetadata{Resource: h.BaseURL, AuthorizationServers: []string{h.BaseURL},
		ScopesSupported: auth.RESTScopes, BearerMethodsSupported: []string{"header"}, ResourceName: "Parley management API",
		ResourceDocumentation: h.BaseURL + "/openapi.json"})
}

// ShowMCPResourceMetadata is /.well-known/oauth-protected-resource/mcp:
// Parley's MCP server, with the mcp: scopes.
func (h *Handler) ShowMCPResourceMetadata(c echo.Context) error {
	return c.JSON(http.StatusOK, resourceMetadata{Resource: h.OAuth.MCPResource(), AuthorizationServers: []string{h.BaseURL},
		ScopesSupported: auth.MCPScopes, BearerMethodsSupported: []string{"header"}, ResourceName: "Parley MCP server",
		ResourceDocumentation: h.BaseURL + "/openapi.json"})
}

// ShowJWKS is /.well-known/jwks.json: the public keys of access tokens.
func (h *Handler) ShowJWKS(c echo.Context) error {
	keys, err := h.OAuth.Keys.JWKS(c.Request().Context())
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "public, max-age=300")
	return c.JSON(http.StatusOK, jwks{Keys: keys})
}

// jwks is the JWK set of /.well-known/jwks.json (RFC 7517).
type jwks struct {
	Keys []auth.JWK `json:"keys"`
}

// registration is the body of POST /oauth/register, and its answer.
type registration struct {
	ClientID                string   `json:"client_id,omitempty"`
	ClientIDIssuedAt        int64    `json:"client_id_issued_at,omitempty"`
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	Scope                   string   `json:"scope"`
}

// registrationFields are the metadata a registration's problems name, in
// the order the first one found is answered: a bad redirect URI is
// invalid_redirect_uri, any other invalid_client_metadata (RFC 7591 3.2.2).
var registrationFields = []string{"redirect_uris", "token_endpoint_auth_method", "grant_types", "response_types", "client_name", "scope"}

// RegisterClient is RFC 7591 dynamic registration of a public client,
// through the management operations.
func (h *Handler) RegisterClient(c echo.Context) error {
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, maxOAuthForm+1))
	if err != nil || len(body) > maxOAuthForm {
		return oauthFail(c, http.StatusBadRequest, "invalid_client_metadata", "The body must be a JSON object of at most 16 KB")
	}
	var in registration
	if err := json.Unmarshal(body, &in); err != nil {
		return oauthFail(c, http.StatusBadRequest, "invalid_client_metadata", "The body must be a JSON object of client metadata: "+strings.TrimPrefix(err.Error(), "json: "))
	}
	client, err := h.Manage.RegisterOAuthClient(c.Request().Context(), parley.OAuthClientInput{
		ClientName: in.ClientName, RedirectURIs: in.RedirectURIs, GrantTypes: in.GrantTypes, ResponseTypes: in.ResponseTypes,
		TokenEndpointAuthMethod: in.TokenEndpointAuthMethod, Scope: in.Scope})
	if err != nil {
		var e *parley.Error
		if errors.As(err, &e) && e.Kind == parley.KindInvalid {
			problems, _ := e.Details.(map[string]string)
			for _, field := range registrationFields {
				if msg, bad := problems[field]; bad {
					code := "invalid_client_metadata"
					if field == "redirect_uris" {
						code = "invalid_redirect_uri"
					}
					return oauthFail(c, http.StatusBadRequest, code, field+": "+msg)
				}
			}
		}
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusCreated, registration{
		ClientID: client.ID, ClientIDIssuedAt: client.CreatedAt.Unix(), ClientName: client.Name,
		RedirectURIs: client.RedirectURIs, GrantTypes: []string{"authorization_code", "refresh_token"},
		ResponseTypes: []string{"code"}, TokenEndpointAuthMethod: "none", Scope: strings.Join(client.Scopes, " "),
	})
}

func clipText(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// Authorize is GET /oauth/authorize: it checks the request and sends a valid
// one to the dashboard's consent page (through the sign-in when needed).
func (h *Handler) Authorize(c echo.Context) error {
	q := c.QueryParams()
	r, e := h.OAuth.ParseAuthorization(c.Request().Context(), q.Get)
	if e != nil {
		return handlers.RefuseAuthorization(c, h.BaseURL, r, e)
	}
	return c.Redirect(http.StatusSeeOther, handlers.ConsentPath+"?"+c.Request().URL.RawQuery)
}

var errNoForm = errors.New("not form-encoded")

// oauthForm parses a form-encoded body of at most maxOAuthForm.
func oauthForm(c echo.Context) (url.Values, error) {
	req := c.Request()
	ct, _, _ := strings.Cut(req.Header.Get(echo.HeaderContentType), ";")
	if !strings.EqualFold(strings.TrimSpace(ct), echo.MIMEApplicationForm) {
		return nil, errNoForm
	}
	req.Body = http.MaxBytesReader(c.Response(), req.Body, maxOAuthForm)
	if err := req.ParseForm(); err != nil {
		return nil, err
	}
	return req.PostForm, nil
}
