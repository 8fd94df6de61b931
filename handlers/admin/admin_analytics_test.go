package admin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/web/webtest"
)

// seedMonth gives ten conversations spread over March 2026: web and voice,
// one of them in segment sales, with tools, votes and pages.
func seedMonth(t *testing.T, b *webtest.Bundle, ten webtest.Tenant) {
	t.Helper()
	ctx := context.Background()
	sales, err := b.DB.CreateSegment(ctx, ten.ID, 10, db.SegmentWrite{Name: parley.Some("Sales"), Slug: parley.Some("sales"),
		SystemPrompt: parley.Some("You sell.")})
	webtest.MustStep(t, "creating a segment", err)
	ct := webtest.ConvTenant{Tenant: ten}
	pricing, contact := "https://shop.example/pricing?utm_source=x", "https://shop.example/contact"
	questions := []string{"How much is the Team plan?", "how much is the team plan", "Do you ship to Spain?", "Opening hours?"}
	for i := range 10 {
		day := time.Date(2026, 3, 1+i*3, 10, 0, 0, 0, time.UTC)
		s := webtest.SeedConversation{Turns: []string{questions[i%len(questions)], "Here is the answer.", "Thanks", "You are welcome."},
			Created: day, Votes: []int{1, 0}}
		page := &pricing
		if i%2 == 1 {
			page, s.Votes = &contact, []int{-1, 1}
		}
		s.Start = func(p *parley.ConversationStart) {
			p.PageURL = page
			if i%5 == 0 {
				p.Channel = "voice"
			}
			if i == 3 {
				p.SegmentID = &sales.ID
			}
		}
		if i%3 == 0 {
			s.Tools = []parley.ToolCall{{ToolName: "product_search", ToolType: "SEARCH_PRODUCTS", Input: json.RawMessage(`{"q":"bike"}`),
				Result: json.RawMessage(`{"success":true}`)}}
		}
		s.Escalate = i == 9
		b.AddConversation(t, ct, s)
	}
}

