package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/jsonbody"
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

// ShowMCPSettings answers GET /tenants/{slug}/mcp-tools on every plan, so a
// dashboard can show what an upgrade unlocks.
func (h *Integrations) ShowMCPSettings(c echo.Context) error {
	t := handlers.TenantFrom(c)
	s, err := h.Manage.MCPSettings(c.Request().Context(), t.ID)
	if err != nil {
		return err
	}
	return handlers.ShowWithETag(c, s.ETag(t.Plan), newMCPSettingsJSON(s, t.Plan))
}

// UpdateMCPSettings answers PUT /tenants/{slug}/mcp-tools (builder plan or
// above), under an If-Match only on the settings as the client read them.
// An absent mcpToolsApiKey keeps the stored key; null or "" removes it.
func (h *Integrations) UpdateMCPSettings(c echo.Context) error {
	t := handlers.TenantFrom(c)
	if !t.PlanInfo().MCP {
		return parley.PlanRequired("MCP tools", t.Plan, "builder")
	}
	raw, err := jsonbody.DecodeObject(c, jsonbody.MaxJSONBody)
	if err != nil {
		return err
	}
	var b mcpBody
	problems := jsonbody.DecodeFields(raw, &b)
	s, err := h.Manage.SaveMCPSettings(handlers.Conditional(c), t, parley.MCPSettingsInput{URL: b.URL, APIKey: b.APIKey,
		MaxTools: b.MaxTools, Problems: problems})
	if err != nil {
		return err
	}
	h.ForgetMCPTools(t.ID)
	return handlers.JSONWithETag(c, http.StatusOK, s.ETag(t.Plan), newMCPSettingsJSON(s, t.Plan))
}

// DeleteMCPSettings answers DELETE /tenants/{slug}/mcp-tools.
func (h *Integrations) DeleteMCPSettings(c echo.Context) error {
	t := handlers.TenantFrom(c)
	if err := h.Manage.ClearMCPSettings(c.Request().Context(), t.ID); err != nil {
		return err
	}
	h.ForgetMCPTools(t.ID)
	return c.JSON(http.StatusOK, mcpSettingsDeletionJSON{Deleted: true, MCPToolsMaxTools: parley.DefaultMCPTools})
}

// mcpSettingsDeletionJSON is what DELETE /tenants/{slug}/mcp-tools answers:
// the settings as they now are, empty (mcpToolsUrl null).
type mcpSettingsDeletionJSON struct {
	Deleted          bool    `json:"deleted"`
	MCPToolsURL      *string `json:"mcpToolsUrl"`
	MCPToolsMaxTools int     `json:"mcpToolsMaxTools"`
	HasAPIKey        bool    `json:"hasApiKey"`
}
