package web

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
)

// seedMonth gives ten conversations spread over March 2026: web and voice,
// one of them in segment sales, with tools, votes and pages.
func seedMonth(t *testing.T, b *bundle, ten tenant) {
	t.Helper()
	ctx := context.Background()
	sales, err := b.db.CreateSegment(ctx, ten.ID, 10, db.SegmentWrite{Name: parley.Some("Sales"), Slug: parley.Some("sales"),
		SystemPrompt: parley.Some("You sell.")})
	mustStep(t, "creating a segment", err)
	ct := convTenant{tenant: ten}
	pricing, contact := "https://shop.example/pricing?utm_source=x", "https://shop.example/contact"
	questions := []string{"How much is the Team plan?", "how much is the team plan", "Do you ship to Spain?", "Opening hours?"}
	for i := range 10 {
		day := time.Date(2026, 3, 1+i*3, 10, 0, 0, 0, time.UTC)
		s := seedConversation{turns: []string{questions[i%len(questions)], "Here is the answer.", "Thanks", "You are welcome."},
			created: day, votes: []int{1, 0}}
		page := &pricing
		if i%2 == 1 {
			page, s.votes = &contact, []int{-1, 1}
		}
		s.start = func(p *parley.ConversationStart) {
			p.PageURL = page
			if i%5 == 0 {
				p.Channel = "voice"
			}
			if i == 3 {
				p.SegmentID = &sales.ID
			}
		}
		if i%3 == 0 {
			s.tools = []parley.ToolCall{{ToolName: "product_search", ToolType: "SEARCH_PRODUCTS", Input: json.RawMessage(`{"q":"bike"}`),
				Result: json.RawMessage(`{"success":true}`)}}
		}
		s.escalate = i == 9
		b.addConversation(t, ct, s)
	}
}

