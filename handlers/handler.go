// Package handlers holds Parley's HTTP handlers, one file per resource: they
// decode, validate, call db, and encode.
package handlers

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/a-h/templ"
	"github.com/alexedwards/scs/v2"
	"github.com/labstack/echo/v4"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
)

// Handler holds what every handler needs.
type Handler struct {
	DB       *db.DB
	Box      *auth.Box
	Sessions *scs.SessionManager
	BaseURL  string
	CDNURL   string
	Logger   *slog.Logger
	Now      func() time.Time
}

// Keys of values the middleware leaves in the Echo context.
const (
	// TenantKey holds the db.Tenant a /tenants/{slug} request is about.
	TenantKey = "parley.tenant"
	// PrincipalKey holds the auth.Principal of an authenticated API request.
	PrincipalKey = "parley.principal"
	// AdminKey holds the *AdminContext of a signed-in admin request.
	AdminKey = "parley.admin"
)

func tenantFrom(c echo.Context) db.Tenant { return c.Get(TenantKey).(db.Tenant) }

func (h *Handler) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// render writes a templ component with a status.
func render(c echo.Context, status int, component templ.Component) error {
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	c.Response().WriteHeader(status)
	return component.Render(c.Request().Context(), c.Response())
}

// invalid is a 400 with a message and no details.
func invalid(format string, args ...any) error { return db.Errorf(db.KindInvalid, format, args...) }

// Healthz answers while the process is up.
func (h *Handler) Healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// Readyz answers 200 when the database is reachable, 503 otherwise.
func (h *Handler) Readyz(c echo.Context) error {
	if err := h.DB.Ping(c.Request().Context()); err != nil {
		h.Logger.Error("readiness check failed", "err", err)
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "error": "database unreachable"})
	}
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}
