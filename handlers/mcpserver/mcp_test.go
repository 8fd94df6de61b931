package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/web/webtest"
)

// mustFail is CallTool for a call that must answer a tool error; it returns the error body.
func mustFail(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	out, isErr := webtest.CallTool(t, cs, name, args)
	if !isErr {
		t.Fatalf("%s(%v): no tool error: %v", name, args, out)
	}
	return out
}

func TestMCPCorpus(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.NewTenant(t, "builder")
	cs := b.MCPClient(t, b.Token(t, ten.ID, auth.ScopeCorpusRead, auth.ScopeCorpusWrite))
	rest := b.Token(t, ten.ID, auth.ScopeCorpusRead)

	if got := cs.InitializeResult(); got == nil || got.ServerInfo.Name != "parley" {
		t.Fatalf("initialize result %+v", got)
	}
	want := []string{"correct_answer", "create_corpus_entry", "delete_corpus_entry", "list_corpus_entries", "mark_knowledge_gap", "read_corpus_entry", "read_test_run", "run_tests", "search_corpus", "update_corpus_entry"} // sorted by name
	if got := webtest.ToolNames(t, cs); !slices.Equal(got, want) {
		t.Errorf("tools/list with corpus scopes = %v, want %v", got, want)
	}

	created := webtest.MustCall(t, cs, "create_corpus_entry", map[string]any{"title": "Opening hours", "content": "We open at 9 on weekdays.", "tags": []string{"hours"}})
	entry := created["corpus"].(map[string]any)
	id := entry["id"].(string)
	if created["created"] != true {
		t.Errorf("created = %v", created["created"])
	}
	status, body := b.Do(t, "GET", "/tenants/"+ten.Slug+"/corpus/"+id, rest, nil)
	if status != http.StatusOK || body["corpus"].(map[string]any)["title"] != "Opening hours" {
		t.Fatalf("REST read of the MCP-created entry: %d %v", status, body)
	}

	updated := webtest.MustCall(t, cs, "update_corpus_entry", map[string]any{"id": id, "content": "We open at 8 on weekdays."})
	if c := updated["corpus"].(map[string]any); c["content"] != "We open at 8 on weekdays." || c["title"] != "Opening hours" {
		t.Errorf("update changed %v", c)
	}
	if got := webtest.MustCall(t, cs, "read_corpus_entry", map[string]any{"id": id})["corpus"].(map[string]any)["content"]; got != "We open at 8 on weekdays." {
		t.Errorf("read after update: %v", got)
	}
	found := webtest.MustCall(t, cs, "search_corpus", map[string]any{"search": "weekdays"})
	if n := len(found["corpus"].([]any)); n != 1 {
		t.Errorf("search found %d entries", n)
	}
	if n := len(webtest.MustCall(t, cs, "search_corpus", map[string]any{"search": "nothing-like-this"})["corpus"].([]any)); n != 0 {
		t.Errorf("search for absent words found %d", n)
	}
	listed := webtest.MustCall(t, cs, "list_corpus_entries", map[string]any{"limit": 5})
	if p := listed["pagination"].(map[string]any); p["total"] != float64(1) || p["limit"] != float64(5) {
		t.Errorf("pagination %v", p)
	}

	webtest.MustCall(t, cs, "delete_corpus_entry", map[string]any{"id": id})
	if status, _ := b.Do(t, "GET", "/tenants/"+ten.Slug+"/corpus/"+id, rest, nil); status != http.StatusNotFound {
		t.Errorf("REST read after MCP delete: %d", status)
	}
	if e := mustFail(t, cs, "read_corpus_entry", map[string]any{"id": id}); e["error"] != "Corpus entry not found" {
		t.Errorf("read of a deleted entry: %v", e)
	}
}

