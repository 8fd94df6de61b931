// Package audit is the dashboard's Activity log (/admin/audit): who did
// what and when in the tenant (the audit log of db/audit), newest first,
// filtered by who, what and dates, a page at a time. The route is for
// owners only.
package audit

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	dbaudit "github.com/parley/parley/db/audit"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/handlers/resource"
	"github.com/parley/parley/views"
)

// Audit is the dashboard's Activity log area.
type Audit struct{ *handlers.Base }

// New builds the area over the Base web builds.
func New(b *handlers.Base) *Audit { return &Audit{b} }

// pageSize is how many entries a page shows.
const pageSize = 50

// whoActors is how many people, tokens and apps the "who" filter offers.
const whoActors = 100

// kindWords are the kinds of actor in the owner's words.
var kindWords = map[string]string{
	dbaudit.ActorPerson:   "Person",
	dbaudit.ActorToken:    "API token",
	dbaudit.ActorOAuth:    "Connected app",
	dbaudit.ActorOperator: "Operator",
	dbaudit.ActorSystem:   "Parley",
}

// kindChoices are the "who" filter's kinds, in the owner's words.
var kindChoices = []views.Option{
	{Value: dbaudit.ActorPerson, Label: "Any person"},
	{Value: dbaudit.ActorToken, Label: "Any API token"},
	{Value: dbaudit.ActorOAuth, Label: "Any connected app"},
	{Value: dbaudit.ActorOperator, Label: "The operator"},
	{Value: dbaudit.ActorSystem, Label: "Parley itself"},
}

// whatChoices are the "what" filter's areas and actions, in the owner's words.
var whatChoices = []views.Option{
	{Value: "account", Label: "Sign-ins and account"},
	{Value: "member", Label: "Team members"},
	{Value: dbaudit.ActionAccessDenied, Label: "Refused access"},
	{Value: "token", Label: "API tokens"},
	{Value: "oauth", Label: "Connected apps"},
	{Value: "webhook", Label: "Webhooks"},
	{Value: "settings", Label: "Settings"},
	{Value: "knowledge", Label: "Answers improved"},
	{Value: dbaudit.ActionDeleted, Label: "Deletions"},
	{Value: dbaudit.ActionExported, Label: "Exports"},
	{Value: "plan", Label: "Plan"},
	{Value: "tenant", Label: "Workspace"},
}

// viaWords say where a change came from.
var viaWords = map[string]string{dbaudit.ViaAPI: "through the API", dbaudit.ViaMCP: "through the MCP server", dbaudit.ViaChat: "in a chat"}

