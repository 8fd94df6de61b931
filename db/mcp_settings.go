package db

import (
	"context"
	"fmt"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// MCPSettings is the tenant's external MCP server configuration; the API key stays sealed.
type MCPSettings struct {
	URL          *string
	SealedAPIKey []byte
	MaxTools     int
}

// MCPSettings reads the tenant's MCP tools configuration.
func (d *DB) MCPSettings(ctx context.Context, tenantID string) (MCPSettings, error) {
	var s MCPSettings
	err := d.pool.QueryRow(ctx, `SELECT mcp_tools_url, mcp_tools_api_key, mcp_tools_max_tools FROM tenants WHERE id = $1`, tenantID).
		Scan(&s.URL, &s.SealedAPIKey, &s.MaxTools)
	if err != nil {
		return s, pgbase.NotFound(err, "Tenant")
	}
	return s, nil
}

// SaveMCPSettings sets the URL and max tools; the key changes only when apiKey is set.
// Under an If-Match (WithIfMatch), only on the settings as the client read them.
func (d *DB) SaveMCPSettings(ctx context.Context, tenantID, url string, maxTools int, apiKey parley.Opt[[]byte]) (MCPSettings, error) {
	var s MCPSettings
	err := pgbase.WriteIfMatch(ctx, d.pool, lockedMCPETag(ctx, tenantID), func(q pgbase.Querier) error {
		return q.QueryRow(ctx, `UPDATE tenants SET mcp_tools_url = $2, mcp_tools_max_tools = $3,
			mcp_tools_api_key = CASE WHEN $4 THEN $5 ELSE mcp_tools_api_key END, updated_at = now()
			WHERE id = $1 RETURNING mcp_tools_url, mcp_tools_api_key, mcp_tools_max_tools`,
			tenantID, url, maxTools, apiKey.Set, apiKey.Ptr()).Scan(&s.URL, &s.SealedAPIKey, &s.MaxTools)
	})
	if err != nil {
		return s, fmt.Errorf("saving MCP settings: %w", err)
	}
	return s, nil
}

// ClearMCPSettings removes the configuration (URL and key; max tools back to 10).
func (d *DB) ClearMCPSettings(ctx context.Context, tenantID string) error {
	_, err := d.pool.Exec(ctx, `UPDATE tenants SET mcp_tools_url = NULL, mcp_tools_api_key = NULL,
		mcp_tools_max_tools = 10, updated_at = now() WHERE id = $1`, tenantID)
	if err != nil {
		return fmt.Errorf("clearing MCP settings: %w", err)
	}
	return nil
}
