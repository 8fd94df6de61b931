// Package auditing records in the audit log (db/audit) what the dashboard
// and the REST API change: Record is a middleware over their routes which,
// after a request that succeeded, looks its route up in a table of the
// changes worth recording (routes.go: tokens, connected apps, webhooks,
// settings, deletions, exports) and records the entry as the request's
// actor, the one its authentication set (audit.WithActor: the signed-in
// person, the API token, the OAuth client). A route outside the table, a
// read or a refused change records nothing. Every 403 answered under Record
// (a missing scope, a role that does not hold the route: an error of kind
// Forbidden, or a page rendered with 403) is recorded as
// audit.ActionAccessDenied, denied; a refusal answered with another status
// calls Recorder.RecordDenied. The MCP server's tools record their own
// changes and refusals (handlers/mcpserver/audit.go).
package auditing

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db/audit"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
)

// Recorder records the dashboard's and the REST API's changes.
type Recorder struct{ *handlers.Base }

// New builds the recorder over the Base web builds.
func New(b *handlers.Base) *Recorder { return &Recorder{b} }

// recordedKey marks a request whose refusal is recorded already.
const recordedKey = "auditRecorded"

// Record is the middleware that records a route's change once it has
// succeeded, and a refusal (403) of any route it wraps.
func (r *Recorder) Record(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := next(c)
		if parley.ErrorKind(err) == parley.KindForbidden || (err == nil && c.Response().Status == http.StatusForbidden) {
			r.recordDenied(c, err)
			return err
		}
		if err != nil || c.Response().Status >= 400 {
			return err
		}
		if route, ok := routes[c.Request().Method+" "+c.Path()]; ok && r.succeeded(c, route) {
			r.record(c, route)
		}
		return nil
	}
}

// succeeded reports whether a request answered 2xx or 3xx changed what its
// route changes: a dashboard form that failed redirects with its problem
// in the session's flash (dash.SessFlashError), and the consent page
// redirects a refusal to the client too.
func (r *Recorder) succeeded(c echo.Context, route route) bool {
	if strings.HasPrefix(c.Path(), "/admin") && r.Sessions.GetString(c.Request().Context(), dash.SessFlashError) != "" {
		return false
	}
	if route.check != nil {
		return route.check(c)
	}
	return true
}

// record writes the entry of a route that succeeded.
func (r *Recorder) record(c echo.Context, rt route) {
	t, ok := handlers.TenantOf(c)
	if !ok {
		return
	}
	tenantID := t.ID
	if rt.tenant != nil {
		if tenantID = rt.tenant(c); tenantID == "" {
			return
		}
	}
	e := r.entry(c, tenantID, rt.action)
	if rt.param != "" {
		e.TargetID = c.Param(rt.param)
	} else if rt.idField != "" {
		e.TargetID = c.FormValue(rt.idField)
	}
	if id, _ := c.Get(audit.TargetIDKey).(string); id != "" {
		e.TargetID = id
	}
	e.Target = rt.target
	if rt.field != "" {
		if v := strings.TrimSpace(c.FormValue(rt.field)); v != "" {
			e.Target += ": " + v
		}
	}
	if rt.words != nil {
		if w := rt.words(c); w != "" {
			e.Details["change"] = w
		}
	}
	if rt.name != nil {
		if n := rt.name(r, c); n != "" {
			e.Target += ": " + n
		}
	}
	r.write(c, e)
}

// entry is an entry of the request's tenant, actor, surface and address.
func (r *Recorder) entry(c echo.Context, tenantID, action string) audit.Entry {
	ctx := c.Request().Context()
	actor, _ := audit.ActorFrom(ctx)
	via := audit.ViaAPI
	if strings.HasPrefix(c.Path(), "/admin") {
		via = audit.ViaDashboard
	}
	if actor.Kind == "" {
		if p, ok := handlers.PrincipalOf(c); ok {
			actor = handlers.PrincipalActor(p)
		}
	}
	p, _ := handlers.PrincipalOf(c)
	actor = handlers.NameActor(ctx, r.DB, tenantID, actor, p)
	return audit.Entry{TenantID: tenantID, At: r.Clock(), Actor: actor, Action: action, Address: c.RealIP(),
		Details: map[string]any{"via": via}}
}

// write records e; a failure is logged, not answered: the change is made.
func (r *Recorder) write(c echo.Context, e audit.Entry) {
	if e.Actor.Kind == "" {
		// No surface's authentication ran: nothing to say who.
		return
	}
	if err := r.DB.RecordAudit(c.Request().Context(), e); err != nil {
		r.Log(c).Error("recording the audit entry", "action", e.Action, "err", err)
	}
}

// recordDenied records the refusal of the request (err, when it was
// returned rather than rendered), once.
func (r *Recorder) recordDenied(c echo.Context, err error) {
	if c.Get(recordedKey) != nil {
		return
	}
	what := c.Request().Method + " " + c.Request().URL.Path
	if rt, ok := routes[c.Request().Method+" "+c.Path()]; ok {
		what = rt.target + " (" + what + ")"
	}
	r.denied(c, what, err)
}

// denied writes the entry of a refusal.
func (r *Recorder) denied(c echo.Context, what string, err error) {
	c.Set(recordedKey, true)
	t, ok := handlers.TenantOf(c)
	if !ok {
		return
	}
	e := r.entry(c, t.ID, audit.ActionAccessDenied)
	e.Denied, e.Target = true, what
	if pe, ok := err.(*parley.Error); ok {
		e.Details["reason"] = pe.Message
	}
	r.write(c, e)
}

// RecordDenied records that the request's actor was refused what (in
// words: "Team members"), for a refusal answered without a 403 error
// passing through Record (a page rendered with its own status). A request
// is recorded once, however many times it is refused.
func (r *Recorder) RecordDenied(c echo.Context, what string) {
	if c.Get(recordedKey) != nil {
		return
	}
	r.denied(c, what, nil)
}
