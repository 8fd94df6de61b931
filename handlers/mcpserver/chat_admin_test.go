package mcpserver_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db/accounts"
	"github.com/parley/parley/web/webtest"
)

// adminToken mints an OAuth access token of ten's owner for resource with
// scopes, signed at now, as the token endpoint does; it returns the token,
// its jti and its client.
func adminToken(t *testing.T, b *webtest.Bundle, ten webtest.Tenant, resource string, now time.Time, scopes ...string) (string, string, string) {
	t.Helper()
	ctx := t.Context()
	user, err := b.DB.UserByEmail(ctx, ten.OwnerEmail)
	if err != nil {
		t.Fatal(err)
	}
	client, err := b.DB.CreateOAuthClient(ctx, accounts.OAuthClient{ID: auth.NewOpaque("pc_"), Name: "Site plugin",
		RedirectURIs: []string{"https://site.example/cb"}, Scopes: auth.OAuthScopes})
	if err != nil {
		t.Fatal(err)
	}
	code, jti := auth.NewOpaque("ac_"), auth.NewOpaque("")
	if err := b.DB.CreateOAuthCode(ctx, auth.HashToken(code), accounts.OAuthCode{ClientID: client.ID, TenantID: ten.ID, UserID: user.ID,
		RedirectURI: client.RedirectURIs[0], Scopes: scopes, Resource: resource,
		CodeChallenge: "x", ExpiresAt: now.Add(auth.CodeTTL)}, now); err != nil {
		t.Fatal(err)
	}
	g, err := b.DB.RedeemOAuthCode(ctx, auth.HashToken(code), accounts.OAuthIssue{JTI: jti, AccessExpires: now.Add(auth.AccessTokenTTL),
		RefreshHash: auth.HashToken(auth.NewOpaque(auth.RefreshTokenPrefix)), RefreshExpires: now.Add(auth.RefreshTokenTTL)}, now)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := b.Srv.Base.OAuth.SignAccessToken(ctx, g, jti, now)
	if err != nil {
		t.Fatal(err)
	}
	return tok, jti, client.ID
}

// toolsOffered is the names of the tools the model was offered in request i.
func toolsOffered(llm *llmtest.OpenAI, i int) []string {
	var names []string
	for _, tool := range llm.Requests()[i].Chat.Tools {
		names = append(names, tool.Function.Name)
	}
	return names
}