func TestMCPScopes(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.NewTenant(t, "scale")

	t.Run("ToolWithoutItsScope", func(t *testing.T) {
		cs := b.MCPClient(t, b.Token(t, ten.ID, auth.ScopeCorpusRead))
		e := mustFail(t, cs, "create_corpus_entry", map[string]any{"title": "x", "content": "y"})
		if e["error"] != "Missing scope: mcp:corpus:write" || e["details"].(map[string]any)["requiredScope"] != "mcp:corpus:write" {
			t.Errorf("error %v", e)
		}
		if names := webtest.ToolNames(t, cs); slices.Contains(names, "create_corpus_entry") || !slices.Contains(names, "read_corpus_entry") {
			t.Errorf("tools/list = %v", names)
		}
		// The list depends on the token: no shared cache may keep it.
		if res, err := cs.ListTools(context.Background(), nil); err != nil || res.CacheScope != "private" {
			t.Errorf("tools/list cacheScope %q, %v", res.CacheScope, err)
		}
		if got := b.Count(t, `SELECT count(*) FROM corpus_entries WHERE tenant_id = $1`, ten.ID); got != 0 {
			t.Errorf("%d entries created without the scope", got)
		}
	})

	t.Run("EveryScopeListsEveryTool", func(t *testing.T) {
		cs := b.MCPClient(t, b.Token(t, ten.ID, auth.RESTScopes...))
		if n := len(webtest.ToolNames(t, cs)); n != 29 {
			t.Errorf("%d tools listed with every scope", n)
		}
	})

	t.Run("BillingFromStatsRead", func(t *testing.T) {
		cs := b.MCPClient(t, b.Token(t, ten.ID, auth.ScopeStatsRead))
		if names := webtest.ToolNames(t, cs); !slices.Equal(names, []string{"read_plan_usage"}) {
			t.Errorf("tools/list with stats:read = %v", names)
		}
	})

	t.Run("LegacyKeyInXAPIKey", func(t *testing.T) {
		key, _ := b.NewToken(t, ten.ID, true, auth.LegacyKeyScopes...)
		hc := &http.Client{Transport: webtest.HeaderTransport{Name: "X-API-Key", Value: key, Base: b.TS.Client().Transport}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "legacy", Version: "1"}, nil).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: b.TS.URL + "/mcp", HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		if names := webtest.ToolNames(t, cs); !slices.Equal(names, []string{"read_plan_usage"}) {
			t.Errorf("tools/list with a legacy key = %v", names)
		}
		if got := webtest.MustCall(t, cs, "read_plan_usage", nil)["plan"]; got != "scale" {
			t.Errorf("read_plan_usage: %v", got)
		}
	})

	t.Run("NoMCPScope", func(t *testing.T) {
		req, _ := http.NewRequest("POST", b.TS.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Authorization", "Bearer "+b.Token(t, ten.ID, auth.ScopeVisitorsWrite))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := b.TS.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		h := resp.Header.Get("WWW-Authenticate")
		if resp.StatusCode != http.StatusForbidden || !strings.HasPrefix(h, `Bearer error="insufficient_scope", scope="mcp:corpus:read mcp:corpus:write`) {
			t.Errorf("%d %q %s", resp.StatusCode, h, raw)
		}
	})
}