func TestAdminAnalytics(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	ten := b.OwnedTenant(t, "scale")
	seedMonth(t, b, ten)
	// another tenant's conversation in the same month is never counted
	other := b.NewConvTenant(t)
	b.AddConversation(t, other, webtest.SeedConversation{Turns: []string{"How much is the Team plan?", "49."}, Created: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)})
	c := b.NewAdminClient(t)
	c.SignIn(ten)
	const march = "/admin/analytics?from=2026-03-01&to=2026-03-31"

	t.Run("Month", func(t *testing.T) {
		p := c.As(t).Get(march)
		if p.Status != http.StatusOK {
			t.Fatalf("status %d", p.Status)
		}
		for sel, want := range map[string]string{"#total-conversations": "10", "#total-messages": "40", "#total-escalated": "1", "#total-taken-over": "0",
			"#total-with-tools": "4", "#total-avg": "4.0", "#satisfaction-positive": "10", "#satisfaction-negative": "5",
			"#satisfaction-rate": "67%", "#analytics-window": "From 1 March 2026 to 31 March 2026 included, counted by day."} {
			if got := p.Text(sel); got != want {
				t.Errorf("%s = %q, want %q", sel, got, want)
			}
		}
		if p.Doc.Find("#total-first-reply").Length() != 0 {
			t.Errorf("a first reply's wait is shown with nothing taken over")
		}
		if n := p.Doc.Find("#timeline-chart tbody tr").Length(); n != 31 {
			t.Errorf("timeline table has %d rows, want 31", n)
		}
		if n := p.Doc.Find("#timeline-chart svg rect").Length(); n != 10 {
			t.Errorf("%d bars, want 10", n)
		}
		label := p.Doc.Find("#timeline-chart svg").AttrOr("aria-label", "")
		if !strings.Contains(label, "from 1 Mar 2026 to 31 Mar 2026") || !strings.Contains(label, "10 conversations in total") {
			t.Errorf("chart summary %q", label)
		}
		rows := func(sel string) map[string]string {
			out := map[string]string{}
			p.Doc.Find(sel + " tr").Each(func(_ int, r *goquery.Selection) {
				out[strings.TrimSpace(r.Find("th").Text())] = strings.TrimSpace(r.Find("td.num").Text())
			})
			return out
		}
		if got := rows("#by-channel"); got["Chat widget"] != "8" || got["Voice"] != "2" || got["AI agent"] != "0" {
			t.Errorf("by channel %v", got)
		}
		if got := rows("#by-segment"); got["Sales"] != "1" {
			t.Errorf("by segment %v", got)
		}
		if got := rows("#by-status"); got["Waiting for a person"] != "1" || got["Answered by the assistant"] != "9" {
			t.Errorf("by status %v", got)
		}
		if got := rows("#top-tools"); got["product_search"] != "4" {
			t.Errorf("top tools %v", got)
		}
		if got := rows("#by-page"); got["https://shop.example/pricing"] != "5" || got["https://shop.example/contact"] != "5" {
			t.Errorf("by page %v", got)
		}
		if got := rows("#top-intents"); got["How much is the Team plan?"] != "6" {
			t.Errorf("top intents %v", got)
		}
		if href := p.Doc.Find("#by-channel a").First().AttrOr("href", ""); href != "/admin/conversations?channel=web&from=2026-03-01&to=2026-03-31" {
			t.Errorf("channel link %q", href)
		}
		// Resolved by the assistant: the five with only a vote up; handed
		// to a person: the escalated one.
		for sel, want := range map[string]string{"#resolution-rate": "50%", "#handed-off-rate": "10%", "#resolution-votes": "67%"} {
			if got := p.Text(sel); got != want {
				t.Errorf("%s = %q, want %q", sel, got, want)
			}
		}
		if p.Doc.Find("#median-first-reply").Length() != 0 {
			t.Errorf("a median wait is shown with nothing taken over")
		}
		if n := p.Doc.Find("#resolution-timeline-table tbody tr").Length(); n != 31 {
			t.Errorf("resolution table has %d rows, want 31", n)
		}
		if n := p.Doc.Find("#resolution-chart svg polyline.series-a").Length(); n != 10 {
			t.Errorf("%d strokes of the resolution rate, want 10 (one per day with conversations)", n)
		}
		cells := func(sel, row string) []string {
			var out []string
			p.Doc.Find(sel + " tbody tr").Each(func(_ int, r *goquery.Selection) {
				if strings.TrimSpace(r.Find("th").Text()) == row {
					r.Find("td").Each(func(_ int, td *goquery.Selection) { out = append(out, strings.Join(strings.Fields(td.Text()), " ")) })
				}
			})
			return out
		}
		if got := strings.Join(cells("#resolution-by-channel", "Chat widget"), " | "); got != "8 | 50% (4) | 13% (1) | 67% helpful (8 of 12)" {
			t.Errorf("resolution of the widget %q", got)
		}
		if got := strings.Join(cells("#resolution-by-channel", "AI agent"), " | "); got != "0 | – (0) | – (0) | –" {
			t.Errorf("resolution of the agents %q", got)
		}
		if got := strings.Join(cells("#resolution-by-segment", "Sales"), " | "); got != "1 | 0% (0) | 0% (0) | 50% helpful (1 of 2)" {
			t.Errorf("resolution of sales %q", got)
		}
		for _, ds := range []string{"timeline", "topTools", "byPage", "topIntents", "resolutionTimeline", "resolutionByChannel", "resolutionBySegment"} {
			if href := p.Doc.Find("#export-"+ds).AttrOr("href", ""); !strings.Contains(href, "dataset="+ds) || !strings.Contains(href, "from=2026-03-01") {
				t.Errorf("export %s: %q", ds, href)
			}
		}
	})

	t.Run("WeekAndSegment", func(t *testing.T) {
		p := c.As(t).Get(march + "&granularity=week&segment=sales")
		if p.Status != http.StatusOK || p.Text("#total-conversations") != "1" || p.Doc.Find("#timeline-chart tbody tr").Length() != 6 ||
			p.Doc.Find(`#granularity option[selected]`).AttrOr("value", "") != "week" {
			t.Errorf("%d: %q conversations, %d weeks", p.Status, p.Text("#total-conversations"), p.Doc.Find("#timeline-chart tbody tr").Length())
		}
	})

	t.Run("Export", func(t *testing.T) {
		p := c.As(t).Get("/admin/analytics/export?from=2026-03-01&to=2026-03-31&dataset=timeline")
		lines := strings.Split(strings.TrimSpace(p.Body), "\r\n")
		if p.Status != http.StatusOK || !strings.HasPrefix(p.Header.Get("Content-Type"), "text/csv") || len(lines) != 32 ||
			lines[0] != "date,conversations,messages" || lines[1] != "2026-03-01,1,4" {
			t.Errorf("%d %q: %d lines, %q", p.Status, p.Header.Get("Content-Type"), len(lines), lines[:min(len(lines), 2)])
		}
		p = c.As(t).Get("/admin/analytics/export?from=2026-03-01&to=2026-03-31&dataset=topTools")
		if p.Status != http.StatusOK || p.Body != "name,calls\r\nproduct_search,4\r\n" {
			t.Errorf("top tools: %d %q", p.Status, p.Body)
		}
		p = c.As(t).Get("/admin/analytics/export?from=2026-03-01&to=2026-03-31&dataset=resolutionByChannel")
		if p.Status != http.StatusOK || !strings.HasPrefix(p.Body, "channel,conversations,resolved,resolvedRate,handedOff,handedOffRate,votesUp,votesDown,votesUpRate\r\nweb,8,4,0.5,1,0.125,8,4,0.6667\r\n") {
			t.Errorf("resolution by channel: %d %q", p.Status, p.Body)
		}
		if p := c.As(t).Get("/admin/analytics/export?dataset=nope"); p.Status != http.StatusBadRequest {
			t.Errorf("an unknown dataset: %d", p.Status)
		}
		// signed out: the sign-in page, never the data
		if p := b.NewAdminClient(t).Get("/admin/analytics/export?dataset=timeline"); p.Status != http.StatusSeeOther {
			t.Errorf("signed out: %d", p.Status)
		}
	})

	t.Run("InvalidFilters", func(t *testing.T) {
		for q, field := range map[string]string{"granularity=hour": "granularity", "from=yesterday": "from",
			"from=2026-03-05&to=2026-03-01": "to", "segment=nope": "segment", "channel=fax": "channel"} {
			p := c.As(t).Get("/admin/analytics?" + q)
			if p.Status != http.StatusUnprocessableEntity || p.Text("#err-"+field) == "" || p.Doc.Find("#timeline-chart").Length() != 0 {
				t.Errorf("%s: %d, error %q", q, p.Status, p.Text("#err-"+field))
			}
		}
	})

	t.Run("EmptyDefault", func(t *testing.T) {
		empty := b.OwnedTenant(t, "starter")
		cc := b.NewAdminClient(t)
		cc.SignIn(empty)
		p := cc.Get("/admin/analytics")
		if p.Status != http.StatusOK || p.Text("#total-conversations") != "0" || p.Doc.Find("#timeline-chart tbody tr").Length() != 30 ||
			p.Text("#satisfaction-rate") != "–" || p.Text("#top-tools-empty") != "No tool calls in this period." {
			t.Errorf("%d: %q, %d days, rate %q", p.Status, p.Text("#total-conversations"), p.Doc.Find("#timeline-chart tbody tr").Length(), p.Text("#satisfaction-rate"))
		}
		if p.Doc.Find(`nav a[href="/admin/analytics"][aria-current="page"]`).Length() != 1 {
			t.Error("Analytics is not the current nav item")
		}
	})
}
