package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parley/parley/agent/llmtest"
	"github.com/parley/parley/auth"
)

// tenantMCP is a tenant's own MCP server in tests: the SDK's server over
// Streamable HTTP on an httptest listener, counting its sessions opened
// (initialize) and tools/list calls and keeping the Authorization header of
// each request.
type tenantMCP struct {
	URL     string
	inits   atomic.Int32
	lists   atomic.Int32
	calls   atomic.Int32
	release chan struct{} // closed at the end of the test: slow tools return
	mu      sync.Mutex
	auth    []string
	// slowList makes tools/list wait until release.
	slowList atomic.Bool
	ts       *httptest.Server
}

// newTenantMCP serves tools: get_weather (answers "Sunny in <city>"),
// fail (answers isError), slow (waits for release), "Weird tool.name!" and
// "get_weather!" (same function name as get_weather once sanitized), then
// extra tools named extra_1...extra_n. The SDK lists them by name.
func newTenantMCP(t *testing.T, extra int) *tenantMCP {
	t.Helper()
	m := &tenantMCP{release: make(chan struct{})}
	server := mcp.NewServer(&mcp.Implementation{Name: "tenant-tools", Version: "1"}, nil)
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	server.AddTool(&mcp.Tool{Name: "get_weather", Description: "The weather in a city",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ City string }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			return text("Sunny in " + in.City), nil
		})
	server.AddTool(&mcp.Tool{Name: "fail", Description: "Always fails", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r := text("the order database is offline")
			r.IsError = true
			return r, nil
		})
	server.AddTool(&mcp.Tool{Name: "slow", Description: "Never answers in time", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			select {
			case <-m.release:
			case <-ctx.Done():
			}
			return text("too late"), nil
		})
	for _, name := range []string{"Weird tool.name!", "get_weather!"} {
		server.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("ok"), nil })
	}
	for i := 1; i <= extra; i++ {
		server.AddTool(&mcp.Tool{Name: fmt.Sprintf("extra_%d", i), InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("ok"), nil })
	}
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	m.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		m.mu.Lock()
		m.auth = append(m.auth, r.Header.Get("Authorization"))
		m.mu.Unlock()
		switch {
		case bytes.Contains(body, []byte(`"initialize"`)): // not notifications/initialized
			m.inits.Add(1)
		case bytes.Contains(body, []byte(`"tools/list"`)):
			m.lists.Add(1)
			if m.slowList.Load() {
				select {
				case <-m.release:
				case <-r.Context().Done():
				}
				return
			}
		case bytes.Contains(body, []byte(`"tools/call"`)):
			m.calls.Add(1)
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(m.ts.Close)
	t.Cleanup(func() { close(m.release) }) // runs first: handlers return, then the listener closes
	m.URL = m.ts.URL + "/mcp"
	return m
}

// authHeaders returns the Authorization headers received so far.
func (m *tenantMCP) authHeaders() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.auth)
}

// setMCP saves the tenant's MCP settings directly: the API takes https URLs
// only, and the test server speaks http on the loopback.
func (b *bundle) setMCP(t *testing.T, tenantID, url, key string, maxTools int) {
	t.Helper()
	var sealed []byte
	if key != "" {
		sealed = b.box.Seal([]byte(key))
	}
	b.exec(t, `UPDATE tenants SET mcp_tools_url = $2, mcp_tools_api_key = $3, mcp_tools_max_tools = $4 WHERE id = $1`,
		tenantID, url, sealed, maxTools)
}

