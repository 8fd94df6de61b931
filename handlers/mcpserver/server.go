// Package mcpserver is Parley's own MCP server (Streamable HTTP at /mcp):
// the management operations as tools (tools.go), each behind its scope, for
// an API token or an OAuth access token issued for the MCP resource. The
// same tools serve a chat whose visitor carries an admin token
// (chat_admin.go), as the chat's extra tools.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/jsonbody"
	"github.com/parley/parley/manage"
)

// Handler serves the MCP server and its tools.
type Handler struct {
	*handlers.Runtime
	DB *db.DB
	// Manage runs the tools' operations.
	Manage *manage.Service
	// OAuth verifies the admin tokens of chats (AdminChatTools).
	OAuth *auth.OAuth
}

// maxMCPBody bounds an MCP request body, as maxJSONBody bounds a REST one.
const maxMCPBody = jsonbody.MaxJSONBody

// mcpCaller is who an MCP request acts as, handed from the Echo handler to
// the SDK's per-request server through the request's context.
type mcpCaller struct {
	tenant    parley.Tenant
	principal auth.Principal
	logger    *slog.Logger
}

type mcpCallerKey struct{}

// MCPResourceMetadata is the address of the RFC 9728 protected-resource
// metadata of the MCP server, which a 401 names.
func MCPResourceMetadata(baseURL string) string {
	return baseURL + "/.well-known/oauth-protected-resource" + handlers.MCPPath
}

// NewServer returns the handler of /mcp: Parley's own MCP server over the
// Streamable HTTP transport, stateless (each POST is answered on its own, by
// whichever instance gets it; GET and DELETE answer 405), answering JSON.
// The web middleware authenticated the request and set its tenant and
// principal; this refuses a plan without MCP (402 PLAN_REQUIRED) and a
// credential without any mcp:* scope (403 insufficient_scope), then hands
// the request, with its caller in the context, to the one SDK server.
func (h *Handler) NewServer() echo.HandlerFunc {
	// Built on the first MCP request rather than with the routes: about
	// forty tools' schemas are marshalled once, by a server that serves
	// MCP, and by none of the test servers that do not (7 ms each under
	// the race detector, 1.9 s of the web tests' CPU).
	streamable := sync.OnceValue(func() *mcp.StreamableHTTPHandler {
		server := newMCPServer(h.ManageTools(), h.recordRefusal)
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{
			Stateless:    true,
			JSONResponse: true,
			// Every request carries a bearer credential, so a page in a
			// browser (DNS rebinding, cross-origin posts) cannot act with
			// it; the check would refuse a reverse proxy on the same host.
			DisableLocalhostProtection: true,
			MaxRequestBodyBytes:        maxMCPBody,
		})
	})
	return func(c echo.Context) error {
		t, p := handlers.TenantFrom(c), principalFrom(c)
		if !t.PlanInfo().MCP {
			return parley.PlanRequired("Parley's MCP server and its tools", t.Plan, "builder")
		}
		if len(auth.MCPScopesOf(p)) == 0 {
			scopes := strings.Join(auth.MCPScopes, " ")
			c.Response().Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+scopes+`", resource_metadata="`+MCPResourceMetadata(h.BaseURL)+`"`)
			return &parley.Error{Kind: parley.KindForbidden, Message: "This token grants none of the MCP scopes: " + scopes,
				Details: map[string]any{"requiredScope": auth.MCPScopes}}
		}
		req := c.Request()
		ctx := context.WithValue(req.Context(), mcpCallerKey{}, mcpCaller{tenant: t, principal: p, logger: h.Log(c)})
		streamable().ServeHTTP(c.Response(), req.WithContext(ctx))
		return nil
	}
}

func principalFrom(c echo.Context) auth.Principal {
	p, _ := handlers.PrincipalOf(c)
	return p
}

// newMCPServer is the MCP server: every management tool, run for the
// caller the request's context carries. It is built once: the SDK turns
// each tool's schema over at AddTool, and a server per request made a call
// take 10.5 ms instead of 2.0 (BenchmarkMCPToolCall). tools/list
// keeps the tools the caller's scopes allow; a call of another answers a
// tool error naming the scope it lacks, and is refused (the audit log's
// entry).
func newMCPServer(tools []ManageTool, refused func(ctx context.Context, t parley.Tenant, p auth.Principal, tool string, err error)) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "parley", Title: "Parley", Version: "2.1.0"}, &mcp.ServerOptions{
		Instructions: "Manage this Parley tenant's assistant: its knowledge base (corpus), segments, tools and persona; " +
			"read its conversations, visitors, plan and usage. The tools listed are those the access token's scopes allow.",
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		// tools/list depends on the token's scopes: no cache may share it
		// between callers (2026-07-28's cacheScope; "public" by default).
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) { c.CacheScope = "private" },
	})
	for _, tool := range tools {
		destructive := tool.Destructive
		s.AddTool(&mcp.Tool{Name: tool.Name, Description: tool.Description + " Needs the scope " + tool.Scope + ".",
			InputSchema: tool.Input,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: tool.ReadOnly, DestructiveHint: &destructive, OpenWorldHint: new(bool)},
		}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			caller, ok := ctx.Value(mcpCallerKey{}).(mcpCaller)
			if !ok {
				return nil, errors.New("mcp: a tool call without its caller")
			}
			res, err := RunManageTool(ctx, tools, caller.tenant, caller.principal, tool.Name, req.Params.Arguments)
			if parley.ErrorKind(err) == parley.KindForbidden {
				refused(ctx, caller.tenant, caller.principal, tool.Name, err)
			}
			return toolResult(caller.logger, tool.Name, res, err), nil
		})
	}
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if list, ok := res.(*mcp.ListToolsResult); ok && err == nil {
				caller, _ := ctx.Value(mcpCallerKey{}).(mcpCaller)
				granted := auth.MCPScopesOf(caller.principal)
				list.Tools = slices.DeleteFunc(slices.Clone(list.Tools), func(t *mcp.Tool) bool {
					i := slices.IndexFunc(tools, func(m ManageTool) bool { return m.Name == t.Name })
					return i < 0 || !slices.Contains(granted, tools[i].Scope)
				})
			}
			return res, err
		}
	})
	return s
}

// toolResult is a tool's answer: its JSON object as structured content and
// as text, or, for an error, the REST API's error body ({error, details?,
// code?}) as text with isError. An internal error is logged and shown as
// "Internal error", as the REST API does.
func toolResult(logger *slog.Logger, name string, res any, err error) *mcp.CallToolResult {
	if err != nil {
		body := map[string]any{"error": "Internal error"}
		var e *parley.Error
		if errors.As(err, &e) && e.Kind != parley.KindInternal {
			body["error"] = e.Message
			if e.Details != nil {
				body["details"] = e.Details
			}
			if e.Code != "" {
				body["code"] = e.Code
			}
		} else {
			logger.Error("mcp tool failed", "tool", name, "err", err)
		}
		text, _ := json.Marshal(body)
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}
	}
	text, err := json.Marshal(res)
	if err != nil {
		logger.Error("mcp tool result", "tool", name, "err", err)
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: `{"error":"Internal error"}`}}}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}, StructuredContent: json.RawMessage(text)}
}
