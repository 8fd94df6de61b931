package db

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// Conditional writes of the settings-like resources (HTTP If-Match): the
// surface puts the client's entity tags in the context, the store checks
// them against the stored representation in the write's transaction
// (pgbase.WriteIfMatch).

// WithIfMatch returns ctx carrying the entity tags of an If-Match header:
// the writes of the settings-like resources under it happen only when the
// stored representation still has one of those tags, and fail with
// parley.KindPreconditionFailed otherwise. No tags: unconditional writes.
func WithIfMatch(ctx context.Context, tags []string) context.Context {
	return pgbase.WithIfMatch(ctx, tags)
}

// CheckIfMatch is nil when ctx carries no If-Match or etag is one of its
// tags, a precondition-failed error otherwise: a surface checks early,
// before work that would be wasted (the store checks again as it writes).
func CheckIfMatch(ctx context.Context, etag string) error { return pgbase.CheckIfMatch(ctx, etag) }

// TenantETag is the ETag of the tenant's stored settings
// (GET and PUT /tenants/{slug}, PUT /tenants/{slug}/voice/setup): its row,
// but for its configuration version, which also moves with its knowledge
// base, tools and connectors (resources of their own).
func TenantETag(t parley.Tenant) string {
	t.ConfigVersion = 0
	return pgbase.ETag(t)
}

// lockedTenantETag reads TenantETag of the tenant's row, locked until tx ends.
func lockedTenantETag(ctx context.Context, tenantID string) func(pgx.Tx) (string, error) {
	return func(tx pgx.Tx) (string, error) {
		rows, _ := tx.Query(ctx, `SELECT `+tenantColumns+` FROM tenants WHERE id = $1 FOR UPDATE`, tenantID)
		t, err := pgx.CollectExactlyOneRow(rows, scanTenant)
		if err != nil {
			return "", pgbase.NotFound(err, "Tenant")
		}
		return TenantETag(t), nil
	}
}

// ETag is the ETag of the MCP server settings of a tenant on plan (GET and
// PUT /tenants/{slug}/mcp-tools, whose answer names the plan).
func (s MCPSettings) ETag(plan string) string {
	return pgbase.ETag(struct {
		Settings MCPSettings
		Plan     string
	}{s, plan})
}

// lockedMCPETag reads the MCP settings' ETag, the tenant's row locked
// until tx ends.
func lockedMCPETag(ctx context.Context, tenantID string) func(pgx.Tx) (string, error) {
	return func(tx pgx.Tx) (string, error) {
		var s MCPSettings
		var plan string
		err := tx.QueryRow(ctx, `SELECT mcp_tools_url, mcp_tools_api_key, mcp_tools_max_tools, plan
			FROM tenants WHERE id = $1 FOR UPDATE`, tenantID).Scan(&s.URL, &s.SealedAPIKey, &s.MaxTools, &plan)
		if err != nil {
			return "", pgbase.NotFound(err, "Tenant")
		}
		return s.ETag(plan), nil
	}
}