func TestMCPAuthentication(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	wantHeader := `Bearer resource_metadata="` + b.Srv.Config.BaseURL + `/.well-known/oauth-protected-resource/mcp"`
	for name, token := range map[string]string{"NoCredentials": "", "UnknownToken": "ak_nothing", "NotAnAKToken": "eyJhbGciOiJSUzI1NiJ9.e30.x"} {
		t.Run(name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", b.TS.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := b.TS.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var body map[string]any
			_ = json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != wantHeader || body["error"] == "" {
				t.Errorf("%d %q %v", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
			}
		})
	}

	t.Run("PlanWithoutMCP", func(t *testing.T) {
		ten := b.NewTenant(t, "starter")
		status, body := b.Do(t, "POST", "/mcp", b.Token(t, ten.ID, auth.ScopeCorpusRead), map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
		if status != http.StatusPaymentRequired || body["code"] != "PLAN_REQUIRED" || webtest.ErrorDetails(body)["requiredPlan"] != "builder" {
			t.Errorf("%d %v", status, body)
		}
	})

	t.Run("BodyTooLarge", func(t *testing.T) {
		ten := b.NewTenant(t, "builder")
		token := b.Token(t, ten.ID, auth.ScopeCorpusWrite)
		send := func(size int) int {
			prefix := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_corpus_entry","arguments":{"title":"Big","content":"`
			suffix := `"}}}`
			body := prefix + strings.Repeat("a", size-len(prefix)-len(suffix)) + suffix
			req, _ := http.NewRequest("POST", b.TS.URL+"/mcp", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := b.TS.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		// At 1 MiB the body is read (and the content refused as too long by
		// the tool, a 200 answer); a byte more is 413.
		if got := send(1 << 20); got != http.StatusOK {
			t.Errorf("1 MiB body: %d", got)
		}
		if got := send(1<<20 + 1); got != http.StatusRequestEntityTooLarge {
			t.Errorf("1 MiB + 1 body: %d", got)
		}
	})

	t.Run("GetIsNotAllowed", func(t *testing.T) {
		ten := b.NewTenant(t, "builder")
		req, _ := http.NewRequest("GET", b.TS.URL+"/mcp", nil)
		req.Header.Set("Authorization", "Bearer "+b.Token(t, ten.ID, auth.ScopeCorpusRead))
		req.Header.Set("Accept", "text/event-stream")
		resp, err := b.TS.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("GET /mcp: %d", resp.StatusCode)
		}
	})
}

func TestMCPTenantIsolation(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	a, other := b.NewTenant(t, "builder"), b.NewTenant(t, "builder")
	all := []string{auth.ScopeCorpusRead, auth.ScopeCorpusWrite, auth.ScopeSegmentsRead, auth.ScopeSegmentsWrite, auth.ScopeToolsRead, auth.ScopeToolsWrite}
	csA, csOther := b.MCPClient(t, b.Token(t, a.ID, all...)), b.MCPClient(t, b.Token(t, other.ID, all...))

	entry := webtest.MustCall(t, csA, "create_corpus_entry", map[string]any{"title": "A's secret", "content": "Only for A."})["corpus"].(map[string]any)["id"]
	seg := webtest.MustCall(t, csA, "create_segment", map[string]any{"name": "Pros", "slug": "pros-a", "systemPrompt": "Be brief."})["segment"].(map[string]any)
	tool := webtest.MustCall(t, csA, "create_tool", map[string]any{"name": "Remember", "description": "Remember facts", "type": "REMEMBER_FACT"})["tool"].(map[string]any)["id"]

	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"read_corpus_entry", map[string]any{"id": entry}, "Corpus entry not found"},
		{"update_corpus_entry", map[string]any{"id": entry, "title": "Mine"}, "Corpus entry not found"},
		{"delete_corpus_entry", map[string]any{"id": entry}, "Corpus entry not found"},
		{"read_segment", map[string]any{"id": seg["id"]}, "Segment not found"},
		{"read_segment", map[string]any{"id": "pros-a"}, "Segment not found"},
		{"update_segment", map[string]any{"id": seg["id"], "name": "Mine"}, "Segment not found"},
		{"read_tool", map[string]any{"id": tool}, "Tool not found"},
		{"update_tool", map[string]any{"id": tool, "name": "Mine"}, "Tool not found"},
	} {
		if e := mustFail(t, csOther, c.tool, c.args); e["error"] != c.want {
			t.Errorf("%s of the other tenant's: %v", c.tool, e)
		}
	}
	if n := len(webtest.MustCall(t, csOther, "list_corpus_entries", nil)["corpus"].([]any)); n != 0 {
		t.Errorf("the other tenant lists %d entries", n)
	}
	if got := webtest.MustCall(t, csA, "read_corpus_entry", map[string]any{"id": entry})["corpus"].(map[string]any)["title"]; got != "A's secret" {
		t.Errorf("A's entry changed: %v", got)
	}
}

