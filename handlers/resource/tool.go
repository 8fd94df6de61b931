package resource

import (
	"context"
	"encoding/json"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/handlers/jsonbody"
	"github.com/parley/parley/manage"
)

// ToolJSON is the API representation of a tool; the webhook secret never appears.
type ToolJSON struct {
	ID               string          `json:"id"`
	Name             string          `json:"name"`
	Description      string          `json:"description"`
	Type             string          `json:"type"`
	Config           json.RawMessage `json:"config"`
	Segment          *string         `json:"segment"`
	SegmentID        *string         `json:"segmentId"`
	IsActive         bool            `json:"isActive"`
	Position         float64         `json:"position"`
	WebhookURL       *string         `json:"webhookUrl"`
	HasWebhookSecret bool            `json:"hasWebhookSecret"`
	CreatedAt        time.Time       `json:"createdAt"`
	UpdatedAt        time.Time       `json:"updatedAt"`
}

func NewToolJSON(t parley.Tool) ToolJSON {
	return ToolJSON{ID: t.ID, Name: t.Name, Description: t.Description, Type: t.Type, Config: t.Config,
		Segment: t.SegmentSlug, SegmentID: t.SegmentID, IsActive: t.IsActive, Position: t.Position,
		WebhookURL: t.WebhookURL, HasWebhookSecret: t.WebhookSecret != nil, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
}

// ToolInputOf decodes the fields of a tool write: the REST body or an MCP
// tool's arguments.
func ToolInputOf(raw map[string]json.RawMessage) parley.ToolInput {
	var in parley.ToolInput
	in.Problems = jsonbody.DecodeFields(raw, &in)
	return in
}

// UpdateTool applies the fields of raw to the tenant's tool id through m: the REST
// PATCH and the MCP tool update_tool. An unknown tool is a 404 before the
// body's problems.
func UpdateTool(ctx context.Context, m *manage.Service, tenantID, id string, raw map[string]json.RawMessage) (parley.Tool, error) {
	cur, err := m.Tool(ctx, tenantID, id)
	if err != nil {
		return parley.Tool{}, err
	}
	return m.UpdateTool(ctx, cur, ToolInputOf(raw))
}
