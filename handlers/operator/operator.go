// Package operator is the operator's API (/operator/...): whoever runs the
// Parley installation reads every tenant's plan and usage and sets a
// tenant's plan and bot seats. It is authenticated by the operator's own
// credential, PARLEY_OPERATOR_TOKEN, sent as Authorization: Bearer; not by
// a tenant's token, nor by X-Service-Admin-Token (the chat's). The
// operations are manage's, which `parley tenant plan` and `parley tenant
// usage` run too.
package operator

import (
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db/audit"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/jsonbody"
	"github.com/parley/parley/handlers/resource"
	"github.com/parley/parley/manage"
)

// Handler answers the operator API.
type Handler struct {
	*handlers.Runtime
	Manage *manage.Service
	// TokenHash is the SHA-256 of the operator's token; nil turns the
	// API off (every request answers 404).
	TokenHash []byte
}

// errOff answers every request while no operator token is configured.
var errOff = &parley.Error{Kind: parley.KindNotFound, Code: "OPERATOR_API_OFF",
	Message: "The operator API is off: set PARLEY_OPERATOR_TOKEN on the server to turn it on"}

// errToken answers a request without the operator's token.
var errToken = &parley.Error{Kind: parley.KindUnauthorized,
	Message: "Missing or wrong operator token: send PARLEY_OPERATOR_TOKEN as Authorization: Bearer <token>"}

// Authenticate lets through a request that carries the operator's token,
// compared in constant time (both sides hashed, so that neither their
// lengths nor their bytes tell through timing), and marks the operator as
// the request's actor for the audit log. The token is never logged.
func (h *Handler) Authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if len(h.TokenHash) == 0 {
			return errOff
		}
		if !handlers.BearerMatches(c.Request(), h.TokenHash) {
			c.Response().Header().Set("WWW-Authenticate", `Bearer realm="parley-operator"`)
			return errToken
		}
		ctx := audit.WithActor(c.Request().Context(), audit.Actor{Kind: audit.ActorOperator, Name: "Operator API"})
		c.SetRequest(c.Request().WithContext(ctx))
		return next(c)
	}
}

// TenantListJSON is a page of every tenant's plan and usage.
type TenantListJSON struct {
	Tenants    []resource.PlanUsageJSON `json:"tenants"`
	Pagination PaginationJSON           `json:"pagination"`
}

// PaginationJSON is a page's place among all: {page, limit, total, pages}.
type PaginationJSON struct {
	Page  int `json:"page"`
	Limit int `json:"limit"`
	Total int `json:"total"`
	Pages int `json:"pages"`
}

// ListTenants is GET /operator/tenants: every tenant's plan, seats and
// usage this period, by slug, a page at a time (page from 1, limit 1..100,
// default 20).
func (h *Handler) ListTenants(c echo.Context) error {
	page, limit := 1, manage.DefaultTenantsPage
	handlers.QueryInt(c, "page", &page)
	handlers.QueryInt(c, "limit", &limit)
	rows, total, err := h.Manage.TenantPlans(c.Request().Context(), page, limit, h.Clock())
	if err != nil {
		return err
	}
	out := TenantListJSON{Tenants: make([]resource.PlanUsageJSON, len(rows)),
		Pagination: PaginationJSON{Page: page, Limit: limit, Total: total, Pages: (total + limit - 1) / limit}}
	for i, r := range rows {
		out.Tenants[i] = resource.NewPlanUsageJSON(r)
	}
	return c.JSON(http.StatusOK, out)
}

// ShowTenant is GET /operator/tenants/{slug}: one tenant's plan, seats and
// usage, with its conversations per day this period.
func (h *Handler) ShowTenant(c echo.Context) error {
	u, err := h.Manage.TenantPlan(c.Request().Context(), c.Param("slug"), h.Clock())
	if err != nil {
		return err
	}
	// The ETag is of the plan and seats; the usage moves without a write.
	return handlers.JSONWithETag(c, http.StatusOK, u.ETag(), resource.NewPlanUsageJSON(u))
}

// planFields are the members of a plan change's body.
var planFields = []string{"plan", "botSeats"}

// UpdateTenantPlan is PUT /operator/tenants/{slug}/plan: sets the plan,
// the bot seats or both ({plan, botSeats}; what is absent stays), in one
// transaction with its audit entry, and answers the tenant's plan and
// usage after. The tenant's next chat message is held to the new limit.
// A member that is not one of the two is refused, so that a misspelt
// field does not pass as a change of the other alone. Under an If-Match,
// only when the plan and seats are as the client read them (412 else).
func (h *Handler) UpdateTenantPlan(c echo.Context) error {
	raw, err := jsonbody.DecodeObject(c, jsonbody.MaxJSONBody)
	if err != nil {
		return err
	}
	var in manage.PlanInput
	in.Problems = jsonbody.DecodeFields(raw, &in)
	for name := range raw {
		if !slices.Contains(planFields, name) {
			in.Problems.Add(name, "is not a field of a plan change: send plan, botSeats or both")
		}
	}
	u, err := h.Manage.SetPlan(handlers.Conditional(c), c.Param("slug"), in, h.Clock())
	if err != nil {
		return err
	}
	return handlers.JSONWithETag(c, http.StatusOK, u.ETag(), resource.NewPlanUsageJSON(u))
}