func TestMCPSegmentsAndTools(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.NewTenant(t, "builder")
	cs := b.MCPClient(t, b.Token(t, ten.ID, auth.ScopeSegmentsRead, auth.ScopeSegmentsWrite, auth.ScopeToolsRead, auth.ScopeToolsWrite))
	rest := b.Token(t, ten.ID, auth.ScopeSegmentsRead, auth.ScopeToolsRead)

	seg := webtest.MustCall(t, cs, "create_segment", map[string]any{"name": "Partners", "systemPrompt": "Talk to partners.",
		"conversationStarters": []map[string]any{{"text": "Become a partner"}}})["segment"].(map[string]any)
	if seg["slug"] != "partners" {
		t.Errorf("slug %v", seg["slug"])
	}
	updated := webtest.MustCall(t, cs, "update_segment", map[string]any{"id": "partners", "welcomeMessage": "Hello partner"})["segment"].(map[string]any)
	if updated["welcomeMessage"] != "Hello partner" || updated["systemPrompt"] != "Talk to partners." {
		t.Errorf("updated %v", updated)
	}
	_, body := b.Do(t, "GET", "/tenants/"+ten.Slug+"/segments/partners", rest, nil)
	if body["welcomeMessage"] != "Hello partner" {
		t.Errorf("REST sees %v", body)
	}
	segs := webtest.MustCall(t, cs, "list_segments", nil)["segments"].([]any)
	if len(segs) != 2 {
		t.Errorf("%d segments", len(segs))
	}
	if got := webtest.MustCall(t, cs, "read_segment", map[string]any{"id": seg["id"]})["segment"].(map[string]any)["name"]; got != "Partners" {
		t.Errorf("read_segment: %v", got)
	}
	// The builder plan's limit of 10 segments applies as it does over REST.
	for i := 3; i <= 10; i++ {
		webtest.MustCall(t, cs, "create_segment", map[string]any{"name": "Segment " + string(rune('a'+i)), "systemPrompt": "p"})
	}
	if e := mustFail(t, cs, "create_segment", map[string]any{"name": "Eleventh", "systemPrompt": "p"}); !strings.Contains(e["error"].(string), "limit") {
		t.Errorf("11th segment: %v", e)
	}

	tool := webtest.MustCall(t, cs, "create_tool", map[string]any{"name": "Remember", "description": "Remember what partners tell", "type": "REMEMBER_FACT",
		"segmentId": "partners"})["tool"].(map[string]any)
	if tool["segment"] != "partners" || tool["isActive"] != true {
		t.Errorf("tool %v", tool)
	}
	off := webtest.MustCall(t, cs, "update_tool", map[string]any{"id": tool["id"], "isActive": false})["tool"].(map[string]any)
	if off["isActive"] != false || off["name"] != "Remember" {
		t.Errorf("updated tool %v", off)
	}
	status, got := b.Do(t, "GET", "/tenants/"+ten.Slug+"/tools/"+tool["id"].(string), rest, nil)
	if status != http.StatusOK || got["isActive"] != false {
		t.Errorf("REST sees %d %v", status, got)
	}
	if n := len(webtest.MustCall(t, cs, "list_tools", nil)["tools"].([]any)); n != 1 {
		t.Errorf("list_tools: %d", n)
	}
	if e := mustFail(t, cs, "create_tool", map[string]any{"name": "X", "description": "Y", "type": "EXPLORE_CORPUS"}); !strings.Contains(webtest.ErrorDetails(e)["type"].(string), "injected automatically") {
		t.Errorf("synthetic type: %v", e)
	}
}