// mcpToolRows are the tool history rows of a conversation: name, type,
// input and result as text.
func (b *bundle) mcpToolRows(t *testing.T, conversationID any) [][4]string {
	t.Helper()
	rows, err := b.db.Pool().Query(t.Context(), `SELECT tool_name, tool_type, input::text, result::text FROM tool_history
		WHERE conversation_id = $1 ORDER BY created_at, id`, conversationID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][4]string
	for rows.Next() {
		var r [4]string
		if err := rows.Scan(&r[0], &r[1], &r[2], &r[3]); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// TestChatMCPProxy: a builder tenant's own MCP server, through real chat
// requests. Its tools are listed once (with the bearer key) and offered as
// mcp_<name> with their schemas, names sanitized and made unique; a call
// runs tools/call, its answer goes back to the model, and it lands in the
// tool history as MCP_PROXY and in toolCallsCount. An isError answer is an
// error in the history that the model is told. Two turns make one
// tools/list; a changed key makes a new one. The key appears in no log and
// no history.
func TestChatMCPProxy(t *testing.T) {
	t.Parallel()
	b, llm := setupChat(t, nil)
	var logs logBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	b.logTo(logger)
	server := newTenantMCP(t, 0)
	ten := b.newTenant(t, "builder")
	const key = "mcp-secret-key-1"
	b.setMCP(t, ten.ID, server.URL, key, 10)

	llm.Push(
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "call_w", Name: "mcp_get_weather", Arguments: []string{`{"city":"Paris"}`}}}},
		llmtest.Turn{Text: []string{"It is sunny in Paris."}},
	)
	r := b.chat(t, "/chat/"+ten.Slug, map[string]any{"message": "Weather in Paris?", "sessionId": "mcp-1"}, agentHeaders)
	if r.status != 200 || r.body["message"] != "It is sunny in Paris." {
		t.Fatalf("got %d %v", r.status, r.body)
	}
	checkChatSchema(t, "MCP envelope", "ChatReply", r.body)
	reqs := llm.Requests()
	want := []string{"mcp_fail", "mcp_get_weather", "mcp_get_weather_2", "mcp_slow", "mcp_weird_tool_name"}
	if got := offeredTools(reqs[0]); !slices.Equal(got, want) {
		t.Errorf("offered %v, want %v", got, want)
	}
	for _, tool := range reqs[0].Chat.Tools {
		if tool.Function.Name == "mcp_get_weather" && (tool.Function.Description != "The weather in a city" ||
			!strings.Contains(string(tool.Function.Parameters), `"city"`)) {
			t.Errorf("mcp_get_weather offered as %s %s", tool.Function.Description, tool.Function.Parameters)
		}
	}
	if res := toolResults(reqs[1]); len(res) != 1 || !strings.Contains(res[0], "Sunny in Paris") || !strings.Contains(res[0], `"success":true`) {
		t.Errorf("tool result fed to the model: %v", res)
	}
	if ex, _ := r.body["toolExecutions"].([]any); len(ex) != 1 || ex[0].(map[string]any)["type"] != "MCP_PROXY" {
		t.Errorf("toolExecutions = %v", r.body["toolExecutions"])
	}
	for _, h := range server.authHeaders() {
		if h != "Bearer "+key {
			t.Fatalf("the server got Authorization %q, want the bearer key", h)
		}
	}

	// The same session: the list is not asked again; the tool answers
	// isError, which the model is told and the history keeps as a failure.
	llm.Push(
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "call_f", Name: "mcp_fail", Arguments: []string{`{}`}}}},
		llmtest.Turn{Text: []string{"Our order system is down, sorry."}},
	)
	r = b.chat(t, "/chat/"+ten.Slug, map[string]any{"message": "Where is my order?", "sessionId": "mcp-1"}, agentHeaders)
	if r.status != 200 {
		t.Fatalf("got %d %v", r.status, r.body)
	}
	if res := toolResults(llm.Requests()[3]); len(res) != 1 || !strings.Contains(res[0], "the order database is offline") || !strings.Contains(res[0], `"success":false`) {
		t.Errorf("isError result fed to the model: %v", res)
	}
	if n := server.lists.Load(); n != 1 {
		t.Errorf("tools/list called %d times for two turns, want 1 (cached)", n)
	}
	convID := r.body["conversationId"]
	rows := b.mcpToolRows(t, convID)
	if len(rows) != 2 || rows[0][0] != "mcp_get_weather" || rows[0][1] != "MCP_PROXY" || !strings.Contains(rows[0][2], "Paris") ||
		!strings.Contains(rows[0][3], "Sunny in Paris") || rows[1][1] != "MCP_PROXY" || !strings.Contains(rows[1][3], `"success": false`) ||
		!strings.Contains(rows[1][3], "offline") {
		t.Errorf("tool history: %v", rows)
	}
	st, conv := b.do(t, "GET", "/tenants/"+ten.Slug+"/conversations/"+convID.(string), b.token(t, ten.ID, auth.ScopeConversationsRead), nil)
	if st != 200 || conv["toolCallsCount"] != 2.0 {
		t.Errorf("conversation: %d toolCallsCount %v", st, conv["toolCallsCount"])
	}

	// A new key: the next turn lists the tools again, with it.
	const newKey = "mcp-secret-key-2"
	b.setMCP(t, ten.ID, server.URL, newKey, 10)
	llm.Push(llmtest.Turn{Text: []string{"Hello again."}})
	if r := b.chat(t, "/chat/"+ten.Slug, map[string]any{"message": "Hi", "sessionId": "mcp-2"}, agentHeaders); r.status != 200 {
		t.Fatalf("got %d %v", r.status, r.body)
	}
	if n := server.lists.Load(); n != 2 {
		t.Errorf("tools/list called %d times after the key changed, want 2", n)
	}
	if got := server.authHeaders(); got[len(got)-1] != "Bearer "+newKey {
		t.Errorf("after the change the server got %q", got[len(got)-1])
	}

	var history string
	if err := b.db.Pool().QueryRow(t.Context(), `SELECT coalesce(string_agg(input::text || result::text, ''), '') FROM tool_history WHERE tenant_id = $1`, ten.ID).Scan(&history); err != nil {
		t.Fatal(err)
	}
	logs.mu.Lock()
	logged := logs.buf.String()
	logs.mu.Unlock()
	for _, k := range []string{key, newKey} {
		if strings.Contains(history, k) || strings.Contains(logged, k) {
			t.Errorf("the key %q appears in the tool history or the logs", k)
		}
	}
}

