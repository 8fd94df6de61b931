package admin

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/views"
)

// synonymsPath is the dashboard's synonyms page, under the knowledge base.
const synonymsPath = "/admin/corpus/synonyms"

// splitTerms reads the terms of the synonyms field: separated by commas,
// empty pieces (a trailing comma) left out.
func splitTerms(s string) []string {
	var out []string
	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// synonymProblem says in the owner's words why terms were refused, for a
// KindInvalid error of the store; ok is false for any other error.
func synonymProblem(terms []string, err error) (msg string, ok bool) {
	var e *parley.Error
	if !errors.As(err, &e) || e.Kind != parley.KindInvalid {
		return "", false
	}
	if len(terms) < parley.MinSynonymTerms || len(terms) > parley.MaxSynonymTerms {
		return fmt.Sprintf("Give %d to %d words or phrases, separated by commas.", parley.MinSynonymTerms, parley.MaxSynonymTerms), true
	}
	if d, _ := e.Details.(map[string]string); d["terms"] != "" {
		return "Words and phrases " + d["terms"] + ".", true
	}
	return e.Message, true
}

// synonymsView loads the page's list of groups.
func (h *core) synonymsView(c echo.Context) (views.SynonymsView, error) {
	groups, err := h.Manage.ListSynonyms(c.Request().Context(), dash.AdminFrom(c).Tenant.ID)
	if err != nil {
		return views.SynonymsView{}, err
	}
	v := views.SynonymsView{Max: parley.MaxSynonymGroups}
	for _, g := range groups {
		v.Groups = append(v.Groups, views.SynonymRow{ID: g.ID, Terms: strings.Join(g.Terms, ", ")})
	}
	return v, nil
}

func (h *core) renderSynonyms(c echo.Context, status int, v views.SynonymsView) error {
	return handlers.Render(c, status, views.SynonymsPage(dash.Page(c, h.Sessions, "Synonyms", "corpus"), v))
}

// ShowSynonymsPage lists the tenant's synonym groups.
func (h *Knowledge) ShowSynonymsPage(c echo.Context) error {
	v, err := h.synonymsView(c)
	if err != nil {
		return err
	}
	return h.renderSynonyms(c, http.StatusOK, v)
}

// SaveNewSynonyms adds a group, or shows the page again with why not: the
// terms beside their field, the limit above the form.
func (h *Knowledge) SaveNewSynonyms(c echo.Context) error {
	ctx := c.Request().Context()
	typed := c.FormValue("terms")
	terms := splitTerms(typed)
	g, err := h.Manage.CreateSynonyms(ctx, dash.AdminFrom(c).Tenant.ID, terms)
	if err == nil {
		h.Sessions.Put(ctx, dash.SessFlash, "Added the group "+strings.Join(g.Terms, ", ")+".")
		return c.Redirect(http.StatusSeeOther, synonymsPath)
	}
	form := views.SynonymForm{Terms: typed}
	status := http.StatusUnprocessableEntity
	if msg, ok := synonymProblem(terms, err); ok {
		form.Error = msg
	} else if parley.ErrorKind(err) == parley.KindRateLimited {
		form.Message, status = err.Error(), http.StatusTooManyRequests
	} else {
		return err
	}
	v, lerr := h.synonymsView(c)
	if lerr != nil {
		return lerr
	}
	v.New = form
	return h.renderSynonyms(c, status, v)
}

// SaveSynonyms replaces the terms of one group. htmx gets the group back in
// place, saved or with why not; a plain form post is sent back to the page,
// or gets it again with the group's error.
func (h *Knowledge) SaveSynonyms(c echo.Context) error {
	ctx := c.Request().Context()
	id := c.Param("id")
	typed := c.FormValue("terms")
	terms := splitTerms(typed)
	g, err := h.Manage.UpdateSynonyms(ctx, dash.AdminFrom(c).Tenant.ID, id, terms)
	row := views.SynonymRow{ID: id, Terms: typed}
	status := http.StatusOK
	if err == nil {
		row.Terms, row.Saved = strings.Join(g.Terms, ", "), true
		if !dash.IsHTMX(c) {
			h.Sessions.Put(ctx, dash.SessFlash, "Saved the group "+row.Terms+".")
			return c.Redirect(http.StatusSeeOther, synonymsPath)
		}
	} else if msg, ok := synonymProblem(terms, err); ok {
		row.Error, status = msg, http.StatusUnprocessableEntity
	} else {
		return err
	}
	if dash.IsHTMX(c) {
		return handlers.Render(c, status, views.SynonymGroupView(views.Page{CSRF: dash.CSRFToken(c)}, row))
	}
	v, err := h.synonymsView(c)
	if err != nil {
		return err
	}
	for i := range v.Groups {
		if v.Groups[i].ID == id {
			v.Groups[i] = row
		}
	}
	return h.renderSynonyms(c, status, v)
}

// RemoveSynonyms deletes one group; htmx gets it removed in place and the
// new count.
func (h *Knowledge) RemoveSynonyms(c echo.Context) error {
	ctx := c.Request().Context()
	tenantID := dash.AdminFrom(c).Tenant.ID
	if err := h.Manage.DeleteSynonyms(ctx, tenantID, c.Param("id")); err != nil {
		return err
	}
	if !dash.IsHTMX(c) {
		h.Sessions.Put(ctx, dash.SessFlash, "Group deleted.")
		return c.Redirect(http.StatusSeeOther, synonymsPath)
	}
	groups, err := h.Manage.ListSynonyms(ctx, tenantID)
	if err != nil {
		return err
	}
	return handlers.Render(c, http.StatusOK, views.SynonymCount(len(groups), parley.MaxSynonymGroups))
}