func TestMCPConversationsVisitorsSettingsBilling(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ct := b.NewConvTenant(t)
	conv := b.AddConversation(t, ct, webtest.SeedConversation{Turns: []string{"Do you deliver to Lyon?", "Yes, in two days."}})
	cs := b.MCPClient(t, b.Token(t, ct.ID, auth.ScopeConversationsRead, auth.ScopeVisitorsRead, auth.ScopeSettingsRead, auth.ScopeSettingsWrite))

	list := webtest.MustCall(t, cs, "list_conversations", map[string]any{"limit": 10, "channel": "web"})
	items := list["conversations"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["id"] != conv.ID {
		t.Fatalf("list_conversations: %v", list)
	}
	if n := len(webtest.MustCall(t, cs, "list_conversations", map[string]any{"search": "Paris"})["conversations"].([]any)); n != 0 {
		t.Errorf("search for Paris found %d", n)
	}
	detail := webtest.MustCall(t, cs, "read_conversation", map[string]any{"id": conv.ID})["conversation"].(map[string]any)
	if msgs := detail["messages"].([]any); len(msgs) != 2 || msgs[0].(map[string]any)["content"] != "Do you deliver to Lyon?" {
		t.Errorf("messages %v", msgs)
	}
	stats := webtest.MustCall(t, cs, "conversation_stats", map[string]any{"granularity": "week"})
	if stats["totals"].(map[string]any)["conversations"] != float64(1) || stats["window"].(map[string]any)["granularity"] != "week" {
		t.Errorf("stats %v", stats)
	}
	if e := mustFail(t, cs, "conversation_stats", map[string]any{"granularity": "hour"}); webtest.ErrorDetails(e)["granularity"] != "must be day, week or month" {
		t.Errorf("bad granularity: %v", e)
	}

	// Another tenant's token sees neither the conversation nor its stats.
	other := b.NewTenant(t, "scale")
	csOther := b.MCPClient(t, b.Token(t, other.ID, auth.ScopeConversationsRead))
	if e := mustFail(t, csOther, "read_conversation", map[string]any{"id": conv.ID}); e["error"] != "Conversation not found" {
		t.Errorf("read_conversation of another tenant's: %v", e)
	}
	if n := len(webtest.MustCall(t, csOther, "list_conversations", nil)["conversations"].([]any)); n != 0 {
		t.Errorf("another tenant lists %d conversations", n)
	}

	visitors := webtest.MustCall(t, cs, "list_visitors", nil)
	if visitors["total"] != float64(0) || visitors["limit"] != float64(50) {
		t.Errorf("list_visitors: %v", visitors)
	}
	if e := mustFail(t, cs, "read_visitor", map[string]any{"id": "00000000-0000-0000-0000-000000000000"}); e["error"] != "Visitor not found" {
		t.Errorf("read_visitor: %v", e)
	}

	persona := webtest.MustCall(t, cs, "update_persona", map[string]any{"botName": "Ada", "botTone": "PLAYFUL", "allowEmojis": true})["persona"].(map[string]any)
	if persona["botName"] != "Ada" || persona["botTone"] != "PLAYFUL" || persona["allowEmojis"] != true {
		t.Errorf("update_persona: %v", persona)
	}
	if got := b.TenantNow(t, ct.Slug); got.BotName == nil || *got.BotName != "Ada" || got.BotTone != "PLAYFUL" {
		t.Errorf("stored persona %+v", got)
	}
	if got := webtest.MustCall(t, cs, "read_persona", nil)["persona"].(map[string]any)["botName"]; got != "Ada" {
		t.Errorf("read_persona: %v", got)
	}

	usage := webtest.MustCall(t, cs, "read_plan_usage", nil)
	if usage["plan"] != "scale" || usage["usage"].(map[string]any)["conversationsUsed"] != float64(1) || usage["features"].(map[string]any)["mcp"] != true ||
		usage["conversationsUsed"] != float64(1) || usage["conversationsLimit"] != float64(25000) || usage["atLimit"] != false ||
		usage["limits"].(map[string]any)["members"] != float64(50) || usage["slug"] != ct.Slug {
		t.Errorf("read_plan_usage: %v", usage)
	}
	// The same as the operator's read of the tenant, day by day.
	daily, _ := usage["daily"].([]any)
	if len(daily) != time.Now().UTC().Day() {
		t.Errorf("read_plan_usage daily: %v", usage["daily"])
	} else if today := daily[len(daily)-1].(map[string]any); today["date"] != time.Now().UTC().Format(time.DateOnly) || today["conversations"] != float64(1) {
		t.Errorf("read_plan_usage today: %v", today)
	}
}

func TestMCPBadInput(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.NewTenant(t, "builder")
	cs := b.MCPClient(t, b.Token(t, ten.ID, auth.ScopeCorpusRead, auth.ScopeCorpusWrite, auth.ScopeSettingsWrite, auth.ScopeConversationsRead))

	for _, c := range []struct {
		name, tool string
		args       map[string]any
		field      string
		want       string
	}{
		{"WrongType", "create_corpus_entry", map[string]any{"title": 5, "content": "c"}, "title", "must be a string"},
		{"WrongTypeBool", "update_persona", map[string]any{"allowEmojis": "yes"}, "allowEmojis", "must be a boolean"},
		{"UnknownEnum", "update_persona", map[string]any{"botTone": "LOUD"}, "botTone", "must be one of FORMAL, NEUTRAL, FRIENDLY, PLAYFUL, TECHNICAL"},
		{"UnknownChannel", "list_conversations", map[string]any{"channel": "fax"}, "channel", "must be web, agent, voice or api"},
		{"TitleTooLong", "create_corpus_entry", map[string]any{"title": strings.Repeat("t", 256), "content": "c"}, "title", "must be at most 255 characters"},
		{"MissingContent", "create_corpus_entry", map[string]any{"title": "t"}, "content", "is required"},
		{"LimitOverMax", "list_corpus_entries", map[string]any{"limit": 101}, "limit", "must be an integer between 1 and 100"},
		{"LimitNotInteger", "list_corpus_entries", map[string]any{"limit": 2.5}, "limit", "must be an integer"},
		{"UnknownArgument", "update_persona", map[string]any{"primaryColor": "#000000"}, "primaryColor", "is not an argument of update_persona"},
		{"MissingID", "read_corpus_entry", map[string]any{}, "id", "is required: a non-empty string"},
		{"IDNotString", "read_corpus_entry", map[string]any{"id": 7}, "id", "is required: a non-empty string"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := mustFail(t, cs, c.tool, c.args)
			if got, _ := webtest.ErrorDetails(e)[c.field].(string); !strings.HasPrefix(got, c.want) && !strings.HasPrefix(e["error"].(string), c.field+" "+c.want) {
				t.Errorf("%v, want %s: %s", e, c.field, c.want)
			}
		})
	}

	t.Run("LimitsAtTheEdge", func(t *testing.T) {
		e := webtest.MustCall(t, cs, "create_corpus_entry", map[string]any{"title": strings.Repeat("t", 255), "content": "c"})
		if got := e["corpus"].(map[string]any)["title"].(string); len(got) != 255 {
			t.Errorf("title of %d", len(got))
		}
		if p := webtest.MustCall(t, cs, "list_corpus_entries", map[string]any{"limit": 100})["pagination"].(map[string]any); p["limit"] != float64(100) {
			t.Errorf("limit 100: %v", p)
		}
	})

	t.Run("MalformedIDs", func(t *testing.T) {
		cs := b.MCPClient(t, b.Token(t, ten.ID, auth.RESTScopes...))
		for _, tool := range []string{"read_corpus_entry", "update_corpus_entry", "delete_corpus_entry", "read_segment", "update_segment",
			"read_tool", "update_tool", "read_conversation", "read_visitor"} {
			if e := mustFail(t, cs, tool, map[string]any{"id": "not-a-uuid'"}); !strings.HasSuffix(e["error"].(string), "not found") {
				t.Errorf("%s of a malformed id: %v", tool, e)
			}
		}
	})

	t.Run("EmptyPersonaUpdate", func(t *testing.T) {
		if p := webtest.MustCall(t, cs, "update_persona", map[string]any{})["persona"].(map[string]any); p["name"] != "Tenant "+ten.Slug {
			t.Errorf("update_persona {}: %v", p)
		}
		if e := mustFail(t, cs, "update_persona", map[string]any{"name": nil}); webtest.ErrorDetails(e)["name"] == nil {
			t.Errorf("name null: %v", e)
		}
	})

	t.Run("UnknownTool", func(t *testing.T) {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "drop_everything", Arguments: map[string]any{}})
		if err == nil || !strings.Contains(err.Error(), "drop_everything") {
			t.Errorf("unknown tool: %v", err)
		}
	})
}