func TestAdminAnalytics(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t, nil)
	ten := b.ownedTenant(t, "scale")
	seedMonth(t, b, ten)
	// another tenant's conversation in the same month is never counted
	other := b.newConvTenant(t)
	b.addConversation(t, other, seedConversation{turns: []string{"How much is the Team plan?", "49."}, created: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)})
	c := b.newAdminClient(t)
	c.signIn(ten)
	const march = "/admin/analytics?from=2026-03-01&to=2026-03-31"

	t.Run("Month", func(t *testing.T) {
		p := c.as(t).get(march)
		if p.status != http.StatusOK {
			t.Fatalf("status %d", p.status)
		}
		for sel, want := range map[string]string{"#total-conversations": "10", "#total-messages": "40", "#total-escalated": "1",
			"#total-with-tools": "4", "#total-avg": "4.0", "#satisfaction-positive": "10", "#satisfaction-negative": "5",
			"#satisfaction-rate": "67%", "#analytics-window": "From 1 March 2026 to 31 March 2026 included, counted by day."} {
			if got := p.text(sel); got != want {
				t.Errorf("%s = %q, want %q", sel, got, want)
			}
		}
		if n := p.doc.Find("#timeline-chart tbody tr").Length(); n != 31 {
			t.Errorf("timeline table has %d rows, want 31", n)
		}
		if n := p.doc.Find("#timeline-chart svg rect").Length(); n != 10 {
			t.Errorf("%d bars, want 10", n)
		}
		label := p.doc.Find("#timeline-chart svg").AttrOr("aria-label", "")
		if !strings.Contains(label, "from 1 Mar 2026 to 31 Mar 2026") || !strings.Contains(label, "10 conversations in total") {
			t.Errorf("chart summary %q", label)
		}
		rows := func(sel string) map[string]string {
			out := map[string]string{}
			p.doc.Find(sel + " tr").Each(func(_ int, r *goquery.Selection) {
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
		if got := rows("#by-status"); got["Handed to a human"] != "1" || got["Answered by the assistant"] != "9" {
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
		if href := p.doc.Find("#by-channel a").First().AttrOr("href", ""); href != "/admin/conversations?channel=web&from=2026-03-01&to=2026-03-31" {
			t.Errorf("channel link %q", href)
		}
		for _, ds := range []string{"timeline", "topTools", "byPage", "topIntents"} {
			if href := p.doc.Find("#export-"+ds).AttrOr("href", ""); !strings.Contains(href, "dataset="+ds) || !strings.Contains(href, "from=2026-03-01") {
				t.Errorf("export %s: %q", ds, href)
			}
		}
	})

	t.Run("WeekAndSegment", func(t *testing.T) {
		p := c.as(t).get(march + "&granularity=week&segment=sales")
		if p.status != http.StatusOK || p.text("#total-conversations") != "1" || p.doc.Find("#timeline-chart tbody tr").Length() != 6 ||
			p.doc.Find(`#granularity option[selected]`).AttrOr("value", "") != "week" {
			t.Errorf("%d: %q conversations, %d weeks", p.status, p.text("#total-conversations"), p.doc.Find("#timeline-chart tbody tr").Length())
		}
	})

	t.Run("Export", func(t *testing.T) {
		p := c.as(t).get("/admin/analytics/export?from=2026-03-01&to=2026-03-31&dataset=timeline")
		lines := strings.Split(strings.TrimSpace(p.body), "\r\n")
		if p.status != http.StatusOK || !strings.HasPrefix(p.header.Get("Content-Type"), "text/csv") || len(lines) != 32 ||
			lines[0] != "date,conversations,messages" || lines[1] != "2026-03-01,1,4" {
			t.Errorf("%d %q: %d lines, %q", p.status, p.header.Get("Content-Type"), len(lines), lines[:min(len(lines), 2)])
		}
		p = c.as(t).get("/admin/analytics/export?from=2026-03-01&to=2026-03-31&dataset=topTools")
		if p.status != http.StatusOK || p.body != "name,calls\r\nproduct_search,4\r\n" {
			t.Errorf("top tools: %d %q", p.status, p.body)
		}
		if p := c.as(t).get("/admin/analytics/export?dataset=nope"); p.status != http.StatusBadRequest {
			t.Errorf("an unknown dataset: %d", p.status)
		}
		// signed out: the sign-in page, never the data
		if p := b.newAdminClient(t).get("/admin/analytics/export?dataset=timeline"); p.status != http.StatusSeeOther {
			t.Errorf("signed out: %d", p.status)
		}
	})

	t.Run("InvalidFilters", func(t *testing.T) {
		for q, field := range map[string]string{"granularity=hour": "granularity", "from=yesterday": "from",
			"from=2026-03-05&to=2026-03-01": "to", "segment=nope": "segment", "channel=fax": "channel"} {
			p := c.as(t).get("/admin/analytics?" + q)
			if p.status != http.StatusUnprocessableEntity || p.text("#err-"+field) == "" || p.doc.Find("#timeline-chart").Length() != 0 {
				t.Errorf("%s: %d, error %q", q, p.status, p.text("#err-"+field))
			}
		}
	})

	t.Run("EmptyDefault", func(t *testing.T) {
		empty := b.ownedTenant(t, "starter")
		cc := b.newAdminClient(t)
		cc.signIn(empty)
		p := cc.get("/admin/analytics")
		if p.status != http.StatusOK || p.text("#total-conversations") != "0" || p.doc.Find("#timeline-chart tbody tr").Length() != 30 ||
			p.text("#satisfaction-rate") != "–" || p.text("#top-tools-empty") != "No tool calls in this period." {
			t.Errorf("%d: %q, %d days, rate %q", p.status, p.text("#total-conversations"), p.doc.Find("#timeline-chart tbody tr").Length(), p.text("#satisfaction-rate"))
		}
		if p.doc.Find(`nav a[href="/admin/analytics"][aria-current="page"]`).Length() != 1 {
			t.Error("Analytics is not the current nav item")
		}
	})
}
