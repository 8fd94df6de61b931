package admin

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/handlers/jsonbody"
	"github.com/parley/parley/views"
)

// adminVisitorsPage is the default length of a page of the dashboard's visitors.
const adminVisitorsPage = 25

// ShowVisitorsPage lists visitors with a search, paged by offset and limit; htmx gets the list alone.
func (h *Leads) ShowVisitorsPage(c echo.Context) error {
	// The dashboard keeps a bad parameter within the listing's bounds
	// rather than refusing it: links and typing should not end on an error.
	ls := parley.VisitorListing{Search: strings.TrimSpace(c.QueryParam("search")), Limit: adminVisitorsPage}
	if n, err := strconv.Atoi(c.QueryParam("limit")); err == nil && n >= 1 && n <= parley.MaxVisitorsPage {
		ls.Limit = n
	}
	if n, err := strconv.Atoi(c.QueryParam("offset")); err == nil && n > 0 {
		ls.Offset = n
	}
	if len([]rune(ls.Search)) > parley.MaxVisitorSearch {
		ls.Search = string([]rune(ls.Search)[:parley.MaxVisitorSearch])
	}
	vs, total, err := h.Manage.ListVisitorPage(c.Request().Context(), dash.AdminFrom(c).Tenant.ID, ls)
	if err != nil {
		return err
	}
	l := views.VisitorsList{Search: ls.Search, Limit: ls.Limit, Offset: ls.Offset, Total: total}
	for _, v := range vs {
		l.Visitors = append(l.Visitors, views.VisitorRow{ID: v.ID, Email: handlers.Deref(v.Email), Name: handlers.Deref(v.DisplayName),
			ExternalID: handlers.Deref(v.ExternalID), Provider: handlers.Deref(v.AuthProvider), CreatedAt: v.CreatedAt.UTC().Format(dash.DateTime)})
	}
	if dash.IsHTMX(c) {
		return handlers.Render(c, http.StatusOK, views.VisitorsListView(l))
	}
	return handlers.Render(c, http.StatusOK, views.VisitorsPage(dash.Page(c, h.Sessions, "Visitors", "visitors"), l))
}

// prettyJSON indents a JSON object for reading and editing.
func prettyJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if len(raw) == 0 || json.Indent(&b, raw, "", "  ") != nil {
		return "{}"
	}
	return b.String()
}

// visitorProfile loads what the profile page shows.
func (h *core) visitorProfile(c echo.Context) (views.VisitorProfile, error) {
	ctx := c.Request().Context()
	tenantID := dash.AdminFrom(c).Tenant.ID
	v, err := h.Manage.Visitor(ctx, tenantID, c.Param("id"))
	if err != nil {
		return views.VisitorProfile{}, err
	}
	facts, err := h.Manage.ListMemory(ctx, tenantID, v.ID)
	if err != nil {
		return views.VisitorProfile{}, err
	}
	p := views.VisitorProfile{ID: v.ID, Email: handlers.Deref(v.Email), Name: handlers.Deref(v.DisplayName), Phone: handlers.Deref(v.Phone),
		Provider: handlers.Deref(v.AuthProvider), ExternalID: handlers.Deref(v.ExternalID), ContactEmail: handlers.Deref(v.ContactEmail),
		Metadata:  prettyJSON(v.Metadata),
		CreatedAt: v.CreatedAt.UTC().Format(dash.DateTime), ConversationCount: v.ConversationCount, MemoryCount: v.MemoryCount}
	for _, f := range facts {
		p.Memory = append(p.Memory, views.MemoryRow{Key: f.Key, Value: f.Value, UpdatedAt: f.UpdatedAt.UTC().Format(dash.DateTime)})
	}
	p.Edit = views.VisitorForm{Email: p.Email, Name: p.Name, Phone: p.Phone, Provider: p.Provider, ExternalID: p.ExternalID, Metadata: p.Metadata}
	return p, nil
}

func (h *core) renderVisitor(c echo.Context, status int, v views.VisitorProfile) error {
	title := v.Email
	for _, s := range []string{v.Name, v.ContactEmail, v.ExternalID} {
		if title == "" {
			title = s
		}
	}
	if title == "" {
		title = v.ID // an anonymous visitor (the widget's anonymous id) has neither
	}
	return handlers.Render(c, status, views.VisitorPage(dash.Page(c, h.Sessions, "Visitor "+title, "visitors"), v))
}

// ShowVisitorPage renders a visitor's profile.
func (h *Leads) ShowVisitorPage(c echo.Context) error {
	v, err := h.visitorProfile(c)
	if err != nil {
		return err
	}
	return h.renderVisitor(c, http.StatusOK, v)
}

