package integrations

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/views"
)

func (h *Integrations) renderMCP(c echo.Context, status int, f views.MCPForm) error {
	t := dash.AdminFrom(c).Tenant
	f.Plan, f.Available = t.Plan, t.PlanInfo().MCP
	return handlers.Render(c, status, views.MCPPage(dash.Page(c, h.Sessions, "MCP server", "integrations"), f))
}

// mcpForm is the MCP page's form with the tenant's saved settings.
func mcpForm(t parley.Tenant) views.MCPForm {
	return views.MCPForm{Configured: t.MCPToolsURL != nil, URL: handlers.Deref(t.MCPToolsURL),
		MaxTools: strconv.Itoa(t.MCPToolsMaxTools), HasKey: t.MCPToolsAPIKey != nil}
}

// ShowMCPPage renders the MCP tools form, or what the plan lacks.
func (h *Integrations) ShowMCPPage(c echo.Context) error {
	return h.renderMCP(c, http.StatusOK, mcpForm(dash.AdminFrom(c).Tenant))
}

// SaveMCPSettings saves the form with the API's rules, or re-renders it with the errors.
func (h *Integrations) SaveMCPSettings(c echo.Context) error {
	t := dash.AdminFrom(c).Tenant
	if !t.PlanInfo().MCP {
		return parley.PlanRequired("MCP tools", t.Plan, "builder")
	}
	ctx := c.Request().Context()
	cur, err := h.Manage.MCPSettings(ctx, t.ID)
	if err != nil {
		return err
	}
	form, err := c.FormParams()
	if err != nil {
		return handlers.Invalid("Could not read the form")
	}
	f := views.MCPForm{Configured: cur.URL != nil, URL: strings.TrimSpace(form.Get("mcpToolsUrl")),
		MaxTools: strings.TrimSpace(form.Get("mcpToolsMaxTools")), HasKey: cur.SealedAPIKey != nil}
	// The owner's words come first where they differ from the API's.
	in := parley.MCPSettingsInput{URL: parley.Some(f.URL), Problems: parley.FieldErrors{}}
	if f.URL == "" {
		in.Problems.Add("mcpToolsUrl", "is required; to turn MCP tools off, remove the configuration")
	}
	if n, err := strconv.Atoi(f.MaxTools); err != nil {
		in.Problems.Add("mcpToolsMaxTools", "must be a whole number")
	} else {
		in.MaxTools = parley.Some(n)
	}
	switch key := form.Get("mcpToolsApiKey"); {
	case key != "":
		in.APIKey = parley.Some(key)
	case form.Get("removeApiKey") == "true":
		in.APIKey = parley.Some("") // the API's way to remove it
	}
	_, err = h.Manage.SaveMCPSettings(ctx, t, in)
	if status, ferrs, _, ok := dash.FormStatus(err); ok && len(ferrs) > 0 {
		f.Errors = ferrs
		return h.renderMCP(c, status, f)
	}
	if err != nil {
		return err
	}
	h.ForgetMCPTools(t.ID)
	h.Sessions.Put(ctx, dash.SessFlash, "MCP tools saved.")
	return c.Redirect(http.StatusSeeOther, "/admin/mcp-tools")
}

// RemoveMCPSettings deletes the configuration; htmx is sent back to the page.
func (h *Integrations) RemoveMCPSettings(c echo.Context) error {
	ctx := c.Request().Context()
	if err := h.Manage.ClearMCPSettings(ctx, dash.AdminFrom(c).Tenant.ID); err != nil {
		return err
	}
	h.ForgetMCPTools(dash.AdminFrom(c).Tenant.ID)
	h.Sessions.Put(ctx, dash.SessFlash, "MCP configuration removed.")
	return dash.SeeOther(c, "/admin/mcp-tools")
}