// TestChatAdminToken: X-Service-Admin-Token offers the management tools its
// scopes allow, which run as at /mcp and land in the tool history; a bad
// token is a 401 and stores nothing.
func TestChatAdminToken(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	ten, other := b.OwnedTenant(t, "builder"), b.OwnedTenant(t, "builder")
	mcpRes := b.Srv.Config.BaseURL + "/mcp"
	now := b.Srv.Base.Clock()
	write, _, _ := adminToken(t, b, ten, mcpRes, now, auth.ScopeMCPCorpusRead, auth.ScopeMCPCorpusWrite)

	llm.Push(
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: "admin_create_corpus_entry",
			Arguments: []string{`{"title":"Opening hours","content":"We open at 9 on weekdays."}`}}}},
		llmtest.Turn{Text: []string{"Added."}},
	)
	r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "Add our opening hours: 9 on weekdays", "sessionId": "admin-1"},
		map[string]string{"X-Agent-Model": "claude-test", "X-Service-Admin-Token": write})
	if r.Status != 200 || r.Body["message"] != "Added." {
		t.Fatalf("got %d %v", r.Status, r.Body)
	}
	want := []string{"admin_list_corpus_entries", "admin_read_corpus_entry", "admin_search_corpus",
		"admin_create_corpus_entry", "admin_update_corpus_entry", "admin_delete_corpus_entry", "admin_run_tests", "admin_read_test_run",
		"admin_correct_answer", "admin_mark_knowledge_gap"}
	got := toolsOffered(llm, 0)
	if slices.Sort(got); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Errorf("tools offered = %v, want %v", got, want)
	}
	rest := b.Token(t, ten.ID, auth.ScopeCorpusRead)
	st, list := b.Do(t, "GET", "/tenants/"+ten.Slug+"/corpus", rest, nil)
	entries, _ := list["corpus"].([]any)
	if st != 200 || len(entries) != 1 || entries[0].(map[string]any)["title"] != "Opening hours" {
		t.Fatalf("corpus after the admin tool: %d %v", st, list)
	}
	convID := r.Body["conversationId"]
	var name, typ, input string
	if err := b.DB.Pool().QueryRow(t.Context(), `SELECT tool_name, tool_type, input::text FROM tool_history WHERE conversation_id = $1`,
		convID).Scan(&name, &typ, &input); err != nil {
		t.Fatalf("tool history: %v", err)
	}
	if !strings.EqualFold(name, "admin_create_corpus_entry") || typ != "MCP_ADMIN" || !strings.Contains(input, "Opening hours") {
		t.Errorf("tool history: %s %s %s", name, typ, input)
	}
	webtest.CheckChatSchema(t, "admin envelope", "ChatReply", r.Body)
	if ex, _ := r.Body["toolExecutions"].([]any); len(ex) != 1 || ex[0].(map[string]any)["type"] != "MCP_ADMIN" || ex[0].(map[string]any)["success"] != true {
		t.Errorf("toolExecutions = %v", r.Body["toolExecutions"])
	}
	st, conv := b.Do(t, "GET", "/tenants/"+ten.Slug+"/conversations/"+convID.(string), b.Token(t, ten.ID, auth.ScopeConversationsRead), nil)
	if h, _ := conv["toolHistory"].([]any); st != 200 || conv["toolCallsCount"] != 1.0 || len(h) != 1 || h[0].(map[string]any)["toolType"] != "MCP_ADMIN" {
		t.Errorf("conversation: %d %v", st, conv)
	}
	if sent := llm.Requests()[1].Chat.Messages; !strings.Contains(string(sent[len(sent)-1].Content), `"success":true`) {
		t.Errorf("tool result sent back: %s", sent[len(sent)-1].Content)
	}

	// A read-only token: no write tool offered. No header: no admin tool.
	read, _, _ := adminToken(t, b, ten, mcpRes, now, auth.ScopeMCPCorpusRead)
	for i, hdr := range []map[string]string{{"X-Service-Admin-Token": read}, {}} {
		llm.Push(llmtest.Turn{Text: []string{"Hello."}})
		hdr["X-Agent-Model"] = "claude-test"
		n := len(llm.Requests())
		if r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "Hi", "sessionId": "admin-read"}, hdr); r.Status != 200 {
			t.Fatalf("case %d: %d %v", i, r.Status, r.Body)
		}
		got := toolsOffered(llm, n)
		slices.Sort(got)
		want := []string{"admin_list_corpus_entries", "admin_read_corpus_entry", "admin_read_test_run", "admin_search_corpus"}
		if i == 1 {
			want = nil
		}
		if !slices.Equal(got, want) {
			t.Errorf("case %d: tools offered = %v, want %v", i, got, want)
		}
	}

	// Refused tokens: 401 with the reason, no conversation stored.
	expired, _, _ := adminToken(t, b, ten, mcpRes, now.Add(-auth.AccessTokenTTL-time.Minute), auth.ScopeMCPCorpusWrite)
	revoked, jti, client := adminToken(t, b, ten, mcpRes, now, auth.ScopeMCPCorpusWrite)
	if err := b.DB.RevokeOAuthAccess(t.Context(), jti, client, now); err != nil {
		t.Fatal(err)
	}
	foreign, _, _ := adminToken(t, b, other, mcpRes, now, auth.ScopeMCPCorpusWrite)
	restAud, _, _ := adminToken(t, b, ten, b.Srv.Config.BaseURL, now, auth.ScopeMCPCorpusWrite)
	starter := b.OwnedTenant(t, "starter")
	onStarter, _, _ := adminToken(t, b, starter, mcpRes, now, auth.ScopeMCPCorpusWrite)
	noMCP, _, _ := adminToken(t, b, ten, mcpRes, now, auth.ScopeVisitorsWrite)
	for _, c := range []struct {
		name, slug, token string
		status            int
		err               string
	}{
		{"starter plan", starter.Slug, onStarter, http.StatusPaymentRequired, "PLAN_REQUIRED"},
		{"no MCP scope", ten.Slug, noMCP, http.StatusForbidden, "This admin token grants none of the MCP scopes: " + strings.Join(auth.MCPScopes, " ")},
	} {
		r := b.Chat(t, "/chat/"+c.slug, map[string]any{"message": "Hi", "sessionId": "admin-refused"},
			map[string]string{"X-Agent-Model": "claude-test", "X-Service-Admin-Token": c.token})
		if r.Status != c.status || (r.Body["error"] != c.err && r.Body["code"] != c.err) {
			t.Errorf("%s: %d %v", c.name, r.Status, r.Body)
		}
	}
	for _, c := range []struct{ name, token, reason string }{
		{"garbage", "not-a-jwt", "Invalid or revoked token"},
		{"expired", expired, "Access token expired: refresh it"},
		{"revoked", revoked, "Invalid or revoked token"},
		{"other tenant", foreign, "it was issued for another tenant"},
		{"REST audience", restAud, "it was issued for " + b.Srv.Config.BaseURL + ", not " + mcpRes},
	} {
		before := len(llm.Requests())
		r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "Hi", "sessionId": "admin-bad-" + c.name},
			map[string]string{"X-Agent-Model": "claude-test", "X-Service-Admin-Token": c.token})
		if r.Status != http.StatusUnauthorized || r.Body["error"] != "Invalid admin token: "+c.reason {
			t.Errorf("%s: %d %v", c.name, r.Status, r.Body)
		}
		if n := b.Count(t, `SELECT count(*) FROM conversations WHERE tenant_id = $1 AND session_id = $2`, ten.ID, "admin-bad-"+c.name); n != 0 || len(llm.Requests()) != before {
			t.Errorf("%s: %d conversations stored, model called %d times", c.name, n, len(llm.Requests())-before)
		}
	}
}
