package handlers

import (
	"context"
	"log/slog"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db/accounts"
)

// scopeKey is the context key of a request's scope; unexported, so only the
// accessors below read or write it.
type scopeKey struct{}

// scope is what the middleware learned about a request: who asked, for
// which tenant, and the logger every line about the request goes through.
type scope struct {
	base      *slog.Logger
	requestID string
	logger    *slog.Logger // base with request_id and tenant, built on first use
	tenant    *parley.Tenant
	principal *auth.Principal
	admin     *AdminContext
}

// StartScope begins the request's scope: the first middleware calls it,
// after the request id is set, with the server's logger.
func StartScope(c echo.Context, base *slog.Logger, requestID string) {
	r := c.Request()
	c.SetRequest(r.WithContext(context.WithValue(r.Context(), scopeKey{}, &scope{base: base, requestID: requestID})))
}

func scopeOf(c echo.Context) *scope {
	s, _ := c.Request().Context().Value(scopeKey{}).(*scope)
	return s
}

// SetTenant records the tenant the request is about; the request's log
// lines name it by slug from then on.
func SetTenant(c echo.Context, t parley.Tenant) {
	if s := scopeOf(c); s != nil {
		s.tenant, s.logger = &t, nil
	}
}

// TenantOf returns the tenant the request is about, if one was set.
func TenantOf(c echo.Context) (parley.Tenant, bool) {
	if s := scopeOf(c); s != nil {
		if s.tenant != nil {
			return *s.tenant, true
		}
		if s.admin != nil {
			return s.admin.Tenant, true
		}
	}
	return parley.Tenant{}, false
}

// SetPrincipal records the credential an API request was authenticated with.
func SetPrincipal(c echo.Context, p auth.Principal) {
	if s := scopeOf(c); s != nil {
		s.principal = &p
	}
}

// PrincipalOf returns the request's credential, if it was authenticated.
func PrincipalOf(c echo.Context) (auth.Principal, bool) {
	if s := scopeOf(c); s != nil && s.principal != nil {
		return *s.principal, true
	}
	return auth.Principal{}, false
}

// SetAdmin records the signed-in owner of an admin request.
func SetAdmin(c echo.Context, a *AdminContext) {
	if s := scopeOf(c); s != nil {
		s.admin, s.logger = a, nil
	}
}

// AdminOf returns the signed-in owner of an admin request, if any.
func AdminOf(c echo.Context) (*AdminContext, bool) {
	if s := scopeOf(c); s != nil && s.admin != nil {
		return s.admin, true
	}
	return nil, false
}

// LoggerOf returns the request's logger: fallback with the request id and
// the tenant's slug, when known. Every log line under a request goes
// through it.
func LoggerOf(c echo.Context, fallback *slog.Logger) *slog.Logger {
	s := scopeOf(c)
	if s == nil {
		return fallback
	}
	if s.logger == nil {
		attrs := []any{"request_id", s.requestID}
		if t, ok := TenantOf(c); ok {
			attrs = append(attrs, "tenant", t.Slug)
		}
		s.logger = s.base.With(attrs...)
	}
	return s.logger
}

// AdminContext is the signed-in user and the tenant they are administering,
// with their role in it (auth.RoleOwner, RoleAdmin or RoleAgent).
type AdminContext struct {
	User        accounts.User
	Tenant      parley.Tenant
	Role        string
	Memberships []accounts.Membership
}
