package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/web/webtest"
)

// jsonOf re-encodes v compactly, for comparing parts of an answer.
func jsonOf(v any) string {
	raw, _ := json.Marshal(v)
	return string(raw)
}

// timelineOf returns the dates and conversation counts of a stats answer's timeline.
func timelineOf(body map[string]any) (dates []string, counts []int) {
	for _, it := range body["timeline"].([]any) {
		b := it.(map[string]any)
		dates = append(dates, b["date"].(string))
		counts = append(counts, int(b["conversations"].(float64)))
	}
	return dates, counts
}

func TestConversationStats(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ctx := context.Background()

	t.Run("TotalsBreakdownsAndTops", func(t *testing.T) {
		t.Parallel()
		ct := b.NewConvTenant(t)
		sales, err := b.DB.CreateSegment(ctx, ct.ID, 10, db.SegmentWrite{Name: parley.Some("Sales"), Slug: parley.Some("sales"),
			SystemPrompt: parley.Some("You sell.")})
		if err != nil {
			t.Fatal(err)
		}
		def, err := b.DB.Segment(ctx, ct.ID, "default")
		if err != nil {
			t.Fatal(err)
		}
		call := func(name, typ string) parley.ToolCall {
			return parley.ToolCall{ToolName: name, ToolType: typ, Input: json.RawMessage(`{}`)}
		}
		pricingUTM, pricingFAQ := "https://example.com/pricing?utm_source=ad", "https://example.com/pricing#faq"
		b.AddConversation(t, ct, webtest.SeedConversation{
			Start: func(p *parley.ConversationStart) { p.SegmentID, p.PageURL = &sales.ID, &pricingUTM },
			Turns: []string{"How much is the Team plan?", "49 EUR.", "Call me", "Sure."},
			Tools: []parley.ToolCall{call("contact_form", "SUBMIT_FORM"), call("explore_corpus", "EXPLORE_CORPUS")},
			Votes: []int{1, -1},
		})
		b.AddConversation(t, ct, webtest.SeedConversation{
			Start: func(p *parley.ConversationStart) { p.Channel, p.VisitorType, p.PageURL = "agent", "agent", &pricingFAQ },
			Turns: []string{"how much is the team plan", "49 EUR."},
			Tools: []parley.ToolCall{call("explore_corpus", "EXPLORE_CORPUS")},
			Votes: []int{1},
		})
		b.AddConversation(t, ct, webtest.SeedConversation{
			Start: func(p *parley.ConversationStart) { p.Channel = "voice" },
			Turns: []string{"HOW MUCH is the Team-plan??", "Connecting you."},
			Tools: []parley.ToolCall{call("handoff", "ESCALATE_TO_HUMAN")}, Escalate: true,
		})
		bonjour := b.AddConversation(t, ct, webtest.SeedConversation{Start: func(p *parley.ConversationStart) { p.SegmentID = &def.ID }, Turns: []string{"Bonjour"}})
		// A person answers it, 90 seconds after the visitor wrote.
		if _, _, err := b.DB.AddHumanMessage(ctx, ct.ID, bonjour.ID, parley.Holder{Name: "Jeanne"}, "Bonjour, je suis Jeanne."); err != nil {
			t.Fatal(err)
		}
		b.Exec(t, `UPDATE messages h SET created_at = u.created_at + interval '90 seconds' FROM messages u
			WHERE h.conversation_id = $1 AND h.role = 'human' AND u.conversation_id = $1 AND u.role = 'user'`, bonjour.ID)
		b.AddConversation(t, ct, webtest.SeedConversation{Turns: []string{"Old question", "Old answer."}, Votes: []int{-1},
			Created: time.Now().AddDate(0, 0, -40)})
		other := b.NewConvTenant(t)
		b.AddConversation(t, other, webtest.SeedConversation{Turns: []string{"How much is the Team plan?", "Free."}, Votes: []int{1}})

		body := b.StatsOf(t, ct, "")
		today := time.Now().UTC().Truncate(24 * time.Hour)
		w := body["window"].(map[string]any)
		if w["from"] != today.AddDate(0, 0, -29).Format(time.RFC3339) || w["to"] != today.AddDate(0, 0, 1).Format(time.RFC3339) ||
			w["granularity"] != "day" || w["timezone"] != "UTC" {
			t.Errorf("window %v", w)
		}
		if got, want := jsonOf(body["totals"]), `{"avgFirstHumanReplySeconds":90,"avgMessagesPerConversation":2.5,"conversations":4,"escalated":1,"medianFirstHumanReplySeconds":90,"messages":10,"p90FirstHumanReplySeconds":90,"takenOver":1,"toolCallsTotal":4,"withToolCalls":3}`; got != want {
			t.Errorf("totals %s, want %s", got, want)
		}
		if got, want := jsonOf(body["satisfaction"]), `{"negative":1,"positive":2,"rate":0.6667}`; got != want {
			t.Errorf("satisfaction %s, want %s", got, want)
		}
		for name, want := range map[string]string{
			"byChannel":     `{"agent":1,"api":0,"voice":1,"web":2}`,
			"bySegment":     `{"_none":2,"default":1,"sales":1}`,
			"byStatus":      `{"BOT":2,"CLOSED":0,"ESCALATED":1,"HUMAN":1}`,
			"byVisitorType": `{"agent":1,"human":3}`,
			"topTools":      `[{"calls":2,"name":"explore_corpus"},{"calls":1,"name":"contact_form"},{"calls":1,"name":"handoff"}]`,
			"byPage":        `[{"conversations":2,"page":"https://example.com/pricing"}]`,
			"topIntents":    `[{"count":3,"question":"HOW MUCH is the Team-plan??"},{"count":1,"question":"Bonjour"}]`,
		} {
			if got := jsonOf(body[name]); got != want {
				t.Errorf("%s %s, want %s", name, got, want)
			}
		}
		// Resolved: only the agent's (answered, voted up). Handed to a
		// person: the escalated and the one a person answered. The first
		// has a vote down; Bonjour was never answered by the assistant.
		res := body["resolution"].(map[string]any)
		if got, want := jsonOf(map[string]any{"conversations": res["conversations"], "resolved": res["resolved"], "resolvedRate": res["resolvedRate"],
			"handedOff": res["handedOff"], "handedOffRate": res["handedOffRate"], "votesUp": res["votesUp"], "votesDown": res["votesDown"], "votesUpRate": res["votesUpRate"]}),
			`{"conversations":4,"handedOff":2,"handedOffRate":0.5,"resolved":1,"resolvedRate":0.25,"votesDown":1,"votesUp":2,"votesUpRate":0.6667}`; got != want {
			t.Errorf("resolution %s, want %s", got, want)
		}
		if got, want := jsonOf(res["byChannel"]), `[{"channel":"web","conversations":2,"handedOff":1,"handedOffRate":0.5,"resolved":0,"resolvedRate":0,"votesDown":1,"votesUp":1,"votesUpRate":0.5},`+
			`{"channel":"agent","conversations":1,"handedOff":0,"handedOffRate":0,"resolved":1,"resolvedRate":1,"votesDown":0,"votesUp":1,"votesUpRate":1},`+
			`{"channel":"voice","conversations":1,"handedOff":1,"handedOffRate":1,"resolved":0,"resolvedRate":0,"votesDown":0,"votesUp":0,"votesUpRate":null},`+
			`{"channel":"api","conversations":0,"handedOff":0,"handedOffRate":null,"resolved":0,"resolvedRate":null,"votesDown":0,"votesUp":0,"votesUpRate":null}]`; got != want {
			t.Errorf("resolution by channel %s\nwant %s", got, want)
		}
		if got, want := jsonOf(res["bySegment"]), `[{"conversations":1,"handedOff":1,"handedOffRate":1,"resolved":0,"resolvedRate":0,"segment":"default","votesDown":0,"votesUp":0,"votesUpRate":null},`+
			`{"conversations":1,"handedOff":0,"handedOffRate":0,"resolved":0,"resolvedRate":0,"segment":"sales","votesDown":1,"votesUp":1,"votesUpRate":0.5},`+
			`{"conversations":2,"handedOff":1,"handedOffRate":0.5,"resolved":1,"resolvedRate":0.5,"segment":"_none","votesDown":0,"votesUp":1,"votesUpRate":1}]`; got != want {
			t.Errorf("resolution by segment %s\nwant %s", got, want)
		}
		if tl := res["timeline"].([]any); len(tl) != 30 || tl[29].(map[string]any)["resolved"] != float64(1) || tl[29].(map[string]any)["handedOff"] != float64(2) {
			t.Errorf("resolution timeline %v", tl)
		}
		for dataset, want := range map[string]string{
			"resolutionByChannel": "channel,conversations,resolved,resolvedRate,handedOff,handedOffRate,votesUp,votesDown,votesUpRate\r\n" +
				"web,2,0,0,1,0.5,1,1,0.5\r\nagent,1,1,1,0,0,1,0,1\r\nvoice,1,0,0,1,1,0,0,\r\napi,0,0,,0,,0,0,\r\n",
			"resolutionBySegment": "segment,conversations,resolved,resolvedRate,handedOff,handedOffRate,votesUp,votesDown,votesUpRate\r\n" +
				"default,1,0,0,1,1,0,0,\r\nsales,1,0,0,0,0,1,1,0.5\r\n_none,2,1,0.5,1,0.5,1,0,1\r\n",
		} {
			status, _, raw := b.GetRaw(t, "/tenants/"+ct.Slug+"/conversations/stats/export?dataset="+dataset, ct.Token)
			if status != http.StatusOK || string(raw) != want {
				t.Errorf("export %s: %d %q, want %q", dataset, status, raw, want)
			}
		}
		status, _, raw := b.GetRaw(t, "/tenants/"+ct.Slug+"/conversations/stats/export?dataset=resolutionTimeline&format=ndjson", ct.Token)
		if lines := strings.Split(strings.TrimSpace(string(raw)), "\n"); status != http.StatusOK || len(lines) != 30 ||
			lines[0] != `{"conversations":0,"date":"`+today.AddDate(0, 0, -29).Format(time.DateOnly)+`","handedOff":0,"handedOffRate":null,"resolved":0,"resolvedRate":null,"votesDown":0,"votesUp":0,"votesUpRate":null}` ||
			lines[29] != `{"conversations":4,"date":"`+today.Format(time.DateOnly)+`","handedOff":2,"handedOffRate":0.5,"resolved":1,"resolvedRate":0.25,"votesDown":1,"votesUp":2,"votesUpRate":0.6667}` {
			t.Errorf("export resolutionTimeline: %d %q", status, raw)
		}

		dates, counts := timelineOf(body)
		if len(dates) != 30 || dates[0] != today.AddDate(0, 0, -29).Format(time.DateOnly) || dates[29] != today.Format(time.DateOnly) || counts[29] != 4 {
			t.Errorf("timeline %v %v", dates, counts)
		}
		if _, ok := body["allTime"]; ok {
			t.Errorf("allTime without window=all")
		}

		body = b.StatsOf(t, ct, "?window=all")
		if got, want := jsonOf(body["allTime"]), `{"satisfaction":{"negative":2,"positive":2,"rate":0.5},"totals":{"avgFirstHumanReplySeconds":90,"avgMessagesPerConversation":2.4,"conversations":5,"escalated":1,"medianFirstHumanReplySeconds":90,"messages":12,"p90FirstHumanReplySeconds":90,"takenOver":1,"toolCallsTotal":4,"withToolCalls":3}}`; got != want {
			t.Errorf("allTime %s, want %s", got, want)
		}
		body = b.StatsOf(t, ct, "?window=all&channel=web&segment=sales")
		if body["totals"].(map[string]any)["conversations"] != float64(1) || body["allTime"].(map[string]any)["totals"].(map[string]any)["conversations"] != float64(1) ||
			jsonOf(body["byChannel"]) != `{"agent":0,"api":0,"voice":0,"web":1}` || jsonOf(body["topIntents"]) != `[{"count":1,"question":"How much is the Team plan?"}]` {
			t.Errorf("web and sales: %v", body)
		}
		if body := b.StatsOf(t, ct, "?from="+today.AddDate(0, 0, -45).Format(time.DateOnly)); body["totals"].(map[string]any)["conversations"] != float64(5) {
			t.Errorf("45 days: %v", body["totals"])
		}
	})

	t.Run("BucketsInTheTenantsTimeZone", func(t *testing.T) {
		t.Parallel()
		ct := b.NewConvTenant(t)
		if status, body := b.Do(t, "PUT", "/tenants/"+ct.Slug, ct.Token, map[string]any{"timezone": "Europe/Paris"}); status != http.StatusOK {
			t.Fatalf("PUT timezone: %d %v", status, body)
		}
		// Paris leaves summer time on 2026-10-25 at 01:00 UTC: that day lasts 25 hours.
		for _, at := range []string{"2026-10-22T12:00:00Z", "2026-10-24T22:30:00Z", "2026-10-25T22:30:00Z", "2026-10-25T23:30:00Z"} {
			created, _ := time.Parse(time.RFC3339, at)
			b.AddConversation(t, ct, webtest.SeedConversation{Turns: []string{"Hello " + at, "Hi."}, Created: created})
		}
		body := b.StatsOf(t, ct, "?from=2026-10-23&to=2026-10-26")
		w := body["window"].(map[string]any)
		if w["from"] != "2026-10-23T00:00:00+02:00" || w["to"] != "2026-10-27T00:00:00+01:00" || w["timezone"] != "Europe/Paris" {
			t.Errorf("window %v", w)
		}
		if dates, counts := timelineOf(body); fmt.Sprint(dates, counts) != "[2026-10-23 2026-10-24 2026-10-25 2026-10-26] [0 0 2 1]" {
			t.Errorf("days %v %v", dates, counts)
		}
		if m := body["timeline"].([]any)[2].(map[string]any)["messages"]; m != float64(4) {
			t.Errorf("messages of 2026-10-25: %v", m)
		}
		if dates, counts := timelineOf(b.StatsOf(t, ct, "?from=2026-10-01&to=2026-10-31&granularity=week")); fmt.Sprint(dates, counts) !=
			"[2026-09-28 2026-10-05 2026-10-12 2026-10-19 2026-10-26] [0 0 0 3 1]" {
			t.Errorf("weeks %v %v", dates, counts)
		}
		if dates, counts := timelineOf(b.StatsOf(t, ct, "?from=2026-09-15&to=2026-11-02&granularity=month")); fmt.Sprint(dates, counts) !=
			"[2026-09-01 2026-10-01 2026-11-01] [0 4 0]" {
			t.Errorf("months %v %v", dates, counts)
		}
		// instant bounds are taken as they are: to is exclusive, and the bucket holding it is present
		if _, counts := timelineOf(b.StatsOf(t, ct, "?from=2026-10-24T22:30:00Z&to=2026-10-25T23:30:00Z")); fmt.Sprint(counts) != "[2 0]" {
			t.Errorf("instants: %v", counts)
		}
		// the default 30 days before an instant are counted on Paris's wall clock, across the change
		if w := b.StatsOf(t, ct, "?to=2026-10-27T00:00:00Z")["window"].(map[string]any); w["from"] != "2026-09-27T01:00:00+02:00" || w["to"] != "2026-10-27T01:00:00+01:00" {
			t.Errorf("default from before an instant: %v", w)
		}
		// over a year: capped to the year before to
		body = b.StatsOf(t, ct, "?from=2020-01-01&to=2026-12-31")
		if w := body["window"].(map[string]any); w["from"] != "2026-01-01T00:00:00+01:00" || w["to"] != "2027-01-01T00:00:00+01:00" || len(body["timeline"].([]any)) != 365 {
			t.Errorf("capped window %v, %d buckets", w, len(body["timeline"].([]any)))
		}
	})

	t.Run("Export", func(t *testing.T) {
		t.Parallel()
		ct := b.NewConvTenant(t)
		page := "https://example.com/a,b"
		for i := range 12 {
			b.AddConversation(t, ct, webtest.SeedConversation{Start: func(p *parley.ConversationStart) { p.PageURL = &page },
				Turns: []string{fmt.Sprintf("Question number %d", i), "Answer."},
				Tools: []parley.ToolCall{{ToolName: "Lookup", ToolType: "MCP_PROXY", Input: json.RawMessage(`{}`)}}})
		}
		for range 2 {
			b.AddConversation(t, ct, webtest.SeedConversation{Turns: []string{"-5% off?"}})
		}
		if n := len(b.StatsOf(t, ct, "")["topIntents"].([]any)); n != 10 {
			t.Errorf("stats show %d intents, want 10", n)
		}
		base := ct.Base + "/stats/export"
		status, header, raw := b.GetRaw(t, base, ct.Token)
		records := readCSV(t, raw)
		if status != http.StatusOK || header.Get("Content-Type") != "text/csv; charset=utf-8" ||
			!strings.HasPrefix(header.Get("Content-Disposition"), `attachment; filename="conversation-stats-timeline-`+ct.Slug+"-") ||
			len(records) != 31 || strings.Join(records[0], ",") != "date,conversations,messages" || strings.Join(records[30][1:], ",") != "14,26" {
			t.Fatalf("timeline: %d %v %q", status, header, raw)
		}
		status, _, raw = b.GetRaw(t, base+"?dataset=topIntents", ct.Token)
		records = readCSV(t, raw)
		if status != http.StatusOK || len(records) != 14 || strings.Join(records[0], ",") != "question,count" ||
			strings.Join(records[1], "|") != "'-5% off?|2" || records[2][1] != "1" || !bytes.HasPrefix(raw, []byte("question,count\r\n'-5% off?,2\r\n")) {
			t.Errorf("topIntents: %d %q", status, raw)
		}
		status, _, raw = b.GetRaw(t, base+"?dataset=byPage", ct.Token)
		if status != http.StatusOK || string(raw) != "page,conversations\r\n\"https://example.com/a,b\",12\r\n" {
			t.Errorf("byPage: %d %q", status, raw)
		}
		status, header, raw = b.GetRaw(t, base+"?dataset=topTools&format=ndjson&window=bogus", ct.Token)
		if status != http.StatusOK || header.Get("Content-Type") != "application/x-ndjson" || string(raw) != `{"calls":12,"name":"lookup"}`+"\n" {
			t.Errorf("topTools: %d %q", status, raw)
		}
		status, _, raw = b.GetRaw(t, base+"?format=ndjson&from=2026-02-01&to=2026-02-02&granularity=day", ct.Token)
		if status != http.StatusOK || string(raw) != `{"conversations":0,"date":"2026-02-01","messages":0}`+"\n"+`{"conversations":0,"date":"2026-02-02","messages":0}`+"\n" {
			t.Errorf("empty timeline: %d %q", status, raw)
		}
		for q, param := range map[string]string{"?dataset=byChannel": "dataset", "?dataset=TIMELINE": "dataset", "?dataset=resolution": "dataset", "?format=xlsx": "format",
			"?granularity=year": "granularity", "?from=nope": "from", "?segment=nope": "segment"} {
			status, body := b.Do(t, "GET", base+q, ct.Token, nil)
			if status != http.StatusBadRequest || !strings.HasPrefix(fmt.Sprint(body["error"]), param+" ") || webtest.ErrorDetails(body)[param] == nil {
				t.Errorf("stats export%s: %d %v, want 400 naming %s", q, status, body, param)
			}
		}
		if status, body := b.Do(t, "GET", base, b.Token(t, ct.ID, auth.ScopeConversationsRead), nil); status != http.StatusForbidden || body["error"] != "Missing scope: stats:read" {
			t.Errorf("stats export with conversations:read: %d %v", status, body)
		}
	})

	t.Run("EmptyWindow", func(t *testing.T) {
		t.Parallel()
		ct := b.NewConvTenant(t)
		body := b.StatsOf(t, ct, "?from=2026-02-01&to=2026-02-03")
		if jsonOf(body["totals"]) != `{"avgFirstHumanReplySeconds":null,"avgMessagesPerConversation":0,"conversations":0,"escalated":0,"medianFirstHumanReplySeconds":null,"messages":0,"p90FirstHumanReplySeconds":null,"takenOver":0,"toolCallsTotal":0,"withToolCalls":0}` ||
			jsonOf(body["satisfaction"]) != `{"negative":0,"positive":0,"rate":null}` ||
			jsonOf(body["timeline"]) != `[{"conversations":0,"date":"2026-02-01","messages":0},{"conversations":0,"date":"2026-02-02","messages":0},{"conversations":0,"date":"2026-02-03","messages":0}]` ||
			jsonOf(body["topTools"]) != `[]` || jsonOf(body["byPage"]) != `[]` || jsonOf(body["topIntents"]) != `[]` || jsonOf(body["bySegment"]) != `{"default":0}` ||
			jsonOf(body["resolution"].(map[string]any)["bySegment"]) != `[{"conversations":0,"handedOff":0,"handedOffRate":null,"resolved":0,"resolvedRate":null,"segment":"default","votesDown":0,"votesUp":0,"votesUpRate":null}]` ||
			len(body["resolution"].(map[string]any)["timeline"].([]any)) != 3 || body["resolution"].(map[string]any)["resolvedRate"] != nil {
			t.Errorf("empty window %v", body)
		}
	})

	t.Run("QueryValidation", func(t *testing.T) {
		t.Parallel()
		ct := b.NewConvTenant(t)
		for q, param := range map[string]string{
			"?granularity=hour": "granularity", "?granularity=DAY": "granularity", "?window=last": "window", "?window=": "",
			"?from=yesterday": "from", "?to=2026-02-30": "to", "?from=2026-03-02&to=2026-03-01": "to", "?from=2999-01-01": "from",
			"?channel=fax": "channel", "?segment=nope": "segment",
		} {
			status, body := b.Do(t, "GET", ct.Base+"/stats"+q, ct.Token, nil)
			if param == "" {
				if status != http.StatusOK {
					t.Errorf("stats%s: %d %v", q, status, body)
				}
				continue
			}
			if status != http.StatusBadRequest || !strings.HasPrefix(fmt.Sprint(body["error"]), param+" ") || webtest.ErrorDetails(body)[param] == nil {
				t.Errorf("stats%s: %d %v, want 400 naming %s", q, status, body, param)
			}
		}
	})

	t.Run("Scopes", func(t *testing.T) {
		t.Parallel()
		ct := b.NewConvTenant(t)
		if status, body := b.Do(t, "GET", ct.Base+"/stats", b.Token(t, ct.ID, auth.ScopeStatsRead), nil); status != http.StatusOK {
			t.Errorf("stats with stats:read: %d %v", status, body)
		}
		if status, body := b.Do(t, "GET", ct.Base+"/stats", b.Token(t, ct.ID, auth.ScopeConversationsRead), nil); status != http.StatusForbidden || body["error"] != "Missing scope: stats:read" {
			t.Errorf("stats with conversations:read: %d %v", status, body)
		}
		other := b.NewConvTenant(t)
		if status, _ := b.Do(t, "GET", ct.Base+"/stats", other.Token, nil); status != http.StatusNotFound {
			t.Errorf("stats with another tenant's token: %d", status)
		}
	})
}