// ShowAuditPage answers GET /admin/audit: a page of the log with its
// filters (who: a kind, or "kind:id" for one person, token or app; what:
// an area or an action; from and to: dates in the tenant's time zone;
// denied; cursor: where the previous page ended).
func (h *Audit) ShowAuditPage(c echo.Context) error {
	ctx := c.Request().Context()
	t := dash.AdminFrom(c).Tenant
	loc := resource.TenantLocation(t)
	q := c.QueryParams()
	v := views.AuditView{Who: q.Get("who"), What: q.Get("what"), From: q.Get("from"), To: q.Get("to"),
		Denied: q.Get("denied") == "true", TimeZone: loc.String(), WhatOptions: whatChoices}
	filters := url.Values{}
	for _, k := range []string{"who", "what", "from", "to", "denied"} {
		if q.Get(k) != "" {
			filters.Set(k, q.Get(k))
		}
	}
	v.Filtered = len(filters) > 0
	// The dashboard's filters in the API's names, so that one check reads both.
	api := url.Values{}
	kind, id, _ := strings.Cut(v.Who, ":")
	api.Set("actorKind", kind)
	api.Set("actorId", id)
	api.Set("action", v.What)
	api.Set("from", v.From)
	api.Set("to", v.To)
	api.Set("cursor", q.Get("cursor"))
	if v.Denied {
		api.Set("denied", "true")
	}
	actors, err := h.DB.AuditActors(ctx, t.ID, whoActors)
	if err != nil {
		return err
	}
	v.WhoOptions = whoOptions(actors, v.Who)
	status := http.StatusOK
	f, err := handlers.CheckAuditFilter(api, loc)
	if err != nil {
		if parley.ErrorKind(err) != parley.KindInvalid {
			return err
		}
		v.Errors = auditErrors(err)
		status = http.StatusUnprocessableEntity
		return handlers.Render(c, status, views.AuditPage(dash.Page(c, h.Sessions, "Activity log", "audit"), v))
	}
	f.Limit = pageSize
	page, err := h.DB.ListAudit(ctx, t.ID, f)
	if err != nil {
		return err
	}
	for _, e := range page.Entries {
		v.Rows = append(v.Rows, row(e, loc))
	}
	if page.Next != nil {
		next := url.Values{}
		for k, vs := range filters {
			next[k] = vs
		}
		next.Set("cursor", page.Next.String())
		v.Next = "/admin/audit?" + next.Encode()
	}
	if f.After != nil {
		v.Newest = "/admin/audit"
		if len(filters) > 0 {
			v.Newest += "?" + filters.Encode()
		}
	}
	return handlers.Render(c, status, views.AuditPage(dash.Page(c, h.Sessions, "Activity log", "audit"), v))
}

// row is an entry in the owner's words.
func row(e dbaudit.Entry, loc *time.Location) views.AuditRow {
	r := views.AuditRow{Who: e.Actor.Name, WhoKind: kindWords[e.Actor.Kind], What: dbaudit.Words[e.Action], Target: e.Target,
		Denied: e.Denied, WhenISO: e.At.UTC().Format(time.RFC3339), When: e.At.In(loc).Format("2 Jan 2006, 15:04")}
	if r.Who == "" {
		r.Who = r.WhoKind
	}
	if r.What == "" {
		r.What = e.Action
	}
	if s, ok := e.Details["change"].(string); ok && s != "" {
		r.What += ": " + s
	}
	if s, ok := e.Details["via"].(string); ok {
		r.Via = viaWords[s]
	}
	return r
}

// whoOptions are the kinds, then each person, token and app seen, with
// the one chosen kept even when it is no longer among them.
func whoOptions(actors []dbaudit.Actor, chosen string) []views.Option {
	out := append([]views.Option{}, kindChoices...)
	found := chosen == ""
	for _, o := range out {
		found = found || o.Value == chosen
	}
	for _, a := range actors {
		value := a.Kind + ":" + a.ID
		out = append(out, views.Option{Value: value, Label: a.Name + " (" + strings.ToLower(kindWords[a.Kind]) + ")"})
		found = found || value == chosen
	}
	if !found {
		out = append(out, views.Option{Value: chosen, Label: chosen})
	}
	return out
}

// auditErrors places a filter's problem beside its field, in the dashboard's names.
func auditErrors(err error) views.Errors {
	out := views.Errors{}
	var e *parley.Error
	if !errors.As(err, &e) {
		return out
	}
	d, _ := e.Details.(map[string]string)
	field := map[string]string{"actorKind": "who", "actorId": "who", "action": "what", "from": "from", "to": "to",
		"cursor": "from", "denied": "from", "limit": "from"}
	words := map[string]string{"actorKind": "Choose someone from the list.", "actorId": "Choose someone from the list.",
		"action": "Choose what from the list.", "from": "Enter a date.", "to": "Enter a date after the start.",
		"cursor": "This page no longer exists: clear the filters.", "denied": "Clear the filters.", "limit": "Clear the filters."}
	for k := range d {
		if k == "to" && !strings.Contains(d[k], "after") {
			out["to"] = "Enter a date."
			continue
		}
		out[field[k]] = words[k]
	}
	return out
}
