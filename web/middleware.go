package web

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/parley/parley"
	"github.com/parley/parley/db/audit"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/mcpserver"
)

// ipExtractor believes X-Forwarded-For only from the configured trusted
// proxies; with none, the client address is the connection's.
func ipExtractor(trusted []netip.Prefix) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, p := range trusted {
		opts = append(opts, echo.TrustIPRange(&net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}

// logRequests writes one line per request with its id and tenant.
func (s *Server) logRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		handlers.StartScope(c, s.Logger, c.Response().Header().Get(echo.HeaderXRequestID))
		err := next(c)
		if err != nil {
			c.Error(err) // write the response now, so its status is logged
		}
		s.logRequest(c, start)
		return nil
	}
}

// logRequest logs a served request. It is its own function so that the
// middleware's frame, which every handler runs under (an open chat stream
// for its whole life), stays small.
func (s *Server) logRequest(c echo.Context, start time.Time) {
	handlers.LoggerOf(c, s.Logger).InfoContext(c.Request().Context(), "request", "method", c.Request().Method, "path", c.Request().URL.Path,
		"status", c.Response().Status, "duration_ms", float64(time.Since(start).Microseconds())/1000, "ip", c.RealIP())
}

// tenantAPI authenticates a /tenants/:slug request and loads its tenant. A
// credential of another tenant gets 404, as if the tenant did not exist.
func (s *Server) tenantAPI(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		p, err := s.Auth.Authenticate(ctx, c.Request())
		if err != nil {
			// RFC 9728: where an OAuth client finds how to get a token.
			c.Response().Header().Set("WWW-Authenticate",
				`Bearer resource_metadata="`+s.Config.BaseURL+`/.well-known/oauth-protected-resource"`)
			return err
		}
		t, err := s.DB.TenantBySlug(ctx, c.Param("slug"))
		if parley.ErrorKind(err) == parley.KindNotFound || (err == nil && t.ID != p.TenantID) {
			return parley.Errorf(parley.KindNotFound, "Tenant not found")
		}
		if err != nil {
			return err
		}
		handlers.SetPrincipal(c, p)
		handlers.SetTenant(c, t)
		c.SetRequest(c.Request().WithContext(audit.WithActor(ctx, handlers.PrincipalActor(p))))
		return next(c)
	}
}

// mcpAPI authenticates a request to the MCP server with the MCP resource's
// Authenticator and loads the token's tenant: the tenant comes from the
// credential, not the path. A request without valid credentials gets 401
// naming the resource's protected-resource metadata (RFC 9728), where an
// MCP client learns how to get a token.
func (s *Server) mcpAPI(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		p, err := s.MCPAuth.Authenticate(ctx, c.Request())
		if parley.ErrorKind(err) == parley.KindUnauthorized {
			c.Response().Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+mcpserver.MCPResourceMetadata(s.Config.BaseURL)+`"`)
		}
		if err != nil {
			return err
		}
		t, err := s.DB.TenantByID(ctx, p.TenantID)
		if err != nil {
			return err
		}
		handlers.SetPrincipal(c, p)
		handlers.SetTenant(c, t)
		c.SetRequest(c.Request().WithContext(audit.WithActor(ctx, handlers.PrincipalActor(p))))
		return next(c)
	}
}

// requireScope refuses a request whose credential lacks scope, naming it.
func requireScope(scope string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if p, ok := handlers.PrincipalOf(c); !ok || !p.HasScope(scope) {
				return &parley.Error{Kind: parley.KindForbidden, Message: "Missing scope: " + scope,
					Details: map[string]string{"requiredScope": scope}}
			}
			return next(c)
		}
	}
}

// adminCSRF protects every admin form with a double-submit token.
func (s *Server) adminCSRF() echo.MiddlewareFunc {
	return middleware.CSRFWithConfig(middleware.CSRFConfig{
		TokenLookup:    "form:_csrf,header:X-CSRF-Token",
		CookieName:     "parley_csrf",
		CookiePath:     "/admin",
		CookieHTTPOnly: true,
		CookieSecure:   s.Config.SecureCookies(),
		CookieSameSite: http.SameSiteStrictMode,
		ErrorHandler: func(err error, c echo.Context) error {
			return &parley.Error{Kind: parley.KindForbidden,
				Message: "Your form expired or came from another site; reload the page and try again."}
		},
	})
}

// hstsMaxAge is how long browsers keep to https for Parley's host: a year.
const hstsMaxAge = "max-age=31536000"

// securityHeaders sets on every answer what keeps browsers from guessing
// its type (X-Content-Type-Options: nosniff) and, when Parley is served over
// https (PARLEY_BASE_URL), from ever reaching it over plain http again
// (Strict-Transport-Security).
func (s *Server) securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	hsts := s.Config.SecureCookies()
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("X-Content-Type-Options", "nosniff")
		if hsts {
			h.Set("Strict-Transport-Security", hstsMaxAge)
		}
		return next(c)
	}
}

// maxAdminBody caps what a dashboard request may send, before the CSRF
// check reads its form: the largest upload (a CSV import of 5 MiB) and room
// for the rest of its form. Handlers check their own, smaller limits.
const maxAdminBody = 6 << 20

// adminBodyLimit refuses dashboard request bodies over maxAdminBody.
func adminBodyLimit(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if req.ContentLength > maxAdminBody {
			return &parley.Error{Kind: parley.KindTooLarge, Message: "That upload is too large: at most 5 MB."}
		}
		req.Body = http.MaxBytesReader(c.Response(), req.Body, maxAdminBody)
		return next(c)
	}
}

// adminCSP is the dashboard's Content-Security-Policy.
const adminCSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' https: data:; frame-ancestors 'none'"

// adminHeaders keeps admin pages out of frames and caches (nosniff comes
// with every answer, from securityHeaders). With a sign-in challenge
// configured, the sign-in and sign-up pages may also load the challenge's
// script and frames from its provider.
func (s *Server) adminHeaders() echo.MiddlewareFunc {
	signInCSP := adminCSP
	if s.Config.AdminCaptchaSiteKey != "" {
		if u, err := url.Parse(s.Config.CaptchaScriptURL); err == nil {
			origin := u.Scheme + "://" + u.Host
			signInCSP = strings.Replace(adminCSP, "script-src 'self'", "script-src 'self' "+origin, 1) + "; frame-src " + origin
		}
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			h := c.Response().Header()
			h.Set("X-Frame-Options", "DENY")
			h.Set("Referrer-Policy", "same-origin")
			h.Set("Cache-Control", "no-store")
			if p := c.Path(); p == "/admin/login" || p == "/admin/signup" {
				h.Set("Content-Security-Policy", signInCSP)
			} else {
				h.Set("Content-Security-Policy", adminCSP)
			}
			return next(c)
		}
	}
}