// TestChatMCPProxyLimits: at most mcpToolsMaxTools tools are offered, in
// the server's order; a plan without MCP offers none and never calls the
// server; five minutes later the list is asked again.
func TestChatMCPProxyLimits(t *testing.T) {
	t.Parallel()
	b, llm := setupChat(t, nil)
	now := time.Now()
	var clock atomic.Int64
	clock.Store(now.UnixNano())
	b.srv.Base.Now = func() time.Time { return time.Unix(0, clock.Load()) }
	server := newTenantMCP(t, 3)
	builder := b.newTenant(t, "builder")
	b.setMCP(t, builder.ID, server.URL, "", 2)
	llm.Push(llmtest.Turn{Text: []string{"Hello."}})
	if r := b.chat(t, "/chat/"+builder.Slug, map[string]any{"message": "Hi", "sessionId": "max-1"}, agentHeaders); r.status != 200 {
		t.Fatalf("got %d %v", r.status, r.body)
	}
	// The SDK lists by name: "Weird tool.name!", extra_1, extra_2...
	if got := offeredTools(llm.Requests()[0]); !slices.Equal(got, []string{"mcp_extra_1", "mcp_weird_tool_name"}) {
		t.Errorf("offered %v with mcpToolsMaxTools 2, want the server's first two", got)
	}
	for _, h := range server.authHeaders() {
		if h != "" {
			t.Errorf("no key is set, yet the server got Authorization %q", h)
		}
	}

	clock.Add(int64(4 * time.Minute))
	llm.Push(llmtest.Turn{Text: []string{"Hello."}})
	b.chat(t, "/chat/"+builder.Slug, map[string]any{"message": "Hi", "sessionId": "max-2"}, agentHeaders)
	if n := server.lists.Load(); n != 1 {
		t.Errorf("tools/list called %d times within 5 minutes, want 1", n)
	}
	clock.Add(int64(time.Minute + time.Second))
	llm.Push(llmtest.Turn{Text: []string{"Hello."}})
	b.chat(t, "/chat/"+builder.Slug, map[string]any{"message": "Hi", "sessionId": "max-3"}, agentHeaders)
	if n := server.lists.Load(); n != 2 {
		t.Errorf("tools/list called %d times after 5 minutes, want 2", n)
	}

	other := newTenantMCP(t, 0)
	starter := b.newTenant(t, "starter")
	b.setMCP(t, starter.ID, other.URL, "k", 10)
	n := len(llm.Requests())
	llm.Push(llmtest.Turn{Text: []string{"Hello."}})
	if r := b.chat(t, "/chat/"+starter.Slug, map[string]any{"message": "Hi", "sessionId": "plan-1"}, agentHeaders); r.status != 200 {
		t.Fatalf("got %d %v", r.status, r.body)
	}
	if got := offeredTools(llm.Requests()[n]); len(got) != 0 {
		t.Errorf("a starter tenant was offered %v", got)
	}
	if got := other.authHeaders(); len(got) != 0 {
		t.Errorf("a starter tenant's server got %d requests", len(got))
	}
}

