package integrations

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/agent"
	"github.com/parley/parley/agent/outbound"
	"github.com/parley/parley/agent/outbound/mcpclient"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/views"
)

// maxTestExcerpt bounds the part of a tested endpoint's answer shown.
const maxTestExcerpt = 600

// integrationsView is the state of the tenant's connections.
func (h *Integrations) integrationsView(ctx context.Context, t parley.Tenant) (views.IntegrationsView, error) {
	v := views.IntegrationsView{AuthMode: handlers.Deref(t.VisitorAuthMode), MailConfigured: h.ResetByEmail,
		ContextURL: handlers.Deref(t.VisitorContextURL), Plan: t.Plan, MCPAvailable: t.PlanInfo().MCP,
		MCPURL: handlers.Deref(t.MCPToolsURL), MCPHasKey: t.MCPToolsAPIKey != nil, MCPMaxTools: t.MCPToolsMaxTools,
		VoiceAvailable: t.PlanInfo().Voice, VoiceEnabled: t.VoiceEnabled, VoiceNumber: handlers.Deref(t.VoicePhoneNumber)}
	cal, err := h.DB.CalendarConnector(ctx, t.ID)
	if err != nil {
		return v, err
	}
	if cal != nil {
		v.CalendarName, v.CalendarServer = cal.CalendarName, cal.ServerURL
		if u, perr := url.Parse(cal.ServerURL); perr == nil && u.Host != "" {
			v.CalendarServer = u.Host
		}
	}
	pay, err := h.DB.PaymentConnector(ctx, t.ID)
	if err != nil {
		return v, err
	}
	if pay != nil {
		v.PaymentsConnected, v.PaymentsPaused = true, !pay.IsActive
		v.PaymentsTestMode = pay.KeyMode == parley.StripeModeTest
	}
	for _, o := range dash.VisitorAuthModes {
		if o.Value == v.AuthMode {
			v.AuthModeLabel = o.Label
		}
	}
	return v, nil
}

// ShowIntegrationsPage renders the index of the tenant's connections:
// visitor verification, the context webhook and the MCP server.
func (h *Integrations) ShowIntegrationsPage(c echo.Context) error {
	v, err := h.integrationsView(c.Request().Context(), dash.AdminFrom(c).Tenant)
	if err != nil {
		return err
	}
	return handlers.Render(c, http.StatusOK, views.IntegrationsPage(dash.Page(c, h.Sessions, "Integrations", "integrations"), v))
}

// SendContextTest calls the tenant's context webhook as the chat does for
// an anonymous visitor (signed, through the SSRF guard, within its timeout)
// and shows what came back: htmx gets the result alone, a plain form post
// the page with it.
func (h *Integrations) SendContextTest(c echo.Context) error {
	t := dash.AdminFrom(c).Tenant
	r := h.testContextWebhook(c.Request().Context(), t)
	if dash.IsHTMX(c) {
		return handlers.Render(c, http.StatusOK, views.ContextTestResultView(&r))
	}
	v, err := h.integrationsView(c.Request().Context(), t)
	if err != nil {
		return err
	}
	v.ContextTest = &r
	return handlers.Render(c, http.StatusOK, views.IntegrationsPage(dash.Page(c, h.Sessions, "Integrations", "integrations"), v))
}

