package handlers

import (
	"context"
	"errors"
	"log/slog"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
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
	// addressLimit waits for the per-address limit's verdict on the request.
	addressLimit func() error
	// configVersion waits for the configuration version of the route's
	// tenant, read with the per-address limit's counters (nil for none).
	configVersion func() *int64
	// addressGuard hands the per-address limit's count to the turn, and
	// addressStart starts it on its own (nil: it started with the request).
	addressGuard func(configVersion int64) *parley.TurnGuard
	addressStart func()
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

// setAdmin records the signed-in owner of an admin request.
func setAdmin(c echo.Context, a *AdminContext) {
	if s := scopeOf(c); s != nil {
		s.admin, s.logger = a, nil
	}
}

// adminOf returns the signed-in owner of an admin request, if any.
func adminOf(c echo.Context) (*AdminContext, bool) {
	if s := scopeOf(c); s != nil && s.admin != nil {
		return s.admin, true
	}
	return nil, false
}

// SetAddressLimit leaves the per-address limit's verdict for the handler to
// wait for at its place in the gate order (web's perAddressLimit).
func SetAddressLimit(c echo.Context, wait func() error) {
	if s := scopeOf(c); s != nil {
		s.addressLimit = wait
	}
}

// SetConfigVersion leaves for the handler the configuration version of the
// route's tenant, read by the per-address limit's statement, to check the
// chat's configuration cache against (db.ChatTenantAndSegment).
func SetConfigVersion(c echo.Context, wait func() *int64) {
	if s := scopeOf(c); s != nil {
		s.configVersion = wait
	}
}

// SetAddressGuard leaves the per-address limit's count, not yet started,
// for the handler to hand to the turn (guard, given the configuration
// version the gates ran on) or to start on its own (start): web's
// perAddressLimitHanded.
func SetAddressGuard(c echo.Context, guard func(configVersion int64) *parley.TurnGuard, start func()) {
	if s := scopeOf(c); s != nil {
		s.addressGuard, s.addressStart = guard, start
	}
}

// addressGuard returns the request's per-address limit as the guard of a
// turn whose gates ran on configuration version, nil when the route counts
// it as the request begins.
func addressGuard(c echo.Context, version int64) *parley.TurnGuard {
	if s := scopeOf(c); s != nil && s.addressGuard != nil {
		return s.addressGuard(version)
	}
	return nil
}

// startAddressLimit starts the request's per-address count now, beside the
// handler's reads, when the route left it for the handler to start.
func startAddressLimit(c echo.Context) {
	if s := scopeOf(c); s != nil && s.addressStart != nil {
		s.addressStart()
	}
}

// configCurrent says whether t, served from the chat's configuration cache,
// is still what the database holds: its version is the one the per-address
// limit's statement read as the request began. Without that reading it is
// not known to be.
func configCurrent(c echo.Context, t parley.Tenant) bool {
	s := scopeOf(c)
	if s == nil || s.configVersion == nil {
		return false
	}
	v := s.configVersion()
	return v != nil && *v == t.ConfigVersion
}

// errNoAddressLimit refuses a public request whose route lacks the
// per-address limit: a wiring mistake, which must not let requests through
// uncounted.
var errNoAddressLimit = errors.New("the per-address limit is not set up for this route")

// limitAddress waits for the per-address limit's verdict: nil, or 429 with
// Retry-After.
func limitAddress(c echo.Context) error {
	if s := scopeOf(c); s != nil && s.addressLimit != nil {
		return s.addressLimit()
	}
	return errNoAddressLimit
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

// log is the request's logger (LoggerOf).
func (h *Handler) log(c echo.Context) *slog.Logger { return LoggerOf(c, h.Logger) }