// TestChatMCPProxySlow: a server that does not answer costs a turn at most
// the MCP timeout. A slow tools/list: the turn is answered without the
// tools, and the next turn does not wait again (the failure is kept). A
// slow tools/call and a server gone: errors in the tool history, in words
// the model can pass on.
func TestChatMCPProxySlow(t *testing.T) {
	t.Parallel()
	b, llm := setupChat(t, nil)
	const bound = 300 * time.Millisecond
	b.srv.Base.Engine.MCP.Timeout = bound

	hanging := newTenantMCP(t, 0)
	hanging.slowList.Store(true)
	ten := b.newTenant(t, "builder")
	b.setMCP(t, ten.ID, hanging.URL, "", 10)
	for i := range 2 {
		llm.Push(llmtest.Turn{Text: []string{"Hello."}})
		n := len(llm.Requests())
		start := time.Now()
		r := b.chat(t, "/chat/"+ten.Slug, map[string]any{"message": "Hi", "sessionId": fmt.Sprintf("slow-list-%d", i)}, agentHeaders)
		if r.status != 200 {
			t.Fatalf("turn %d: %d %v", i, r.status, r.body)
		}
		if got := offeredTools(llm.Requests()[n]); len(got) != 0 {
			t.Errorf("turn %d offered %v from a server that did not list its tools", i, got)
		}
		// The server hangs until the test ends, so an answer at all shows
		// the turn gave up on it; the bound only tells that from waiting
		// out the turn's own 5-minute limit, far above any machine's load
		// (3 s was passed once, with other tests running alongside).
		if el := time.Since(start); el > bound+30*time.Second {
			t.Errorf("turn %d took %s with a hanging server", i, el)
		}
	}
	// Asked once, the failure kept: one session opened in two turns. (Its
	// tools/list may never have come: on a loaded machine the session's
	// opening alone can outlast the bound.)
	if n, lists := hanging.inits.Load(), hanging.lists.Load(); n != 1 || lists > 1 {
		t.Errorf("in two turns the server was asked to open %d sessions and list its tools %d times, want 1 and at most 1 (the failure is kept)", n, lists)
	}

	server := newTenantMCP(t, 0)
	b.setMCP(t, ten.ID, server.URL, "", 10)
	llm.Push(
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "call_s", Name: "mcp_slow", Arguments: []string{`{}`}}}},
		llmtest.Turn{Text: []string{"The system is slow right now."}},
	)
	n := len(llm.Requests())
	r := b.chat(t, "/chat/"+ten.Slug, map[string]any{"message": "Check", "sessionId": "slow-call"}, agentHeaders)
	if r.status != 200 {
		t.Fatalf("got %d %v", r.status, r.body)
	}
	if res := toolResults(llm.Requests()[n+1]); len(res) != 1 || !strings.Contains(res[0], "did not answer within 300ms") || !strings.Contains(res[0], `"success":false`) {
		t.Errorf("slow tool result fed to the model: %v", res)
	}
	if rows := b.mcpToolRows(t, r.body["conversationId"]); len(rows) != 1 || rows[0][1] != "MCP_PROXY" || !strings.Contains(rows[0][3], `"success": false`) {
		t.Errorf("tool history: %v", rows)
	}

	// A server that goes away after listing its tools.
	gone := newTenantMCP(t, 0)
	b.setMCP(t, ten.ID, gone.URL, "", 10)
	llm.Push(llmtest.Turn{Text: []string{"Hello."}})
	if r := b.chat(t, "/chat/"+ten.Slug, map[string]any{"message": "Hi", "sessionId": "gone-1"}, agentHeaders); r.status != 200 {
		t.Fatalf("got %d %v", r.status, r.body)
	}
	gone.ts.Close()
	llm.Push(
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "call_w", Name: "mcp_get_weather", Arguments: []string{`{"city":"Oslo"}`}}}},
		llmtest.Turn{Text: []string{"I cannot check the weather now."}},
	)
	n = len(llm.Requests())
	r = b.chat(t, "/chat/"+ten.Slug, map[string]any{"message": "Weather?", "sessionId": "gone-2"}, agentHeaders)
	if r.status != 200 {
		t.Fatalf("got %d %v", r.status, r.body)
	}
	if res := toolResults(llm.Requests()[n+1]); len(res) != 1 || !strings.Contains(res[0], "could not be reached") {
		t.Errorf("gone server's result fed to the model: %v", res)
	}
}
