package admin

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/db/accounts"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/views"
)

// consentFields are the authorization request's parameters, carried from
// /oauth/authorize through the sign-in to the consent form.
var consentFields = []string{"response_type", "client_id", "redirect_uri", "scope", "state", "code_challenge", "code_challenge_method", "resource"}

// ShowConsentPage asks the signed-in owner whether the client may act on
// their current tenant, with each scope in words.
func (h *Account) ShowConsentPage(c echo.Context) error {
	q := c.QueryParams()
	r, e := h.OAuth.ParseAuthorization(c.Request().Context(), q.Get)
	if e != nil {
		return handlers.RefuseAuthorization(c, h.BaseURL, r, e)
	}
	a := dash.AdminFrom(c)
	u, _ := url.Parse(r.RedirectURI)
	v := views.ConsentView{
		ClientName: r.Client.Name, RedirectHost: u.Host, TenantName: a.Tenant.Name, TenantSlug: a.Tenant.Slug,
		Scopes: r.Scopes, CSRF: dash.CSRFToken(c), UserEmail: a.User.Email,
	}
	v.Scopes, v.Withheld = roleScopes(a.Role, r.Scopes)
	v.Role = a.Role
	for _, aud := range strings.Fields(r.Resource) {
		v.API = v.API || aud == h.OAuth.Issuer
		v.MCP = v.MCP || aud == h.OAuth.MCPResource()
	}
	if len(a.Memberships) > 1 {
		for _, m := range a.Memberships {
			v.Tenants = append(v.Tenants, views.TenantOption{Slug: m.TenantSlug, Name: m.TenantName, Current: m.TenantID == a.Tenant.ID})
		}
	}
	for _, k := range consentFields {
		if val := q.Get(k); val != "" {
			v.Fields = append(v.Fields, views.HiddenField{Name: k, Value: val})
		}
	}
	return handlers.Render(c, http.StatusOK, views.ConsentPage(v))
}

// SaveConsent is the owner's answer: approve sends the client an
// authorization code for the tenant chosen (one of the owner's; the one
// they are administering by default), deny sends access_denied.
func (h *Account) SaveConsent(c echo.Context) error {
	r, e := h.OAuth.ParseAuthorization(c.Request().Context(), c.FormValue)
	if e != nil {
		return handlers.RefuseAuthorization(c, h.BaseURL, r, e)
	}
	if c.FormValue("decision") != "approve" {
		return handlers.RefuseAuthorization(c, h.BaseURL, r, &auth.AuthorizationError{Code: "access_denied", Description: "The owner denied access"})
	}
	a := dash.AdminFrom(c)
	tenantID, role := a.Tenant.ID, a.Role
	if slug := c.FormValue("tenant"); slug != "" {
		tenantID = ""
		for _, m := range a.Memberships {
			if m.TenantSlug == slug {
				tenantID, role = m.TenantID, m.Role
			}
		}
		if tenantID == "" {
			return handlers.Render(c, http.StatusNotFound, views.ErrorPage(http.StatusNotFound, "You do not administer that tenant."))
		}
	}
	// A person grants only what their role in the tenant holds.
	scopes, _ := roleScopes(role, r.Scopes)
	if len(scopes) == 0 {
		return handlers.RefuseAuthorization(c, h.BaseURL, r, &auth.AuthorizationError{Code: "access_denied",
			Description: "The person's role in the tenant cannot grant any of the scopes asked for"})
	}
	code, err := h.Manage.CreateOAuthCode(c.Request().Context(), accounts.OAuthCode{
		ClientID: r.Client.ID, TenantID: tenantID, UserID: a.User.ID, RedirectURI: r.RedirectURI,
		Scopes: scopes, Resource: r.Resource, CodeChallenge: r.Challenge,
	}, h.Clock())
	if err != nil {
		return err
	}
	p := url.Values{"code": {code}, "iss": {h.BaseURL}}
	if r.State != "" {
		p.Set("state", r.State)
	}
	return c.Redirect(http.StatusSeeOther, auth.RedirectWith(r.RedirectURI, p))
}

// ShowConnectedAppsPage lists the OAuth clients holding live grants on the
// tenant.
func (h *Account) ShowConnectedAppsPage(c echo.Context) error {
	a := dash.AdminFrom(c)
	apps, err := h.Manage.ConnectedApps(c.Request().Context(), a.Tenant.ID, h.Clock())
	if err != nil {
		return err
	}
	var rows []views.ConnectedAppRow
	for _, app := range apps {
		// The scopes in the order the consent page showed them.
		slices.SortFunc(app.Scopes, func(x, y string) int {
			return slices.Index(auth.OAuthScopes, x) - slices.Index(auth.OAuthScopes, y)
		})
		row := views.ConnectedAppRow{ClientID: app.ClientID, Name: app.ClientName, Scopes: app.Scopes,
			AuthorizedAt: app.AuthorizedAt.Format("2 Jan 2006 15:04"), LastUsed: "never"}
		if len(app.RedirectURIs) > 0 {
			if u, err := url.Parse(app.RedirectURIs[0]); err == nil {
				row.Host = u.Host
			}
		}
		if app.LastUsedAt != nil {
			row.LastUsed = app.LastUsedAt.Format("2 Jan 2006 15:04")
		}
		rows = append(rows, row)
	}
	return handlers.Render(c, http.StatusOK, views.ConnectedAppsPage(dash.Page(c, h.Sessions, "Connected apps", "connected-apps"), rows))
}

// RevokeConnectedApp revokes every grant of a client on the tenant: its
// access and refresh tokens stop working at once.
func (h *Account) RevokeConnectedApp(c echo.Context) error {
	a := dash.AdminFrom(c)
	ctx := c.Request().Context()
	if err := h.Manage.RevokeConnectedApp(ctx, a.Tenant.ID, c.Param("client"), h.Clock()); err != nil {
		return err
	}
	h.Sessions.Put(ctx, dash.SessFlash, "Access revoked: the app can no longer act on your tenant.")
	return c.Redirect(http.StatusSeeOther, "/admin/connected-apps")
}

// roleScopes splits the scopes asked for into those a member of role may
// grant and those withheld.
func roleScopes(role string, asked []string) (granted, withheld []string) {
	for _, s := range asked {
		if auth.RoleGrants(role, s) {
			granted = append(granted, s)
		} else {
			withheld = append(withheld, s)
		}
	}
	return granted, withheld
}
