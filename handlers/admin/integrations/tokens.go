package integrations

import (
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db/accounts"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/views"
)

// sessNewToken holds a just-created token until the page after the
// redirect shows it, once.
const sessNewToken = "newToken"

func tokenRow(t accounts.APIToken) views.TokenRow {
	r := views.TokenRow{
		ID: t.ID, Name: t.Name, Prefix: t.DisplayPrefix, Scopes: t.Scopes,
		CreatedAt: t.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"), LastUsed: "never",
		Revoked: t.RevokedAt != nil, Legacy: t.Legacy,
	}
	if t.LastUsedAt != nil {
		r.LastUsed = t.LastUsedAt.UTC().Format("2006-01-02 15:04 UTC")
	}
	return r
}

func (h *Integrations) tokensView(c echo.Context, v views.TokensView) (views.TokensView, error) {
	ts, err := h.Manage.ListTokens(c.Request().Context(), dash.AdminFrom(c).Tenant.ID)
	if err != nil {
		return v, err
	}
	for _, t := range ts {
		v.Tokens = append(v.Tokens, tokenRow(t))
	}
	v.Scopes = auth.RESTScopes
	return v, nil
}

// ShowTokensPage renders the API tokens page, with a just-created token shown
// once, and a curl command that uses it.
func (h *Integrations) ShowTokensPage(c echo.Context) error {
	v, err := h.tokensView(c, views.TokensView{
		NewToken: h.Sessions.PopString(c.Request().Context(), sessNewToken),
		Chosen:   map[string]bool{},
	})
	if err != nil {
		return err
	}
	if v.NewToken != "" {
		// The newest token the new one starts with is the new one (the
		// list is live tokens first, newest first).
		for _, t := range v.Tokens {
			if strings.HasPrefix(v.NewToken, t.Prefix) {
				v.NewTokenCurl = curlLine(h.BaseURL, dash.AdminFrom(c).Tenant.Slug, v.NewToken, t.Scopes)
				break
			}
		}
	}
	return handlers.Render(c, http.StatusOK, views.TokensPage(dash.Page(c, h.Sessions, "API tokens", "tokens"), v))
}

// SaveToken creates a token with the chosen scopes through the management
// operations; the token is shown once after the redirect.
func (h *Integrations) SaveToken(c echo.Context) error {
	a := dash.AdminFrom(c)
	form, err := c.FormParams()
	if err != nil {
		return handlers.Invalid("Could not read the form")
	}
	token, _, err := h.Manage.CreateToken(c.Request().Context(), a.Tenant.ID,
		parley.TokenInput{Name: form.Get("name"), Scopes: form["scopes"]})
	if err != nil {
		fe, status, ok := dash.FailedForm(err)
		if !ok {
			return err
		}
		chosen := map[string]bool{}
		for _, s := range form["scopes"] {
			chosen[s] = true
		}
		v, err := h.tokensView(c, views.TokensView{Name: strings.TrimSpace(form.Get("name")), Chosen: chosen, Errors: fe})
		if err != nil {
			return err
		}
		return handlers.Render(c, status, views.TokensPage(dash.Page(c, h.Sessions, "API tokens", "tokens"), v))
	}
	h.Sessions.Put(c.Request().Context(), sessNewToken, token)
	return c.Redirect(http.StatusSeeOther, "/admin/tokens")
}

// RevokeToken revokes one of the tenant's tokens; htmx gets the updated row.
func (h *Integrations) RevokeToken(c echo.Context) error {
	a := dash.AdminFrom(c)
	ctx := c.Request().Context()
	id := c.Param("id")
	if err := h.Manage.RevokeToken(ctx, a.Tenant.ID, id); err != nil {
		return err
	}
	if c.Request().Header.Get("HX-Request") != "true" {
		h.Sessions.Put(ctx, dash.SessFlash, "Token revoked.")
		return c.Redirect(http.StatusSeeOther, "/admin/tokens")
	}
	ts, err := h.Manage.ListTokens(ctx, a.Tenant.ID)
	if err != nil {
		return err
	}
	for _, t := range ts {
		if t.ID == id {
			return handlers.Render(c, http.StatusOK, views.TokenRowView(views.Page{CSRF: dash.CSRFToken(c)}, tokenRow(t)))
		}
	}
	return parley.Errorf(parley.KindNotFound, "Token not found")
}

// tryPaths are, by read scope, the GET a new token may make at once under
// /tenants/{slug}, in the order the curl command prefers them.
var tryPaths = []struct{ scope, path string }{
	{auth.ScopeSettingsRead, ""},
	{auth.ScopeCorpusRead, "/corpus"},
	{auth.ScopeConversationsRead, "/conversations"},
	{auth.ScopeVisitorsRead, "/visitors"},
	{auth.ScopeSegmentsRead, "/segments"},
	{auth.ScopeToolsRead, "/tools"},
	{auth.ScopeStatsRead, "/conversations/stats"},
	{auth.ScopeAuditRead, "/audit-log"},
}

// curlLine is a command that calls the API with token, on a GET its scopes
// allow; "" when they allow none (a token that only writes). Tokens, slugs
// and the base URL hold no character a shell would read.
func curlLine(baseURL, slug, token string, scopes []string) string {
	for _, p := range tryPaths {
		if slices.Contains(scopes, p.scope) {
			return `curl -H "Authorization: Bearer ` + token + `" ` + baseURL + "/tenants/" + slug + p.path
		}
	}
	return ""
}
