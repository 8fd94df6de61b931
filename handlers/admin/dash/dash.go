// Package dash holds what every area of the dashboard shares, below them
// all: the signed-in page's layout model with its flash messages, the
// request's owner and tenant, the form's CSRF token, the statuses of a form
// re-rendered with its problems, the answer after a change (a redirect, or
// htmx's), the repeated rows of a row editor, and the session keys, choices
// and formats several areas show. handlers/admin and its area packages
// import it; it imports none of them.
package dash

import (
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/alexedwards/scs/v2"
	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/views"
)

// Session keys of the messages the next page shows once.
const (
	SessFlash      = "flash"
	SessFlashError = "flashError"
)

// Session keys of who is signed in: the user, the tenant they administer
// (among their memberships), and auth.PasswordStamp of the password the
// session signed in with (once the password changes, the session ends).
const (
	SessUserID        = "userID"
	SessTenantID      = "tenantID"
	SessPasswordStamp = "passwordStamp"
)

// ReadOnlySession is the echo.Context key set on the requests whose
// session is read and never written back (the polls of the inbox).
const ReadOnlySession = "readOnlySession"

// DateTime is the layout of the dashboard's dates with their time, in UTC.
const DateTime = "2006-01-02 15:04 UTC"

// VisitorAuthModes are the settings page's choices for visitorAuthMode; "" clears it.
var VisitorAuthModes = []views.Option{
	{Value: "", Label: "None: anonymous visitors allowed"},
	{Value: "jwt", Label: "Signed visitor token (JWT)"},
	{Value: "otp", Label: "One-time code by email"},
	{Value: "all", Label: "Either a token or a code"},
}

// AdminFrom is the admin request's owner and tenant; the RequireAdmin
// middleware (handlers/admin) set it before any admin handler runs.
func AdminFrom(c echo.Context) *handlers.AdminContext {
	if a, ok := handlers.AdminOf(c); ok {
		return a
	}
	return &handlers.AdminContext{}
}

// CSRFToken is the request's CSRF token, which every form of the dashboard carries.
func CSRFToken(c echo.Context) string {
	s, _ := c.Get("csrf").(string)
	return s
}

// Page builds the layout model of a signed-in page and consumes flash messages.
func Page(c echo.Context, sessions *scs.SessionManager, title, active string) views.Page {
	a := AdminFrom(c)
	ctx := c.Request().Context()
	p := views.Page{
		Title: title, Active: active, UserEmail: a.User.Email,
		TenantSlug: a.Tenant.Slug, TenantName: a.Tenant.Name, CSRF: CSRFToken(c),
		Flash: sessions.PopString(ctx, SessFlash), FlashError: sessions.PopString(ctx, SessFlashError),
		Role: a.Role,
	}
	for _, m := range a.Memberships {
		p.Tenants = append(p.Tenants, views.TenantOption{Slug: m.TenantSlug, Name: m.TenantName, Current: m.TenantID == a.Tenant.ID})
	}
	p.Held = make(map[string]bool, len(auth.Roles))
	for _, r := range auth.Roles {
		p.Held[r] = auth.RoleHolds(a.Role, r)
	}
	for _, item := range views.Nav {
		if p.Held[item.Role] {
			p.Nav = append(p.Nav, item)
		}
	}
	return p
}

// FormStatus is the status of a form re-rendered for an application error,
// with the field errors it carries and the message for the whole form; ok is
// false for errors that have no form to go back to (not found, internal).
func FormStatus(err error) (status int, fields views.Errors, msg string, ok bool) {
	var e *parley.Error
	if !errors.As(err, &e) {
		return 0, nil, "", false
	}
	switch e.Kind {
	case parley.KindInvalid:
		status = http.StatusUnprocessableEntity
	case parley.KindConflict:
		status = http.StatusConflict
	case parley.KindRateLimited:
		status = http.StatusTooManyRequests
	default:
		return 0, nil, "", false
	}
	if d, isMap := e.Details.(map[string]string); isMap {
		fields = views.Errors(d)
	}
	if len(fields) == 0 || e.Message != "Validation failed" {
		msg = e.Message
	}
	return status, fields, msg, true
}

// FormFieldName is a form field's name as the dashboard stores it: the one
// typed, else one made from the label, in either case lower-case letters,
// digits and underscores starting with a letter ("Full name" becomes
// full_name), so that owners never have to write snake_case themselves.
func FormFieldName(name, label string) string {
	src := strings.TrimSpace(name)
	if src == "" {
		src = strings.TrimSpace(label)
	}
	if src == "" {
		return ""
	}
	n := strings.ReplaceAll(db.Slugify(src), "-", "_")
	if n == "segment" && !strings.EqualFold(src, "segment") { // Slugify's answer for nothing usable
		n = "field"
	}
	if n[0] >= '0' && n[0] <= '9' {
		n = "field_" + n
	}
	if len(n) > 64 {
		n = strings.TrimRight(n[:64], "_")
	}
	return n
}

// FailedForm returns the field errors of a validation failure or a conflict,
// which a form re-renders, and the status to render them with; ok is false
// for any other error.
func FailedForm(err error) (views.Errors, int, bool) {
	var e *parley.Error
	if !errors.As(err, &e) {
		return nil, 0, false
	}
	fe, _ := e.Details.(map[string]string)
	switch {
	case e.Kind == parley.KindInvalid && len(fe) > 0:
		return views.Errors(fe), http.StatusUnprocessableEntity, true
	case e.Kind == parley.KindConflict && len(fe) > 0:
		return views.Errors(fe), http.StatusConflict, true
	}
	return nil, 0, false
}

// IsHTMX reports whether htmx sent the request.
func IsHTMX(c echo.Context) bool { return c.Request().Header.Get("HX-Request") == "true" }

// SeeOther sends the browser to path once a change is made: 303 See Other,
// or for htmx an HX-Redirect, which it follows with a whole page load.
func SeeOther(c echo.Context, path string) error {
	if IsHTMX(c) {
		c.Response().Header().Set("HX-Redirect", path)
		return c.NoContent(http.StatusOK)
	}
	return c.Redirect(http.StatusSeeOther, path)
}

// IndexedFormRows reads the repeated rows named prefix.N.column, in the order of
// N: row editors number rows as they add them and leave gaps as they remove them.
func IndexedFormRows(form url.Values, prefix string) []map[string]string {
	rows := map[int]map[string]string{}
	for k, v := range form {
		rest, ok := strings.CutPrefix(k, prefix+".")
		if !ok {
			continue
		}
		idx, col, ok := strings.Cut(rest, ".")
		n, err := strconv.Atoi(idx)
		if !ok || err != nil || n < 0 || len(v) == 0 {
			continue
		}
		if rows[n] == nil {
			rows[n] = map[string]string{}
		}
		rows[n][col] = v[0]
	}
	keys := make([]int, 0, len(rows))
	for n := range rows {
		keys = append(keys, n)
	}
	sort.Ints(keys)
	out := make([]map[string]string, len(keys))
	for i, n := range keys {
		out[i] = rows[n]
	}
	return out
}
