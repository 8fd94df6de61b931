// Package handlers holds Parley's HTTP handlers, one file per resource: they
// decode, validate, call db, and encode.
package handlers

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sync/atomic"

	"github.com/a-h/templ"
	"github.com/alexedwards/scs/v2"
	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/agent"
	"github.com/parley/parley/agent/outbound"
	"github.com/parley/parley/agent/outbound/stripe"
	"github.com/parley/parley/agent/outbound/vapi"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/handlers/resource"
	"github.com/parley/parley/manage"
)

// Base holds what the REST API's and the dashboard's handlers need, and the
// operations both run (the connectors' live checks, the CSV import, the URL
// sync, the stats export...). The REST API's and the dashboard's handlers
// embed the one Base web builds; its Runtime (address, logger, clock) is
// every surface's.
type Base struct {
	*Runtime
	DB *db.DB
	// Manage runs the management operations the surfaces share.
	Manage   *manage.Service
	Box      *auth.Box
	Sessions *scs.SessionManager
	CDNURL   string
	// Outbound makes every outgoing request (corpus sync, webhooks, MCP).
	Outbound *outbound.Guard
	// Engine runs the turns of chat (and of every other channel).
	Engine *agent.Engine
	// Captcha checks the bot-challenge tokens of chat messages.
	Captcha *auth.BotChallenge
	// CaptchaScriptURL is the challenge's browser script, named in the
	// widget's settings of a tenant with the gate on.
	CaptchaScriptURL string
	// SignInChallenge is the operator's bot challenge, asked of an address
	// by the dashboard's sign-in after repeated failures; both keys empty:
	// none.
	SignInChallenge SignInChallenge
	// OAuth issues and verifies the authorization server's tokens.
	OAuth *auth.OAuth
	// Passwords checks admin sign-ins.
	Passwords *auth.Passwords
	// ResetByEmail is set when PARLEY_SMTP_URL is: forgotten passwords are
	// reset with an emailed link. Otherwise the page says how an operator
	// resets one.
	ResetByEmail bool
	// SignUp is PARLEY_SIGNUP: who may create a workspace from the sign-in
	// page: "closed" (nobody: tenants come from the command line), "invite"
	// (with the operator's invitation) or "open" (anyone, once their email
	// is confirmed).
	SignUp string
	// Vapi is the operator's account at the voice orchestrator, for the
	// managed voice setup; unset, tenants link their own assistant.
	Vapi vapi.Operator
	// Stripe is the payment connector's client, for the connection test of
	// a tenant's key (the engine makes payment links with the same one).
	Stripe *stripe.Client
	// Draining is set once the server begins to stop: /readyz answers 503
	// (Server.Run's drain).
	Draining atomic.Bool
}

// SignInChallenge holds the keys of the sign-in's bot challenge.
type SignInChallenge struct{ SiteKey, SecretKey string }

// TenantFrom is the tenant a /tenants/{slug} request is about; the
// tenantAPI middleware set it before any handler runs.
func TenantFrom(c echo.Context) parley.Tenant {
	t, _ := TenantOf(c)
	return t
}

// Render writes a templ component with a status.
func Render(c echo.Context, status int, component templ.Component) error {
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	c.Response().WriteHeader(status)
	return component.Render(c.Request().Context(), c.Response())
}

// Invalid is a 400 with a message and no details.
func Invalid(format string, args ...any) error {
	return parley.Errorf(parley.KindInvalid, format, args...)
}

// healthStatus is what /healthz and /readyz answer; error says what is not
// ready.
type healthStatus struct {
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
}

// Healthz answers while the process is up.
func (h *Base) Healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, healthStatus{Status: "ok"})
}

// DeleteOne answers a DELETE of one of the tenant's resources, named by the
// path parameter param: del removes it (or answers its not-found error),
// then the body is {deleted: true, id}.
func DeleteOne(c echo.Context, param string, del func(ctx context.Context, tenantID, id string) error) error {
	id := c.Param(param)
	if err := del(c.Request().Context(), TenantFrom(c).ID, id); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, resource.NewDeletionJSON(id))
}

// Readyz answers 200 when the instance takes requests: 503 once it is
// stopping (a load balancer then sends its requests elsewhere), or when the
// database is unreachable.
func (h *Base) Readyz(c echo.Context) error {
	if h.Draining.Load() {
		return c.JSON(http.StatusServiceUnavailable, healthStatus{Status: "draining", Error: "shutting down"})
	}
	if err := h.DB.Ping(c.Request().Context()); err != nil {
		h.Log(c).Error("readiness check failed", "err", err)
		return c.JSON(http.StatusServiceUnavailable, healthStatus{Status: "unavailable", Error: "database unreachable"})
	}
	return c.JSON(http.StatusOK, healthStatus{Status: "ok"})
}

// Addresses vets tenants' URLs for the management operations with the
// handler's outbound guard, read at each call.
func (h *Base) Addresses() manage.Addresses { return handlerAddresses{h} }

type handlerAddresses struct{ h *Base }

func (a handlerAddresses) Problem(ctx context.Context, rawURL string, mustResolve bool) string {
	return a.h.addressProblem(ctx, rawURL, mustResolve)
}

// PlainHTTP: without a guard (tests of handlers alone) nothing is refused,
// as addressProblem refuses nothing then.
func (a handlerAddresses) PlainHTTP(ctx context.Context, rawURL string) bool {
	return a.h.Outbound == nil || a.h.Outbound.Exempt(ctx, rawURL)
}

// addressProblem says why the service must not call rawURL's host, or "":
// it is or resolves to a private or reserved address; or, when
// mustResolve, it does not resolve. The dial-time guard applies again to
// every request whatever this says.
func (h *Base) addressProblem(ctx context.Context, rawURL string, mustResolve bool) string {
	if h.Outbound == nil {
		return ""
	}
	err := h.Outbound.CheckURL(ctx, rawURL)
	var oe *outbound.Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &oe) && oe.Kind == outbound.Refused:
		return oe.Error()
	case !mustResolve:
		return ""
	}
	host := rawURL
	if u, perr := url.Parse(rawURL); perr == nil {
		host = u.Hostname()
	}
	// The words of a name that resolves to a private address (outbound):
	// a tenant learns nothing of which internal names exist.
	return "refused: " + host + " is not a public internet address"
}

// plainHTTPRefused reports whether u is plain http to a host the operator
// did not exempt (PARLEY_SSRF_ALLOW): outgoing calls to anyone else use https.
func (h *Base) plainHTTPRefused(ctx context.Context, u *url.URL, rawURL string) bool {
	return u.Scheme != "https" && (h.Outbound == nil || !h.Outbound.Exempt(ctx, rawURL))
}

func Deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
