package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/visitors"
	"github.com/parley/parley/web/webtest"
)

// idsOf returns the ids of a list response's items under key
// ("conversations", "submissions"), in order.
func idsOf(body map[string]any, key string) []string {
	var ids []string
	items, _ := body[key].([]any)
	for _, it := range items {
		ids = append(ids, it.(map[string]any)["id"].(string))
	}
	return ids
}

func TestConversations(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ctx := context.Background()

	t.Run("ListOrderFiltersAndShape", func(t *testing.T) {
		t.Parallel()
		ct := b.NewConvTenant(t)
		sales, err := b.DB.CreateSegment(ctx, ct.ID, 10, db.SegmentWrite{Name: parley.Some("Sales"), Slug: parley.Some("sales"),
			SystemPrompt: parley.Some("You sell.")})
		if err != nil {
			t.Fatal(err)
		}
		visitor, err := b.DB.CreateVisitor(ctx, ct.ID, visitors.VisitorWrite{Email: parley.Some("ada@example.com")})
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC()
		page := "https://example.com/pricing"
		ada := b.AddConversation(t, ct, webtest.SeedConversation{
			Start: func(p *parley.ConversationStart) { p.VisitorID, p.PageURL, p.SegmentID = &visitor.ID, &page, &sales.ID },
			Turns: []string{"How much is the Team plan?", "It is 49 EUR a month.", "Can someone call me?", "Of course: " + strings.Repeat("é", 200)},
			Tools: []parley.ToolCall{
				{ToolName: "Contact_Form", ToolType: "SUBMIT_FORM", Input: json.RawMessage(`{"email":"ada@example.com"}`), Result: json.RawMessage(`{"success":true}`)},
				{ToolName: "explore_corpus", ToolType: "EXPLORE_CORPUS", Input: json.RawMessage(`{"id":"x"}`)},
			},
			Votes:   []int{1, -1},
			Created: now.Add(-time.Hour),
		})
		agentConv := b.AddConversation(t, ct, webtest.SeedConversation{
			Start: func(p *parley.ConversationStart) { p.Channel, p.VisitorType = "agent", "agent" },
			Turns: []string{"[AGENT:] list 100% of your_plans", "Starter and Team."},
			Tools: []parley.ToolCall{{ToolName: "mcp_crm_lookup", ToolType: "MCP_PROXY", Input: json.RawMessage(`{}`), Result: json.RawMessage(`{"success":true}`)}},
			Votes: []int{1}, Created: now.Add(-2 * time.Hour),
		})
		escalated := b.AddConversation(t, ct, webtest.SeedConversation{
			Start:    func(p *parley.ConversationStart) { p.Channel = "voice" },
			Turns:    []string{"I want a human", "Connecting you."},
			Tools:    []parley.ToolCall{{ToolName: "handoff", ToolType: "ESCALATE_TO_HUMAN", Input: json.RawMessage(`{}`)}},
			Escalate: true, Created: now.Add(-30 * time.Minute),
		})
		january := b.AddConversation(t, ct, webtest.SeedConversation{Turns: []string{"Bonjour"}, Created: time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)})
		// the owner's rehearsal in the test chat, the latest of all, is not a visitor's conversation
		b.AddConversation(t, ct, webtest.SeedConversation{Start: func(p *parley.ConversationStart) { p.Test = true },
			Turns: []string{"How much is the Team plan?", "49 EUR."}, Created: now})

		// another tenant's conversation, with the same words, is never listed
		other := b.NewConvTenant(t)
		theirs := b.AddConversation(t, other, webtest.SeedConversation{Turns: []string{"How much is the Team plan?", "49 EUR."}})

		status, body := b.Do(t, "GET", ct.Base, ct.Token, nil)
		if status != http.StatusOK || !slices.Equal(idsOf(body, "conversations"), []string{escalated.ID, ada.ID, agentConv.ID, january.ID}) {
			t.Fatalf("GET conversations: %d %v", status, body)
		}
		if p := body["pagination"].(map[string]any); p["page"] != float64(1) || p["limit"] != float64(20) || p["total"] != float64(4) || p["pages"] != float64(1) {
			t.Errorf("pagination %v", p)
		}
		item := body["conversations"].([]any)[1].(map[string]any)
		seg, _ := item["segment"].(map[string]any)
		fb, _ := item["feedback"].(map[string]any)
		if item["sessionId"] != ada.SessionID || item["messageCount"] != float64(4) || item["pageUrl"] != page || item["channel"] != "web" ||
			item["status"] != "BOT" || item["visitorType"] != "human" || item["visitorId"] != visitor.ID ||
			seg["slug"] != "sales" || seg["name"] != "Sales" || item["firstUserMessage"] != "How much is the Team plan?" ||
			item["intent"] != "how much is the team plan" || item["toolCallsCount"] != float64(2) ||
			fb["positive"] != float64(1) || fb["negative"] != float64(1) || item["createdAt"] != now.Add(-time.Hour).Truncate(time.Microsecond).Format(time.RFC3339Nano) {
			t.Errorf("item %v", item)
		}
		if want := "Of course: " + strings.Repeat("é", 149) + "…"; item["preview"] != want {
			t.Errorf("preview %q, want %q", item["preview"], want)
		}
		history, _ := item["toolHistory"].([]any)
		if len(history) != 2 {
			t.Fatalf("toolHistory %v", item["toolHistory"])
		}
		first, second := history[0].(map[string]any), history[1].(map[string]any)
		if first["toolName"] != "contact_form" || first["toolType"] != "SUBMIT_FORM" || first["input"].(map[string]any)["email"] != "ada@example.com" ||
			first["result"].(map[string]any)["success"] != true || first["timestamp"] == nil {
			t.Errorf("first tool call %v", first)
		}
		if v, ok := second["result"]; second["toolName"] != "explore_corpus" || !ok || v != nil {
			t.Errorf("second tool call %v", second)
		}
		last := body["conversations"].([]any)[3].(map[string]any)
		if last["segment"] != nil || last["preview"] != "Bonjour" || last["toolCallsCount"] != float64(0) || len(last["toolHistory"].([]any)) != 0 ||
			last["feedback"].(map[string]any)["positive"] != float64(0) {
			t.Errorf("january %v", last)
		}
		if esc := body["conversations"].([]any)[0].(map[string]any); esc["status"] != "ESCALATED" || esc["channel"] != "voice" {
			t.Errorf("escalated %v", esc)
		}

		for q, want := range map[string][]string{
			"?channel=agent":                            {agentConv.ID},
			"?channel=voice":                            {escalated.ID},
			"?channel=api":                              nil,
			"?segment=sales":                            {ada.ID},
			"?segment=" + sales.ID:                      {ada.ID},
			"?visitorId=" + visitor.ID:                  {ada.ID},
			"?visitorId=" + theirs.ID:                   nil,
			"?toolType=SUBMIT_FORM":                     {ada.ID},
			"?toolType=mcp_proxy":                       {agentConv.ID},
			"?toolType=ESCALATE_TO_HUMAN":               {escalated.ID},
			"?toolType=BOOK_MEETING":                    nil,
			"?status=ESCALATED":                         {escalated.ID},
			"?status=BOT":                               {ada.ID, agentConv.ID, january.ID},
			"?search=team%20PLAN":                       {ada.ID},
			"?search=%20call%20me%20":                   {ada.ID},
			"?search=49%20eur":                          {ada.ID},
			"?search=0%25":                              {agentConv.ID},
			"?search=r_p":                               {agentConv.ID},
			"?search=rp":                                nil,
			"?search=connecting":                        {escalated.ID},
			"?from=2026-01-15&to=2026-01-15":            {january.ID},
			"?from=2026-01-16":                          {escalated.ID, ada.ID, agentConv.ID},
			"?to=2026-01-15T12:00:00Z":                  nil,
			"?from=2026-01-15T12:00:00Z&to=2026-01-16":  {january.ID},
			"?channel=web&status=BOT&search=bonjour":    {january.ID},
			"?channel=web&segment=sales&search=bonjour": nil,
		} {
			status, body := b.Do(t, "GET", ct.Base+q, ct.Token, nil)
			if got := idsOf(body, "conversations"); status != http.StatusOK || !slices.Equal(got, want) || body["pagination"].(map[string]any)["total"] != float64(len(want)) {
				t.Errorf("GET %s: %d %v, want %v", q, status, got, want)
			}
		}

		status, body = b.Do(t, "GET", ct.Base+"?limit=3", ct.Token, nil)
		if p := body["pagination"].(map[string]any); status != http.StatusOK || len(idsOf(body, "conversations")) != 3 || p["pages"] != float64(2) || p["total"] != float64(4) {
			t.Errorf("limit 3: %d %v", status, body)
		}
		status, body = b.Do(t, "GET", ct.Base+"?limit=3&page=2", ct.Token, nil)
		if status != http.StatusOK || !slices.Equal(idsOf(body, "conversations"), []string{january.ID}) {
			t.Errorf("page 2: %d %v", status, body)
		}
		status, body = b.Do(t, "GET", ct.Base+"?page=3", ct.Token, nil)
		if items, ok := body["conversations"].([]any); status != http.StatusOK || !ok || len(items) != 0 {
			t.Errorf("past the last page: %d %v", status, body)
		}

		// the other tenant sees only its own, even when it names this tenant's segment or visitor
		status, body = b.Do(t, "GET", other.Base, other.Token, nil)
		if status != http.StatusOK || !slices.Equal(idsOf(body, "conversations"), []string{theirs.ID}) {
			t.Errorf("other tenant: %d %v", status, body)
		}
		if status, body := b.Do(t, "GET", other.Base+"?visitorId="+visitor.ID, other.Token, nil); status != http.StatusOK || len(idsOf(body, "conversations")) != 0 {
			t.Errorf("other tenant with this tenant's visitor: %d %v", status, body)
		}
		if status, body := b.Do(t, "GET", other.Base+"?segment="+sales.ID, other.Token, nil); status != http.StatusBadRequest || webtest.ErrorDetails(body)["segment"] == nil {
			t.Errorf("other tenant with this tenant's segment: %d %v", status, body)
		}
		if status, _ := b.Do(t, "GET", ct.Base, other.Token, nil); status != http.StatusNotFound {
			t.Errorf("other tenant's token on this tenant: %d", status)
		}
	})

	t.Run("Detail", func(t *testing.T) {
		t.Parallel()
		ct := b.NewConvTenant(t)
		model, locale, page := "gpt-test", "fr", "https://example.com/tarifs"
		conv := b.AddConversation(t, ct, webtest.SeedConversation{
			Start: func(p *parley.ConversationStart) {
				p.Channel, p.VisitorType, p.AgentModel, p.Locale, p.PageURL = "agent", "agent", &model, &locale, &page
				p.Metadata = parley.ConversationMetadata{UserAgent: "Bot/1.0", Page: "Tarifs"}
			},
			Turns: []string{"Quels sont vos tarifs ?", "49 EUR par mois.", "Et pour 10 personnes ?", "Je vous transmets à un humain."},
			Tools: []parley.ToolCall{{ToolName: "Quote", ToolType: "GENERATE_QUOTE", Input: json.RawMessage(`{"seats":10}`), Result: json.RawMessage(`{"success":true}`)}},
			Votes: []int{-1, 1}, Escalate: true,
			Knowledge: []parley.KnowledgeRef{{ID: "6f1c0000-0000-4000-8000-000000000001", Title: "Tarifs 2026"},
				{ID: "6f1c0000-0000-4000-8000-000000000002", Title: "Remises de groupe", Summarized: true}},
		})
		status, body := b.Do(t, "GET", ct.Base+"/"+conv.ID, ct.Token, nil)
		if status != http.StatusOK {
			t.Fatalf("GET: %d %v", status, body)
		}
		meta, _ := body["metadata"].(map[string]any)
		fb, _ := body["feedback"].(map[string]any)
		if body["id"] != conv.ID || body["sessionId"] != conv.SessionID || body["segment"] != nil || body["channel"] != "agent" ||
			body["status"] != "ESCALATED" || body["visitorType"] != "agent" || body["agentModel"] != model || body["locale"] != "fr" ||
			body["pageUrl"] != page || body["intent"] != "quels sont vos tarifs" || body["firstUserMessage"] != "Quels sont vos tarifs ?" ||
			body["messageCount"] != float64(4) || body["toolCallsCount"] != float64(1) || fb["positive"] != float64(1) || fb["negative"] != float64(1) ||
			meta["userAgent"] != "Bot/1.0" || meta["page"] != "Tarifs" || meta["referrer"] != nil ||
			body["startedAt"] != conv.CreatedAt.UTC().Format(time.RFC3339Nano) || body["lastMessageAt"] != conv.LastMessageAt.UTC().Format(time.RFC3339Nano) {
			t.Errorf("detail %v", body)
		}
		msgs, _ := body["messages"].([]any)
		var roles, contents []string
		var votes []any
		for _, m := range msgs {
			m := m.(map[string]any)
			roles, contents, votes = append(roles, m["role"].(string)), append(contents, m["content"].(string)), append(votes, m["feedback"])
			if m["id"] == "" || m["timestamp"] == nil {
				t.Errorf("message %v", m)
			}
		}
		if !slices.Equal(roles, []string{"user", "assistant", "user", "assistant"}) || contents[3] != "Je vous transmets à un humain." ||
			!slices.Equal(votes, []any{nil, float64(-1), nil, float64(1)}) {
			t.Errorf("messages %v", msgs)
		}
		// The knowledge the first answer's prompt held; [] elsewhere, never null.
		var knowledge []string
		for _, m := range msgs {
			k, ok := m.(map[string]any)["knowledge"].([]any)
			if !ok {
				t.Fatalf("message without a knowledge array: %v", m)
			}
			knowledge = append(knowledge, fmt.Sprint(k))
		}
		if want := []string{"[]", "[map[id:6f1c0000-0000-4000-8000-000000000001 summarized:false title:Tarifs 2026] " +
			"map[id:6f1c0000-0000-4000-8000-000000000002 summarized:true title:Remises de groupe]]", "[]", "[]"}; !slices.Equal(knowledge, want) {
			t.Errorf("knowledge %q, want %q", knowledge, want)
		}
		if h, _ := body["toolHistory"].([]any); len(h) != 1 || h[0].(map[string]any)["toolName"] != "quote" {
			t.Errorf("toolHistory %v", body["toolHistory"])
		}

		// with a segment, its slug
		withSegment := b.AddConversation(t, ct, webtest.SeedConversation{
			Start: func(p *parley.ConversationStart) {
				s, err := b.DB.Segment(ctx, ct.ID, "default")
				if err != nil {
					t.Fatal(err)
				}
				p.SegmentID = &s.ID
			},
			Turns: []string{"Hi"},
		})
		if status, body := b.Do(t, "GET", ct.Base+"/"+withSegment.ID, ct.Token, nil); status != http.StatusOK || body["segment"] != "default" ||
			len(body["messages"].([]any)) != 1 || len(body["toolHistory"].([]any)) != 0 || body["metadata"].(map[string]any)["page"] != nil {
			t.Errorf("with segment: %d %v", status, body)
		}

		other := b.NewConvTenant(t)
		theirs := b.AddConversation(t, other, webtest.SeedConversation{Turns: []string{"Hello"}})
		for what, path := range map[string]string{
			"OtherTenants": ct.Base + "/" + theirs.ID, "NotAUUID": ct.Base + "/nope", "Unknown": ct.Base + "/00000000-0000-0000-0000-000000000000",
			"AlmostAUUID": ct.Base + "/" + conv.ID + "0",
		} {
			if status, body := b.Do(t, "GET", path, ct.Token, nil); status != http.StatusNotFound || body["error"] != "Conversation not found" {
				t.Errorf("GET %s: %d %v", what, status, body)
			}
		}
		if status, _ := b.Do(t, "GET", ct.Base+"/"+conv.ID, other.Token, nil); status != http.StatusNotFound {
			t.Errorf("GET with the other tenant's token: %d", status)
		}
		if status, body := b.Do(t, "GET", ct.Base+"/"+conv.ID, b.Token(t, ct.ID, auth.ScopeConversationsRead), nil); status != http.StatusOK {
			t.Errorf("GET with conversations:read: %d %v", status, body)
		}
		if status, body := b.Do(t, "GET", ct.Base+"/"+conv.ID, b.Token(t, ct.ID, auth.ScopeStatsRead), nil); status != http.StatusForbidden || body["error"] != "Missing scope: conversations:read" {
			t.Errorf("GET with stats:read: %d %v", status, body)
		}
	})

	t.Run("LimitAtNAndNPlusOne", func(t *testing.T) {
		t.Parallel()
		ct := b.NewConvTenant(t)
		for i := range 101 {
			p := parley.ConversationStart{TenantID: ct.ID, SessionID: fmt.Sprint("limit-", i), Limit: 1000}
			if _, _, _, err := b.DB.StartTurn(ctx, p, "Hello", nil); err != nil {
				t.Fatal(err)
			}
		}
		status, body := b.Do(t, "GET", ct.Base, ct.Token, nil)
		if p := body["pagination"].(map[string]any); status != http.StatusOK || len(idsOf(body, "conversations")) != 20 || p["total"] != float64(101) || p["pages"] != float64(6) {
			t.Errorf("default limit: %d %v", status, p)
		}
		status, body = b.Do(t, "GET", ct.Base+"?limit=100", ct.Token, nil)
		if p := body["pagination"].(map[string]any); status != http.StatusOK || len(idsOf(body, "conversations")) != 100 || p["pages"] != float64(2) {
			t.Errorf("limit 100: %d %v", status, p)
		}
		status, body = b.Do(t, "GET", ct.Base+"?limit=100&page=2", ct.Token, nil)
		if status != http.StatusOK || len(idsOf(body, "conversations")) != 1 {
			t.Errorf("limit 100 page 2: %d %v", status, body)
		}
		status, body = b.Do(t, "GET", ct.Base+"?limit=101", ct.Token, nil)
		if status != http.StatusBadRequest || body["error"] != "limit must be an integer between 1 and 100" {
			t.Errorf("limit 101: %d %v", status, body)
		}
	})

	t.Run("QueryValidation", func(t *testing.T) {
		t.Parallel()
		ct := b.NewConvTenant(t)
		for q, param := range map[string]string{
			"?limit=0": "limit", "?limit=101": "limit", "?limit=abc": "limit", "?limit=1.5": "limit", "?page=0": "page", "?page=x": "page",
			"?channel=fax": "channel", "?channel=WEB": "channel", "?segment=nope": "segment", "?visitorId=nope": "visitorId",
			"?toolType=NOPE": "toolType", "?status=bot": "status", "?status=OPEN": "status",
			"?search=a": "search", "?search=%20a%20": "search", "?search=": "search", "?search=" + strings.Repeat("s", 201): "search",
			"?from=yesterday": "from", "?to=2026-13-01": "to", "?from=2026-03-02&to=2026-03-01": "to",
			"?from=2026-03-02T10:00:00Z&to=2026-03-02T10:00:00Z": "to",
		} {
			status, body := b.Do(t, "GET", ct.Base+q, ct.Token, nil)
			if status != http.StatusBadRequest || !strings.HasPrefix(fmt.Sprint(body["error"]), param+" ") || webtest.ErrorDetails(body)[param] == nil {
				t.Errorf("GET %s: %d %v, want 400 naming %s", q, status, body, param)
			}
		}
		for _, q := range []string{"?limit=100", "?limit=1", "?search=ab", "?search=" + strings.Repeat("s", 200), "?toolType=submit_form",
			"?from=2026-03-01T10:00:00.5%2B02:00", "?segment=default", "?visitorId=00000000-0000-0000-0000-000000000000", "?unknown=1"} {
			if status, body := b.Do(t, "GET", ct.Base+q, ct.Token, nil); status != http.StatusOK {
				t.Errorf("GET %s: %d %v", q, status, body)
			}
		}
	})

	t.Run("Scopes", func(t *testing.T) {
		t.Parallel()
		ct := b.NewConvTenant(t)
		if status, body := b.Do(t, "GET", ct.Base, b.Token(t, ct.ID, auth.ScopeConversationsRead), nil); status != http.StatusOK {
			t.Errorf("GET with conversations:read: %d %v", status, body)
		}
		for _, scopes := range [][]string{{auth.ScopeStatsRead}, {auth.ScopeVisitorsRead, auth.ScopeConversationsWrite}} {
			if status, body := b.Do(t, "GET", ct.Base, b.Token(t, ct.ID, scopes...), nil); status != http.StatusForbidden || body["error"] != "Missing scope: conversations:read" {
				t.Errorf("GET with %v: %d %v", scopes, status, body)
			}
		}
		if status, _ := b.Do(t, "GET", ct.Base, "", nil); status != http.StatusUnauthorized {
			t.Errorf("GET without credentials: %d", status)
		}
	})
}
