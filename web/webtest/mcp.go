package webtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HeaderTransport sets one header on every request.
type HeaderTransport struct {
	Name, Value string
	Base        http.RoundTripper
}

func (h HeaderTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set(h.Name, h.Value)
	return h.Base.RoundTrip(req)
}

// MCPClient connects the official SDK's client to /mcp with token, through
// the test server's client (which checks every exchange against openapi.json).
func (b *Bundle) MCPClient(t *testing.T, token string) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: HeaderTransport{Name: "Authorization", Value: "Bearer " + token, Base: b.TS.Client().Transport}}
	client := mcp.NewClient(&mcp.Implementation{Name: "parley-test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: b.TS.URL + "/mcp", HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connecting to /mcp: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// CallTool calls a tool and returns its JSON answer (the error body when
// isError) and whether it is an error.
func CallTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d contents", name, len(res.Content))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("%s: content %T", name, res.Content[0])
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(text.Text), &out); err != nil {
		t.Fatalf("%s: text %q is not a JSON object", name, text.Text)
	}
	return out, res.IsError
}

// MustCall is CallTool for a call that must succeed.
func MustCall(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	out, isErr := CallTool(t, cs, name, args)
	if isErr {
		t.Fatalf("%s(%v): tool error %v", name, args, out)
	}
	return out
}

func ToolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// TenantMCP is a tenant's own MCP server in tests: the SDK's server over
// Streamable HTTP on an httptest listener, counting its sessions opened
// (initialize) and tools/list calls and keeping the Authorization header of
// each request.
type TenantMCP struct {
	URL     string
	Inits   atomic.Int32
	Lists   atomic.Int32
	calls   atomic.Int32
	release chan struct{} // closed at the end of the test: slow tools return
	mu      sync.Mutex
	auth    []string
	// SlowList makes tools/list wait until release.
	SlowList atomic.Bool
	TS       *httptest.Server
}

// NewTenantMCP serves tools: get_weather (answers "Sunny in <city>"),
// fail (answers isError), slow (waits for release), "Weird tool.name!" and
// "get_weather!" (same function name as get_weather once sanitized), then
// extra tools named extra_1...extra_n. The SDK lists them by name.
func NewTenantMCP(t *testing.T, extra int) *TenantMCP {
	t.Helper()
	m := &TenantMCP{release: make(chan struct{})}
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
	m.TS = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		m.mu.Lock()
		m.auth = append(m.auth, r.Header.Get("Authorization"))
		m.mu.Unlock()
		switch {
		case bytes.Contains(body, []byte(`"initialize"`)): // not notifications/initialized
			m.Inits.Add(1)
		case bytes.Contains(body, []byte(`"tools/list"`)):
			m.Lists.Add(1)
			if m.SlowList.Load() {
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
	t.Cleanup(m.TS.Close)
	t.Cleanup(func() { close(m.release) }) // runs first: handlers return, then the listener closes
	m.URL = m.TS.URL + "/mcp"
	return m
}

// AuthHeaders returns the Authorization headers received so far.
func (m *TenantMCP) AuthHeaders() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.auth)
}

// SetMCP saves the tenant's MCP settings directly: the API takes https URLs
// only, and the test server speaks http on the loopback.
func (b *Bundle) SetMCP(t *testing.T, tenantID, url, key string, maxTools int) {
	t.Helper()
	var sealed []byte
	if key != "" {
		sealed = b.Box.Seal([]byte(key))
	}
	b.Exec(t, `UPDATE tenants SET mcp_tools_url = $2, mcp_tools_api_key = $3, mcp_tools_max_tools = $4 WHERE id = $1`,
		tenantID, url, sealed, maxTools)
}

// MCPToolRows are the tool history rows of a conversation: name, type,
// input and result as text.
func (b *Bundle) MCPToolRows(t *testing.T, conversationID any) [][4]string {
	t.Helper()
	rows, err := b.DB.Pool().Query(t.Context(), `SELECT tool_name, tool_type, input::text, result::text FROM tool_history
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