// SaveVisitor saves the profile form with the API's rules, or re-renders it with the errors.
func (h *Leads) SaveVisitor(c echo.Context) error {
	ctx := c.Request().Context()
	v, err := h.visitorProfile(c)
	if err != nil {
		return err
	}
	form, err := c.FormParams()
	if err != nil {
		return handlers.Invalid("Could not read the form")
	}
	f := views.VisitorForm{Email: form.Get("email"), Name: form.Get("displayName"), Phone: form.Get("phone"),
		Provider: form.Get("authProvider"), ExternalID: form.Get("externalId"), Metadata: form.Get("metadata")}
	in := parley.VisitorInput{Email: parley.Some(f.Email), DisplayName: parley.Some(f.Name), Phone: parley.Some(f.Phone),
		AuthProvider: parley.Some(f.Provider), ExternalID: parley.Some(f.ExternalID), Problems: parley.FieldErrors{}}
	// The API receives metadata as JSON already parsed; a form sends text.
	switch m := strings.TrimSpace(f.Metadata); {
	case m == "":
		in.Metadata = parley.Opt[json.RawMessage]{Set: true, Null: true} // stored as {}
	case !json.Valid([]byte(m)):
		in.Problems.Add("metadata", "must be a JSON object")
	case jsonbody.HasNUL([]byte(m)):
		in.Problems.Add("metadata", parley.NoNUL)
	default:
		in.Metadata = parley.Some(json.RawMessage(m))
	}
	if _, err = h.Manage.UpdateVisitor(ctx, dash.AdminFrom(c).Tenant.ID, v.ID, in); err == nil {
		h.Sessions.Put(ctx, dash.SessFlash, "Profile saved.")
		return c.Redirect(http.StatusSeeOther, "/admin/visitors/"+v.ID)
	}
	fe, status, ok := dash.FailedForm(err)
	if !ok {
		return err
	}
	f.Errors = fe
	v.Edit = f
	return h.renderVisitor(c, status, v)
}

// EraseVisitor deletes a visitor with their memory and conversations; htmx is sent to the list.
func (h *Leads) EraseVisitor(c echo.Context) error {
	ctx := c.Request().Context()
	if err := h.Manage.DeleteVisitor(ctx, dash.AdminFrom(c).Tenant.ID, c.Param("id")); err != nil {
		return err
	}
	h.Sessions.Put(ctx, dash.SessFlash, "Visitor erased, with their memory and conversations.")
	return dash.SeeOther(c, "/admin/visitors")
}

// SaveMemoryFact stores a fact from the form with the API's rules, or re-renders the profile with the errors.
func (h *Leads) SaveMemoryFact(c echo.Context) error {
	ctx := c.Request().Context()
	v, err := h.visitorProfile(c)
	if err != nil {
		return err
	}
	key, value := strings.TrimSpace(c.FormValue("key")), c.FormValue("value")
	_, err = h.Manage.SaveMemory(ctx, dash.AdminFrom(c).Tenant.ID, v.ID, parley.MemoryInput{Key: key, Value: value})
	if err == nil {
		h.Sessions.Put(ctx, dash.SessFlash, "Remembered "+key+".")
		return c.Redirect(http.StatusSeeOther, "/admin/visitors/"+v.ID+"#memory")
	}
	fe, status, ok := dash.FailedForm(err)
	if !ok && parley.ErrorKind(err) == parley.KindConflict {
		fe, status, ok = views.Errors{"key": err.Error()}, http.StatusConflict, true // the most facts kept
	}
	if !ok {
		return err
	}
	v.NewFact = views.MemoryFactForm{Key: key, Value: value, Errors: fe}
	return h.renderVisitor(c, status, v)
}

// RemoveMemoryFact forgets a fact; htmx gets the row removed and the new count.
func (h *Leads) RemoveMemoryFact(c echo.Context) error {
	ctx := c.Request().Context()
	tenantID := dash.AdminFrom(c).Tenant.ID
	id := c.Param("id")
	key, err := url.PathUnescape(c.Param("key"))
	if err != nil {
		return parley.Errorf(parley.KindNotFound, "Memory fact not found")
	}
	if err := h.Manage.DeleteMemory(ctx, tenantID, id, key); err != nil {
		return err
	}
	if !dash.IsHTMX(c) {
		h.Sessions.Put(ctx, dash.SessFlash, "Forgot "+key+".")
		return c.Redirect(http.StatusSeeOther, "/admin/visitors/"+id+"#memory")
	}
	v, err := h.Manage.Visitor(ctx, tenantID, id)
	if err != nil {
		return err
	}
	return handlers.Render(c, http.StatusOK, views.MemoryCount(v.MemoryCount))
}
