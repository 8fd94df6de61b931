package public

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/agent"
	"github.com/parley/parley/db"
	"github.com/parley/parley/handlers"
)

// Capabilities GET /context/{slug} may list besides the tool types. Each is
// listed only when it is true for the tenant now.
const (
	// CapabilityChat: the plan has the widget, so POST /chat/{slug} answers.
	CapabilityChat = "chat"
	// CapabilityMCPTools: the plan has MCP and the tenant configured its MCP server.
	CapabilityMCPTools = "mcp_tools"
	// CapabilityVoice: the plan has voice and the tenant set it up, so
	// that the orchestrator's calls are answered: voice enabled, with the
	// secret the orchestrator sends (voiceTenant's gates).
	CapabilityVoice = "voice"
)

// contextJSON is the public description of a tenant's agent, for other
// agents and browsers. It holds nothing private: no ids, keys, limits or plan.
type contextJSON struct {
	Tenant       contextTenantJSON    `json:"tenant"`
	Capabilities []string             `json:"capabilities"`
	Segments     []string             `json:"segments"`
	Endpoints    contextEndpointsJSON `json:"endpoints"`
}

type contextTenantJSON struct {
	Name        string  `json:"name"`
	Description *string `json:"description"`
	BotName     *string `json:"botName"`
	BotTitle    *string `json:"botTitle"`
}

// contextEndpointsJSON lists where to talk to the agent (chat) and where
// to manage it (Parley's MCP server, for the tenant's own integrators with a
// token; the tenant comes from the token).
type contextEndpointsJSON struct {
	Chat string `json:"chat"`
	MCP  string `json:"mcp"`
}

// ShowContext answers GET /context/{slug}: public, cacheable for a minute,
// readable from any origin.
func (h *Handler) ShowContext(c echo.Context) error {
	hdr := c.Response().Header()
	hdr.Set(echo.HeaderAccessControlAllowOrigin, "*")
	hdr.Set(echo.HeaderCacheControl, "no-store") // errors are not cached
	ctx := c.Request().Context()
	t, err := h.DB.TenantBySlug(ctx, c.Param("slug"))
	if err != nil {
		return err
	}
	handlers.SetTenant(c, t)
	segments, err := h.DB.ListSegments(ctx, t.ID)
	if err != nil {
		return err
	}
	tools, err := h.DB.ListTools(ctx, t.ID)
	if err != nil {
		return err
	}
	hasProducts := false
	if agent.HasToolType(tools, parley.ToolRecommendProduct) {
		if hasProducts, err = h.DB.HasActiveProducts(ctx, t.ID); err != nil {
			return err
		}
	}
	hasCalendar := false
	if agent.HasToolType(tools, parley.ToolBookMeeting) {
		conn, err := h.DB.CalendarConnector(ctx, t.ID)
		if err != nil {
			return err
		}
		hasCalendar = conn != nil
	}
	out := contextJSON{
		Tenant: contextTenantJSON{Name: t.Name, Description: handlers.NonBlank(t.Description),
			BotName: handlers.NonBlank(t.BotName), BotTitle: handlers.NonBlank(t.BotTitle)},
		Capabilities: contextCapabilities(t, segments, tools, hasProducts, hasCalendar),
		Segments:     []string{},
		Endpoints:    contextEndpointsJSON{Chat: h.BaseURL + "/chat/" + t.Slug, MCP: h.BaseURL + handlers.MCPPath},
	}
	for _, s := range segments { // the default first
		if s.IsActive {
			out.Segments = append(out.Segments, s.Slug)
		}
	}
	hdr.Set(echo.HeaderCacheControl, "public, max-age=60")
	return c.JSON(http.StatusOK, out)
}

// contextCapabilities lists what the tenant's agent can do: the channels its
// plan and configuration enable, then, when it can hold a conversation, the
// type (lowercase) of each active tool reachable from an active segment and
// offered in chat (as the enrichment chain decides: no BOOK_MEETING without
// a calendar connector, no RECOMMEND_PRODUCT without an active product), once.
func contextCapabilities(t parley.Tenant, segments []db.SegmentSummary, tools []parley.Tool, hasProducts, hasCalendar bool) []string {
	plan := t.PlanInfo()
	caps := []string{}
	if plan.Widget {
		caps = append(caps, CapabilityChat)
	}
	if plan.MCP && t.MCPToolsURL != nil && strings.TrimSpace(*t.MCPToolsURL) != "" {
		caps = append(caps, CapabilityMCPTools)
	}
	if plan.Voice && t.VoiceEnabled && len(t.VoiceSecret) > 0 {
		caps = append(caps, CapabilityVoice)
	}
	if !plan.Widget {
		return caps // tools run inside conversations; without a channel none can run
	}
	activeSegment := map[string]bool{}
	for _, s := range segments {
		activeSegment[s.ID] = s.IsActive
	}
	has := map[string]bool{}
	for _, tool := range tools {
		offered := (tool.Type != parley.ToolBookMeeting || hasCalendar) && (tool.Type != parley.ToolRecommendProduct || hasProducts)
		if offered && tool.IsActive && (tool.SegmentID == nil || activeSegment[*tool.SegmentID]) {
			has[tool.Type] = true
		}
	}
	for _, typ := range parley.UserToolTypes {
		if has[typ] {
			caps = append(caps, strings.ToLower(typ))
		}
	}
	return caps
}
