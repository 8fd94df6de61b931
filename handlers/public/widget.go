package public

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/widget"
)

// widgetSettingsMaxAge is how long browsers and shared caches may keep a
// tenant's widget settings before asking again (with the ETag, which costs
// a 304 when nothing changed): a saved change shows within a minute.
const widgetSettingsMaxAge = "60"

// ShowWidgetSettings answers GET /chat/{slug}/widget: the settings the
// embedded widget starts from. It passes chat's tenant gates (plan, origin,
// widget key) and picks the segment as chat does (query segment, else the
// default; an unknown or inactive one is 400). The answer is public and
// cacheable for a minute, varies with Origin and X-Widget-Key, and carries
// an ETag: If-None-Match gets 304 while nothing changed.
func (h *Handler) ShowWidgetSettings(c echo.Context) error {
	hdr := c.Response().Header()
	hdr.Set(echo.HeaderCacheControl, "no-store") // errors are not cached
	t, err := h.chatTenant(c, "")
	if err != nil {
		return err
	}
	seg, err := handlers.ChatSegment(c.Request().Context(), h.DB, t, c.QueryParam("segment"), "")
	if err != nil {
		return err
	}
	if err := h.noteInstallation(c, t); err != nil {
		return err
	}
	s := handlers.WidgetSettings(h.BaseURL, h.CaptchaScriptURL, t, seg)
	if h.Engine.AnswersLocally(t) {
		tools, err := h.DB.ListTools(c.Request().Context(), t.ID)
		if err != nil {
			return err
		}
		s.Handover = handlers.WidgetHandover(s, seg, tools)
	}
	body, err := json.Marshal(s)
	if err != nil {
		return err
	}
	hdr.Add(echo.HeaderVary, "Origin")
	hdr.Add(echo.HeaderVary, "X-Widget-Key")
	if handlers.Fresh(c, widgetSettingsMaxAge, handlers.ETagOf(body)) {
		return c.NoContent(http.StatusNotModified)
	}
	return c.JSONBlob(http.StatusOK, body)
}

// noteInstallation records that the widget loaded on a site of the
// tenant's (a page of another origin than Parley's that passed the gates),
// for the dashboard's "installation detected". The store writes at most
// once an hour per tenant; within that hour this process does not even ask
// it again.
func (h *Handler) noteInstallation(c echo.Context, t parley.Tenant) error {
	origin := c.Request().Header.Get(echo.HeaderOrigin)
	if origin == "" || origin == "null" || strings.EqualFold(origin, originOf(h.BaseURL)) || len(origin) > 300 {
		return nil
	}
	now := h.Clock()
	if last, ok := h.sightings.Load(t.ID); ok && now.Sub(last.(time.Time)) < time.Hour {
		return nil
	}
	if err := h.DB.NoteWidgetSeen(c.Request().Context(), t.ID, origin, now); err != nil {
		return err
	}
	h.sightings.Store(t.ID, now)
	return nil
}

// widgetScriptMaxAge is how long browsers keep /widget.js before
// revalidating it: a new release reaches pages within five minutes.
const widgetScriptMaxAge = "300"

// widgetScript is /widget.js, gzipped once per process.
var widgetScript = handlers.NewCompressible(widget.Script, handlers.ETagOf(widget.Script))

// WidgetScript serves the embeddable widget at /widget.js (the address the
// embed code names), readable from any page, gzipped for the browsers that
// take it (every visitor of every tenant's site loads it), cacheable for
// five minutes and then revalidated with its ETag, computed once.
func WidgetScript(c echo.Context) error {
	h := c.Response().Header()
	h.Set(echo.HeaderAccessControlAllowOrigin, "*")
	h.Set(echo.HeaderCacheControl, "public, max-age="+widgetScriptMaxAge)
	return widgetScript.Serve(c, "text/javascript; charset=utf-8")
}

// originOf is the origin (scheme://host[:port]) of an absolute address.
func originOf(address string) string {
	u, err := url.Parse(address)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}