// testContextWebhook makes the call and says, in the owner's words, what
// the chat makes of the answer.
func (h *Integrations) testContextWebhook(ctx context.Context, t parley.Tenant) views.ContextTestResult {
	failed := func(format string, args ...any) views.ContextTestResult {
		return views.ContextTestResult{State: "failed", Summary: fmt.Sprintf(format, args...)}
	}
	target := handlers.Deref(t.VisitorContextURL)
	if target == "" || h.Outbound == nil {
		return failed("No context webhook address is set: set it under Developer settings first.")
	}
	key, err := h.Box.Open(t.VisitorSigningKey)
	if err != nil {
		h.Logger.Error("opening the visitor signing key for a context test", "tenant", t.Slug, "err", err)
		return failed("The visitor signing key cannot be read: rotate it under Developer settings, then test again.")
	}
	start := time.Now()
	status, raw, err := agent.CallVisitorContext(ctx, h.Outbound.Client(agent.VisitorContextTimeout), target, key, h.Clock(), agent.VisitorContextQuery{})
	took := elapsed(time.Since(start))
	if err != nil && status == 0 {
		host := target
		if u, perr := url.Parse(target); perr == nil {
			host = u.Hostname()
		}
		oe := outbound.Classify(err, host)
		if oe.Kind == outbound.Timeout {
			return failed("No answer within %s. The chat gives up at that point and answers without context.", elapsed(agent.VisitorContextTimeout))
		}
		return failed("No answer (%s). The chat answers without context when this happens.", oe.Error())
	}
	r := views.ContextTestResult{State: "failed", Excerpt: parley.Clip(strings.ToValidUTF8(string(raw), "?"), maxTestExcerpt)}
	switch got, perr := agent.ParseVisitorContext(raw); {
	case err != nil:
		r.Summary = fmt.Sprintf("HTTP %d in %s, but the answer could not be read to the end. The chat answers without context when this happens.", status, took)
	case status/100 != 2:
		r.Summary = fmt.Sprintf("HTTP %d in %s. The chat only uses a 2xx answer: it answers without context.", status, took)
	case perr != nil:
		r.Summary = fmt.Sprintf(`HTTP %d in %s, but the answer is not a JSON object with a "context" string, such as {"context": "Premium customer since 2021"}: the chat ignores it.`, status, took)
	default:
		r.State = "succeeded"
		r.Summary = fmt.Sprintf("HTTP %d in %s. The assistant gets %s of context about the visitor.", status, took,
			views.Count(len([]rune(got.Context)), "character", "characters"))
		if got.Challenge != nil {
			r.Summary += " The answer also asks for a challenge, which the assistant puts to visitors not verified yet."
		}
	}
	return r
}

// elapsed writes a duration for the owner: 85 ms, 1.2 s.
func elapsed(d time.Duration) string {
	if d < time.Second {
		return strconv.FormatInt(d.Milliseconds(), 10) + " ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
}

// DiscoverMCPTools lists the tools of the tenant's saved MCP server now, as
// the chat lists them (and refreshes the chat's cached list with them).
func (h *Integrations) DiscoverMCPTools(c echo.Context) error {
	t := dash.AdminFrom(c).Tenant
	if !t.PlanInfo().MCP {
		return parley.PlanRequired("MCP tools", t.Plan, "builder")
	}
	r := h.discoverMCPTools(c.Request().Context(), t)
	if dash.IsHTMX(c) {
		return handlers.Render(c, http.StatusOK, views.MCPDiscoverResultView(&r))
	}
	f := mcpForm(t)
	f.Discover = &r
	return h.renderMCP(c, http.StatusOK, f)
}

func (h *Integrations) discoverMCPTools(ctx context.Context, t parley.Tenant) views.MCPDiscoverResult {
	switch {
	case !mcpclient.Configured(t):
		return views.MCPDiscoverResult{Error: "no server is saved. Save its address first."}
	case h.Engine == nil || h.Engine.MCP == nil:
		return views.MCPDiscoverResult{Error: "this server does not call MCP servers."}
	}
	tools, err := h.Engine.MCP.Refresh(ctx, t)
	if err != nil {
		return views.MCPDiscoverResult{Error: err.Error()}
	}
	r := views.MCPDiscoverResult{MaxTools: t.MCPToolsMaxTools}
	offers, _ := agent.MCPOffers(tools, t.MCPToolsMaxTools)
	for i, tool := range tools {
		found := views.MCPToolFound{Name: tool.Name, Description: tool.Description}
		if i < len(offers) {
			found.Function = offers[i].Function
		}
		r.Tools = append(r.Tools, found)
	}
	return r
}
