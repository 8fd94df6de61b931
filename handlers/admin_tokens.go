package handlers

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/views"
)

const maxTokenName = 100

func tokenRow(t db.APIToken) views.TokenRow {
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

func (h *Handler) tokensView(c echo.Context, v views.TokensView) (views.TokensView, error) {
	ts, err := h.DB.ListTokens(c.Request().Context(), adminFrom(c).Tenant.ID)
	if err != nil {
		return v, err
	}
	for _, t := range ts {
		v.Tokens = append(v.Tokens, tokenRow(t))
	}
	v.Scopes = auth.RESTScopes
	return v, nil
}

// ShowTokensPage renders the API tokens page, with a just-created token shown once.
func (h *Handler) ShowTokensPage(c echo.Context) error {
	v, err := h.tokensView(c, views.TokensView{
		NewToken: h.Sessions.PopString(c.Request().Context(), sessNewToken),
		Chosen:   map[string]bool{},
	})
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.TokensPage(h.page(c, "API tokens", "tokens"), v))
}

// SaveToken creates a token with the chosen scopes; the token is shown once after the redirect.
func (h *Handler) SaveToken(c echo.Context) error {
	a := adminFrom(c)
	form, err := c.FormParams()
	if err != nil {
		return invalid("Could not read the form")
	}
	name := strings.TrimSpace(form.Get("name"))
	errs := parley.FieldErrors{}
	if name == "" {
		errs.Add("name", "Give the token a name, so you know later what uses it.")
	} else if utf8.RuneCountInString(name) > maxTokenName {
		errs.Add("name", parley.TooLong(maxTokenName))
	}
	scopes, scopeErr := auth.CheckScopes(form["scopes"])
	switch {
	case len(form["scopes"]) == 0:
		errs.Add("scopes", "Choose at least one scope.")
	case scopeErr != nil:
		errs.Add("scopes", scopeErr.Error()) // names the unknown scope
	}
	if len(errs) > 0 {
		chosen := map[string]bool{}
		for _, s := range form["scopes"] {
			chosen[s] = true
		}
		v, err := h.tokensView(c, views.TokensView{Name: name, Chosen: chosen, Errors: views.Errors(errs)})
		if err != nil {
			return err
		}
		return render(c, http.StatusUnprocessableEntity, views.TokensPage(h.page(c, "API tokens", "tokens"), v))
	}
	token, nt := auth.NewToken(a.Tenant.ID, name, scopes, false)
	if _, err := h.DB.CreateToken(c.Request().Context(), nt); err != nil {
		return err
	}
	h.Sessions.Put(c.Request().Context(), sessNewToken, token)
	return c.Redirect(http.StatusSeeOther, "/admin/tokens")
}

// RevokeToken revokes one of the tenant's tokens; htmx gets the updated row.
func (h *Handler) RevokeToken(c echo.Context) error {
	a := adminFrom(c)
	ctx := c.Request().Context()
	id := c.Param("id")
	if err := h.DB.RevokeToken(ctx, a.Tenant.ID, id); err != nil {
		return err
	}
	if c.Request().Header.Get("HX-Request") != "true" {
		h.Sessions.Put(ctx, sessFlash, "Token revoked.")
		return c.Redirect(http.StatusSeeOther, "/admin/tokens")
	}
	ts, err := h.DB.ListTokens(ctx, a.Tenant.ID)
	if err != nil {
		return err
	}
	for _, t := range ts {
		if t.ID == id {
			return render(c, http.StatusOK, views.TokenRowView(views.Page{CSRF: csrfToken(c)}, tokenRow(t)))
		}
	}
	return parley.Errorf(parley.KindNotFound, "Token not found")
}
