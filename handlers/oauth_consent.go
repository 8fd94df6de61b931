package handlers

import (
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/views"
)

// ConsentPath is the dashboard's consent page, to which /oauth/authorize
// sends a valid request (the dashboard's session cookie is scoped to /admin).
const ConsentPath = "/admin/oauth/consent"

// RefuseAuthorization answers a refused authorization request, of
// /oauth/authorize or of the consent page: a page when the redirect URI is
// not trusted, else a redirect carrying the error, issued by issuer.
func RefuseAuthorization(c echo.Context, issuer string, r auth.AuthorizationRequest, e *auth.AuthorizationError) error {
	if e.Untrusted {
		return Render(c, http.StatusBadRequest, views.OAuthErrorPage(e.Description))
	}
	p := url.Values{"error": {e.Code}, "error_description": {e.Description}, "iss": {issuer}}
	if r.State != "" {
		p.Set("state", r.State)
	}
	return c.Redirect(http.StatusSeeOther, auth.RedirectWith(r.RedirectURI, p))
}
