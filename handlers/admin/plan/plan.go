// Package plan is the dashboard's "Plan and usage" page (/admin/plan): the
// tenant's plan and what it includes, its bot seats, this month's
// conversations against the limit with a chart, what happens at the limit,
// and how the plan changes (the operator sets it: the operator API, `parley
// tenant plan`). It reads through manage.TenantPlan, as the operator API
// and the MCP tool read_plan_usage do. An owner's page.
package plan

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/manage"
	"github.com/parley/parley/views"
)

// Plan is the dashboard's "Plan and usage" area.
type Plan struct{ *handlers.Base }

// New builds the area over the Base web builds.
func New(b *handlers.Base) *Plan { return &Plan{b} }

// ShowPlanPage renders the signed-in tenant's plan and usage.
func (h *Plan) ShowPlanPage(c echo.Context) error {
	ctx, t, now := c.Request().Context(), dash.AdminFrom(c).Tenant, h.Clock()
	u, err := h.Manage.TenantPlan(ctx, t.Slug, now)
	if err != nil {
		return err
	}
	counts, err := h.DB.TenantUsage(ctx, t.ID, now)
	if err != nil {
		return err
	}
	v := PlanView(u)
	v.Limits = []views.PlanLimit{
		{Label: "Segments", Used: counts.Segments, Limit: u.Info.SegmentsLimit, Href: "/admin/segments"},
		{Label: "Knowledge base entries", Used: counts.CorpusEntries, Limit: u.Info.CorpusLimit, Href: "/admin/corpus"},
		{Label: "Team members", Used: u.Members, Limit: u.Info.MembersLimit},
	}
	return handlers.Render(c, http.StatusOK, views.PlanPage(dash.Page(c, h.Sessions, "Plan and usage", "plan"), v))
}

// PlanView is u in the owner's words: the page's model but for the
// limits' usage, which the page reads beside it.
func PlanView(u manage.PlanUsage) views.PlanUsage {
	v := views.PlanUsage{
		Plan: planName(u.Plan), BotSeats: u.BotSeats, PerSeat: parley.ConversationsPerBotSeat,
		BaseConversations: u.Info.ConversationsLimit, ConversationsLimit: u.ConversationsLimit,
		ConversationsUsed: u.Conversations, AtLimit: u.AtLimit(),
		PeriodStart: u.PeriodStart.Format("2 January 2006"), ResetOn: u.PeriodEnd.Format("2 January 2006"),
		Features: []views.PlanFeature{
			{Label: "Chat widget", Included: u.Info.Widget, Detail: feature(u.Info.Widget,
				"The chat on your website and the chat API.",
				"Visitors are told the assistant is not activated yet.")},
			{Label: "Your own MCP tools", Included: u.Info.MCP, Detail: feature(u.Info.MCP,
				"Your assistant can use the tools of your MCP server, and apps can manage it through Parley's.",
				"From the builder plan.")},
			{Label: "Phone calls", Included: u.Info.Voice, Detail: feature(u.Info.Voice,
				"Your assistant answers a phone number.",
				"On the scale plan.")},
		},
		Chart: usageChart(u), Deleted: max(u.Conversations-charted(u), 0),
	}
	for _, p := range parley.Plans {
		v.Plans = append(v.Plans, views.PlanRow{Name: planName(p.Name), Widget: p.Widget, MCP: p.MCP, Voice: p.Voice,
			Conversations: p.ConversationsLimit, Segments: p.SegmentsLimit, Corpus: p.CorpusLimit, Team: p.MembersLimit,
			Current: p.Name == u.Plan})
	}
	return v
}

func feature(on bool, yes, no string) string {
	if on {
		return yes
	}
	return no
}

// planName is a plan's name as the owner reads it: "Builder".
func planName(name string) string {
	if name == "" {
		return name
	}
	return strings.ToUpper(name[:1]) + name[1:]
}

// usageChart is the month's conversations so far: started each day (bars),
// their running total and the limit (lines), on one scale.
func usageChart(u manage.PlanUsage) views.Chart {
	ch := views.Chart{ID: "usage-chart", Title: "Conversations this month"}
	daily := views.ChartSeries{Name: "Started", Class: "series-a"}
	total := views.ChartSeries{Name: "Started so far", Class: "series-b", Level: true}
	limit := views.ChartSeries{Name: "Monthly limit", Class: "series-c", Level: true}
	sum := 0
	for i, n := range u.Daily {
		sum += n
		ch.Labels = append(ch.Labels, u.PeriodStart.AddDate(0, 0, i).Format("2 Jan"))
		daily.Values = append(daily.Values, n)
		total.Values = append(total.Values, sum)
		limit.Values = append(limit.Values, u.ConversationsLimit)
	}
	ch.Series = []views.ChartSeries{daily, total, limit}
	return ch
}

// charted is the conversations the chart counts: those of the month that
// still exist.
func charted(u manage.PlanUsage) int {
	n := 0
	for _, d := range u.Daily {
		n += d
	}
	return n
}