// TestMCPRevision20251125 speaks the revision Parley targets by hand: the
// initialize handshake negotiates 2025-11-25, and later requests, each on
// its own (no session id), carry MCP-Protocol-Version.
func TestMCPRevision20251125(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.NewTenant(t, "builder")
	token := b.Token(t, ten.ID, auth.ScopeCorpusRead, auth.ScopeCorpusWrite)
	post := func(version string, msg map[string]any) (int, http.Header, map[string]any) {
		t.Helper()
		raw, _ := json.Marshal(msg)
		req, _ := http.NewRequest("POST", b.TS.URL+"/mcp", strings.NewReader(string(raw)))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if version != "" {
			req.Header.Set("MCP-Protocol-Version", version)
		}
		resp, err := b.TS.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, resp.Header, out
	}

	status, h, init := post("", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "1"}}})
	res, _ := init["result"].(map[string]any)
	if status != http.StatusOK || res["protocolVersion"] != "2025-11-25" || h.Get("Mcp-Session-Id") != "" {
		t.Fatalf("initialize: %d %v, session %q", status, init, h.Get("Mcp-Session-Id"))
	}
	if caps, _ := res["capabilities"].(map[string]any); caps["tools"] == nil {
		t.Errorf("capabilities %v", res["capabilities"])
	}
	if status, _, _ := post("2025-11-25", map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); status != http.StatusAccepted {
		t.Errorf("notifications/initialized: %d", status)
	}
	_, _, call := post("2025-11-25", map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{
		"name": "create_corpus_entry", "arguments": map[string]any{"title": "Raw", "content": "Sent by hand."}}})
	result, _ := call["result"].(map[string]any)
	structured, _ := result["structuredContent"].(map[string]any)
	if result["isError"] == true || structured["created"] != true {
		t.Fatalf("tools/call: %v", call)
	}

	// Arguments that are not an object: a tool error, not a failure.
	_, _, bad := post("2025-11-25", map[string]any{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": map[string]any{
		"name": "create_corpus_entry", "arguments": "title=Raw"}})
	if r, _ := bad["result"].(map[string]any); r["isError"] != true || !strings.Contains(fmt.Sprint(r["content"]), "The arguments must be a JSON object") {
		t.Errorf("string arguments: %v", bad)
	}
}
