package admin

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley/db/listing"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/handlers/resource"
	"github.com/parley/parley/views"
)

// longDate is how the dashboard writes a day for people.
const longDate = "2 January 2006"

// bucketLabel names a timeline bucket (its first day, YYYY-MM-DD) for people.
func bucketLabel(date, granularity string) string {
	d, err := time.Parse(time.DateOnly, date)
	if err != nil {
		return date
	}
	switch granularity {
	case "week":
		return "Week of " + d.Format("2 Jan 2006")
	case "month":
		return d.Format("January 2006")
	}
	return d.Format("2 Jan 2006")
}

// timelineChart is the chart of the stats' timeline.
func timelineChart(id string, buckets []listing.StatsBucket, granularity string) views.Chart {
	ch := views.Chart{ID: id, Title: "Conversations and messages per " + granularity, Series: []views.ChartSeries{
		{Name: "Conversations", Class: "series-a"}, {Name: "Messages", Class: "series-b"}}}
	for _, b := range buckets {
		ch.Labels = append(ch.Labels, bucketLabel(b.Date, granularity))
		ch.Series[0].Values = append(ch.Series[0].Values, b.Conversations)
		ch.Series[1].Values = append(ch.Series[1].Values, b.Messages)
	}
	return ch
}

func satisfaction(s listing.StatsSatisfaction) views.Satisfaction {
	out := views.Satisfaction{Positive: s.Positive, Negative: s.Negative}
	if s.Rate != nil {
		out.Rate = fmt.Sprintf("%.0f%%", *s.Rate*100)
	}
	return out
}

// inboxLink is the inbox filtered by one more parameter over the analytics' window.
func inboxLink(window url.Values, key, value string) string {
	q := url.Values{}
	for _, k := range []string{"from", "to", "segment", "channel"} {
		if v := window.Get(k); v != "" {
			q.Set(k, v)
		}
	}
	q.Set(key, value)
	return "/admin/conversations?" + q.Encode()
}

// ShowAnalyticsPage shows the conversation stats of a window: the API's
// figures and checks, dates in the tenant's time zone, the last 30 days
// unless the owner picks others.
func (h *Leads) ShowAnalyticsPage(c echo.Context) error {
	ctx := c.Request().Context()
	t := dash.AdminFrom(c).Tenant
	loc := resource.TenantLocation(t)
	segments, err := h.segmentOptions(ctx, t.ID)
	if err != nil {
		return err
	}
	v := views.AnalyticsView{Segments: segments, TimeZone: loc.String(), Filter: views.AnalyticsFilter{
		From: c.QueryParam("from"), To: c.QueryParam("to"), Granularity: c.QueryParam("granularity"),
		Segment: c.QueryParam("segment"), Channel: c.QueryParam("channel")}}
	q, st, err := h.Manage.ConversationStats(ctx, t.ID, handlers.StatsListingQuery(c, loc), h.Clock())
	if err != nil {
		errs, status, ok := dash.FailedForm(err)
		if !ok {
			return err
		}
		for k := range errs {
			errs[k] = err.Error() // the API's own message, which names the parameter
		}
		v.Errors = errs
		return handlers.Render(c, status, views.AnalyticsPage(dash.Page(c, h.Sessions, "Analytics", "analytics"), v))
	}
	from, last := q.Filter.From.In(loc), q.Filter.To.In(loc).Add(-time.Nanosecond)
	if v.Filter.From == "" {
		v.Filter.From = from.Format(time.DateOnly)
	}
	if v.Filter.To == "" {
		v.Filter.To = last.Format(time.DateOnly)
	}
	v.Window = fmt.Sprintf("From %s to %s included, counted by %s.", from.Format(longDate), last.Format(longDate), q.Granularity)
	window := url.Values{"from": {v.Filter.From}, "to": {v.Filter.To}, "segment": {v.Filter.Segment}, "channel": {v.Filter.Channel}}
	tt := st.Totals
	v.Totals = views.AnalyticsTotals{Conversations: tt.Conversations, Messages: tt.Messages, Escalated: tt.Escalated,
		WithToolCalls: tt.WithToolCalls, ToolCalls: tt.ToolCallsTotal, AvgMessages: fmt.Sprintf("%.1f", tt.AvgMessagesPerConversation),
		TakenOver: tt.TakenOver}
	if w := tt.AvgFirstHumanReplySeconds; w != nil {
		v.Totals.FirstReplyWait = waitText(time.Duration(*w * float64(time.Second)))
	}
	v.Satisfaction = satisfaction(st.Satisfaction)
	v.Timeline = timelineChart("timeline-chart", st.Timeline, q.Granularity)
	for _, o := range views.ConversationChannels {
		v.ByChannel = append(v.ByChannel, views.Bar{Label: o.Label, Value: st.ByChannel[o.Value], Href: inboxLink(window, "channel", o.Value)})
	}
	for _, o := range views.ConversationStatuses {
		v.ByStatus = append(v.ByStatus, views.Bar{Label: o.Label, Value: st.ByStatus[o.Value], Href: inboxLink(window, "status", o.Value)})
	}
	for _, o := range segments {
		v.BySegment = append(v.BySegment, views.Bar{Label: o.Label, Value: st.BySegment[o.Value], Href: inboxLink(window, "segment", o.Value)})
	}
	if n := st.BySegment[listing.NoSegment]; n > 0 {
		v.BySegment = append(v.BySegment, views.Bar{Label: "No segment", Value: n})
	}
	slices.SortStableFunc(v.BySegment, func(a, b views.Bar) int { return cmp.Compare(b.Value, a.Value) })
	for _, tl := range st.TopTools {
		v.TopTools = append(v.TopTools, views.Bar{Label: handlers.NonBlankOr(handlers.Deref(tl.DisplayName), tl.Name), Value: tl.Calls})
	}
	for _, pg := range st.ByPage {
		v.ByPage = append(v.ByPage, views.Bar{Label: pg.Page, Value: pg.Conversations})
	}
	for _, in := range st.TopIntents {
		v.TopIntents = append(v.TopIntents, views.Bar{Label: in.Question, Value: in.Count})
	}
	if st.Resolution != nil {
		v.Resolution = handlers.ResolutionView(*st.Resolution, v.Timeline.Labels, views.ConversationChannels, segments,
			func(key, value string) string { return inboxLink(window, key, value) })
		if m, p90 := tt.MedianFirstHumanReplySeconds, tt.P90FirstHumanReplySeconds; m != nil && p90 != nil {
			v.Resolution.MedianWait, v.Resolution.P90Wait = waitText(time.Duration(*m*float64(time.Second))), waitText(time.Duration(*p90*float64(time.Second)))
		}
	}
	return handlers.Render(c, http.StatusOK, views.AnalyticsPage(dash.Page(c, h.Sessions, "Analytics", "analytics"), v))
}

// ExportAnalytics downloads one dataset of the analytics page as the API's
// stats export writes it (same parameters, checks and CSV), for the
// signed-in owner's tenant.
func (h *Leads) ExportAnalytics(c echo.Context) error {
	return h.WriteStatsExport(c)
}

// waitText says a wait the way an owner reads it: "45 s", "3 min 20 s",
// "2 h 5 min".
func waitText(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Seconds()))
	case d < time.Hour:
		m, s := int(d/time.Minute), int(d%time.Minute/time.Second)
		if s == 0 {
			return fmt.Sprintf("%d min", m)
		}
		return fmt.Sprintf("%d min %d s", m, s)
	default:
		h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
		if m == 0 {
			return fmt.Sprintf("%d h", h)
		}
		return fmt.Sprintf("%d h %d min", h, m)
	}
}
