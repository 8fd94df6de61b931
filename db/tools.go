package db

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

const toolColumns = `t.id, t.tenant_id, t.segment_id, s.slug AS segment_slug, t.name, t.description, t.type,
	t.config, t.is_active, t.position, t.webhook_url, t.webhook_secret, t.created_at, t.updated_at`

const toolFrom = ` FROM tools t LEFT JOIN segments s ON s.id = t.segment_id `

// ToolWrite is a tool create or partial update; Config is already validated
// for Type, WebhookSecret already sealed.
type ToolWrite struct {
	Name          parley.Opt[string]
	Description   parley.Opt[string]
	Type          parley.Opt[string]
	Config        parley.Opt[json.RawMessage]
	SegmentID     parley.Opt[string]
	IsActive      parley.Opt[bool]
	Position      parley.Opt[float64]
	WebhookURL    parley.Opt[string]
	WebhookSecret parley.Opt[[]byte]
}

func toolNameConflict(err error, name string) error {
	if pgbase.IsUniqueViolation(err, "tools_name") {
		return &parley.Error{Kind: parley.KindConflict, Message: fmt.Sprintf("A tool named %q already exists", name),
			Details: map[string]string{"name": "already used by another tool"}}
	}
	return nil
}

// ListTools lists the tenant's tools, lowest position first.
func (d *DB) ListTools(ctx context.Context, tenantID string) ([]parley.Tool, error) {
	rows, _ := d.pool.Query(ctx, `SELECT `+toolColumns+toolFrom+` WHERE t.tenant_id = $1 ORDER BY t.position, t.created_at, t.id`, tenantID)
	tools, err := pgx.CollectRows(rows, pgx.RowToStructByName[parley.Tool])
	if err != nil {
		return nil, fmt.Errorf("listing tools: %w", err)
	}
	return tools, nil
}

// Tool returns one of the tenant's tools.
func (d *DB) Tool(ctx context.Context, tenantID, id string) (parley.Tool, error) {
	return tool(ctx, d.pool, tenantID, id)
}

func tool(ctx context.Context, q pgbase.Querier, tenantID, id string) (parley.Tool, error) {
	if !pgbase.LooksLikeUUID(id) {
		return parley.Tool{}, parley.Errorf(parley.KindNotFound, "Tool not found")
	}
	rows, _ := q.Query(ctx, `SELECT `+toolColumns+toolFrom+` WHERE t.tenant_id = $1 AND t.id = $2`, tenantID, id)
	t, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.Tool])
	if err != nil {
		return parley.Tool{}, pgbase.NotFound(err, "Tool")
	}
	return t, nil
}

// CreateTool stores a new tool.
func (d *DB) CreateTool(ctx context.Context, tenantID string, w ToolWrite) (parley.Tool, error) {
	active := true
	if w.IsActive.Set {
		active = w.IsActive.Value
	}
	config := w.Config.Value
	if config == nil {
		config = json.RawMessage("{}")
	}
	var id string
	err := d.pool.QueryRow(ctx, `INSERT INTO tools (tenant_id, segment_id, name, description, type, config, is_active,
		position, webhook_url, webhook_secret) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
		tenantID, w.SegmentID.Ptr(), w.Name.Value, w.Description.Value, w.Type.Value, config, active,
		w.Position.Value, w.WebhookURL.Ptr(), w.WebhookSecret.Ptr()).Scan(&id)
	if e := toolNameConflict(err, w.Name.Value); e != nil {
		return parley.Tool{}, e
	}
	if err != nil {
		return parley.Tool{}, fmt.Errorf("inserting tool: %w", err)
	}
	return d.Tool(ctx, tenantID, id)
}

// UpdateTool applies a partial update.
func (d *DB) UpdateTool(ctx context.Context, tenantID, id string, w ToolWrite) (parley.Tool, error) {
	if !pgbase.LooksLikeUUID(id) {
		return parley.Tool{}, parley.Errorf(parley.KindNotFound, "Tool not found")
	}
	var sets []pgbase.SetClause
	sets = pgbase.AddSet(sets, "name", w.Name)
	sets = pgbase.AddSet(sets, "description", w.Description)
	sets = pgbase.AddSet(sets, "type", w.Type)
	if w.Config.Set {
		cfg := w.Config.Value
		if cfg == nil {
			cfg = json.RawMessage("{}")
		}
		sets = append(sets, pgbase.SetClause{Column: "config", Value: cfg})
	}
	sets = pgbase.AddSet(sets, "segment_id", w.SegmentID)
	sets = pgbase.AddSet(sets, "is_active", w.IsActive)
	sets = pgbase.AddSet(sets, "position", w.Position)
	sets = pgbase.AddSet(sets, "webhook_url", w.WebhookURL)
	sets = pgbase.AddSet(sets, "webhook_secret", w.WebhookSecret)
	err := pgbase.UpdateTenantRow(ctx, d.pool, "tools", "Tool", tenantID, id, sets)
	if e := toolNameConflict(err, w.Name.Value); e != nil {
		return parley.Tool{}, e
	}
	if err != nil {
		return parley.Tool{}, fmt.Errorf("updating tool: %w", err)
	}
	return d.Tool(ctx, tenantID, id)
}

// DeleteTool deletes one of the tenant's tools.
func (d *DB) DeleteTool(ctx context.Context, tenantID, id string) error {
	return pgbase.DeleteTenantRow(ctx, d.pool, "tools", "Tool", tenantID, id)
}
