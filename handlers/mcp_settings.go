package handlers

import (
	"context"
	"fmt"
	"net/http"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
)

const (
	maxMCPURL       = 500
	maxMCPAPIKey    = 500
	defaultMCPTools = 10
	minMCPTools     = 1
	maxMCPTools     = 20
)

type mcpSettingsJSON struct {
	MCPToolsURL      *string `json:"mcpToolsUrl"`
	MCPToolsMaxTools int     `json:"mcpToolsMaxTools"`
	HasAPIKey        bool    `json:"hasApiKey"`
	Plan             string  `json:"plan"`
}

func newMCPSettingsJSON(s db.MCPSettings, plan string) mcpSettingsJSON {
	return mcpSettingsJSON{MCPToolsURL: s.URL, MCPToolsMaxTools: s.MaxTools, HasAPIKey: s.SealedAPIKey != nil, Plan: plan}
}

// mcpBody is the JSON of an MCP tools save.
type mcpBody struct {
	URL      parley.Opt[string] `json:"mcpToolsUrl"`
	APIKey   parley.Opt[string] `json:"mcpToolsApiKey"`
	MaxTools parley.Opt[int]    `json:"mcpToolsMaxTools"`
}

// validateMCPSettings checks an MCP tools save, adding its problems to errs;
// keep is the max tools used when b has none. It returns the max tools and the
// key change (unset keeps the stored key). The API and the dashboard share it.
func (h *Handler) validateMCPSettings(ctx context.Context, b mcpBody, keep int, errs parley.FieldErrors) (int, parley.Opt[[]byte]) {
	if !b.URL.Set || b.URL.Null || b.URL.Value == "" {
		errs.Add("mcpToolsUrl", "is required (use DELETE to remove the configuration)")
	} else {
		parley.CheckHTTPURL(errs, "mcpToolsUrl", b.URL, true)
		h.checkOutboundURL(ctx, errs, "mcpToolsUrl", b.URL.Value)
	}
	maxTools := keep
	if b.MaxTools.Set && !b.MaxTools.Null {
		maxTools = b.MaxTools.Value
		if maxTools < minMCPTools || maxTools > maxMCPTools {
			errs.Add("mcpToolsMaxTools", fmt.Sprintf("must be between %d and %d", minMCPTools, maxMCPTools))
		}
	}
	var key parley.Opt[[]byte]
	if b.APIKey.Set {
		switch {
		case b.APIKey.Null || b.APIKey.Value == "":
			key = parley.Opt[[]byte]{Set: true, Null: true}
		case utf8.RuneCountInString(b.APIKey.Value) > maxMCPAPIKey:
			errs.Add("mcpToolsApiKey", parley.TooLong(maxMCPAPIKey))
		default:
			key = parley.Some(h.Box.Seal([]byte(b.APIKey.Value)))
		}
	}
	return maxTools, key
}

// planRequired is the 402 of a feature the tenant's plan lacks.
func planRequired(feature, plan, needed string) error {
	return &parley.Error{Kind: parley.KindNotActivated, Code: "PLAN_REQUIRED",
		Message: fmt.Sprintf("%s need the %s plan or above (current plan: %s)", feature, needed, plan),
		Details: map[string]string{"plan": plan, "requiredPlan": needed}}
}

// forgetMCPTools drops the tenant's cached MCP tool list once its settings
// changed. Other instances need no word of it: they use a cached list only
// with the URL and key it was made with (agent.MCPProxy).
func (h *Handler) forgetMCPTools(tenantID string) {
	if h.Engine != nil && h.Engine.MCP != nil {
		h.Engine.MCP.Forget(tenantID)
	}
}

// ShowMCPSettings answers GET /tenants/{slug}/mcp-tools on every plan, so a
// dashboard can show what an upgrade unlocks.
func (h *Handler) ShowMCPSettings(c echo.Context) error {
	t := tenantFrom(c)
	s, err := h.DB.MCPSettings(c.Request().Context(), t.ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newMCPSettingsJSON(s, t.Plan))
}

// UpdateMCPSettings answers PUT /tenants/{slug}/mcp-tools (builder plan or above).
// An absent mcpToolsApiKey keeps the stored key; null or "" removes it.
func (h *Handler) UpdateMCPSettings(c echo.Context) error {
	t := tenantFrom(c)
	if !t.PlanInfo().MCP {
		return planRequired("MCP tools", t.Plan, "builder")
	}
	raw, err := decodeObject(c, maxJSONBody)
	if err != nil {
		return err
	}
	var b mcpBody
	errs := decodeFields(raw, &b)
	keep := defaultMCPTools
	if !b.MaxTools.Set || b.MaxTools.Null {
		if cur, err := h.DB.MCPSettings(c.Request().Context(), t.ID); err == nil && cur.URL != nil {
			keep = cur.MaxTools
		}
	}
	maxTools, key := h.validateMCPSettings(c.Request().Context(), b, keep, errs)
	if err := errs.Err(); err != nil {
		return err
	}
	s, err := h.DB.SaveMCPSettings(c.Request().Context(), t.ID, b.URL.Value, maxTools, key)
	if err != nil {
		return err
	}
	h.forgetMCPTools(t.ID)
	return c.JSON(http.StatusOK, newMCPSettingsJSON(s, t.Plan))
}

// DeleteMCPSettings answers DELETE /tenants/{slug}/mcp-tools.
func (h *Handler) DeleteMCPSettings(c echo.Context) error {
	t := tenantFrom(c)
	if err := h.DB.ClearMCPSettings(c.Request().Context(), t.ID); err != nil {
		return err
	}
	h.forgetMCPTools(t.ID)
	return c.JSON(http.StatusOK, map[string]any{"deleted": true, "mcpToolsUrl": nil, "mcpToolsMaxTools": defaultMCPTools, "hasApiKey": false})
}
