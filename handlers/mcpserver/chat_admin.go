package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/tools"
	"github.com/parley/parley/auth"
)

// adminToolPrefix starts the name the model sees of each management tool a
// chat turn offers, so that none collides with the tenant's own tools.
const adminToolPrefix = "admin_"

// AdminChatTools checks the admin token of a chat (X-Service-Admin-Token)
// and returns the management tools its scopes allow, as tools of the turn.
// The token is an OAuth access token of this server issued for the MCP
// resource ({base}/mcp), checked as /mcp checks it (signature, expiry,
// revocation) and for the chat's tenant; anything else is a 401. The tenant
// must be on a plan with MCP (402), and the token must grant an MCP scope
// (403), as at /mcp. Each tool runs through RunManageTool as the token's
// principal.
func (h *Handler) AdminChatTools(ctx context.Context, t parley.Tenant, token string) ([]tools.Extra, error) {
	refuse := func(reason string) error {
		return &parley.Error{Kind: parley.KindUnauthorized, Message: "Invalid admin token: " + reason}
	}
	if h.OAuth == nil {
		return nil, refuse("this server issues no admin tokens")
	}
	p, err := h.OAuth.VerifyAccessToken(ctx, token)
	if err != nil {
		if parley.ErrorKind(err) == parley.KindUnauthorized {
			var pe *parley.Error
			errors.As(err, &pe)
			return nil, refuse(pe.Message)
		}
		return nil, err
	}
	if !slices.Contains(p.Audiences, h.OAuth.MCPResource()) {
		return nil, refuse("it was issued for " + strings.Join(p.Audiences, " ") + ", not " + h.OAuth.MCPResource())
	}
	if p.TenantID != t.ID {
		return nil, refuse("it was issued for another tenant")
	}
	if !t.PlanInfo().MCP {
		return nil, parley.PlanRequired("Admin tokens in chat (Parley's MCP tools)", t.Plan, "builder")
	}
	granted := auth.MCPScopesOf(p)
	if len(granted) == 0 {
		return nil, &parley.Error{Kind: parley.KindForbidden, Message: "This admin token grants none of the MCP scopes: " + strings.Join(auth.MCPScopes, " "),
			Details: map[string]any{"requiredScope": auth.MCPScopes}}
	}
	all := h.ManageTools()
	var out []tools.Extra
	for _, tool := range all {
		if !slices.Contains(granted, tool.Scope) {
			continue
		}
		params, err := json.Marshal(tool.Input)
		if err != nil {
			return nil, err
		}
		name := tool.Name
		out = append(out, tools.Extra{Name: adminToolPrefix + name, Type: parley.AdminToolType, Parameters: params,
			Description: "Site owner only (admin token): " + tool.Description,
			Run: func(ctx context.Context, args json.RawMessage) (any, error) {
				return RunManageTool(ctx, all, t, p, name, args)
			}})
	}
	return out, nil
}
