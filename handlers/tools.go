package handlers

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
)

// toolJSON is the API representation of a tool; the webhook secret never appears.
type toolJSON struct {
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

func newToolJSON(t parley.Tool) toolJSON {
	return toolJSON{ID: t.ID, Name: t.Name, Description: t.Description, Type: t.Type, Config: t.Config,
		Segment: t.SegmentSlug, SegmentID: t.SegmentID, IsActive: t.IsActive, Position: t.Position,
		WebhookURL: t.WebhookURL, HasWebhookSecret: t.WebhookSecret != nil, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
}

// toolInput decodes the fields of a tool write: the REST body or an MCP
// tool's arguments.
func toolInput(raw map[string]json.RawMessage) parley.ToolInput {
	var in parley.ToolInput
	in.Problems = DecodeFields(raw, &in)
	return in
}

// ListTools answers GET /tenants/{slug}/tools: a bare array, lowest position first.
func (h *Handler) ListTools(c echo.Context) error {
	tools, err := h.Manage.ListTools(c.Request().Context(), tenantFrom(c).ID)
	if err != nil {
		return err
	}
	out := make([]toolJSON, len(tools))
	for i, t := range tools {
		out[i] = newToolJSON(t)
	}
	return c.JSON(http.StatusOK, out)
}

// ShowTool answers GET /tenants/{slug}/tools/{id}.
func (h *Handler) ShowTool(c echo.Context) error {
	t, err := h.Manage.Tool(c.Request().Context(), tenantFrom(c).ID, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newToolJSON(t))
}

// CreateTool answers POST /tenants/{slug}/tools: only user-configurable types.
func (h *Handler) CreateTool(c echo.Context) error {
	raw, err := DecodeObject(c, MaxJSONBody)
	if err != nil {
		return err
	}
	t, err := h.Manage.CreateTool(c.Request().Context(), tenantFrom(c).ID, toolInput(raw))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, newToolJSON(t))
}

// UpdateTool answers PATCH /tenants/{slug}/tools/{id}: any subset of the create fields.
func (h *Handler) UpdateTool(c echo.Context) error {
	raw, err := DecodeObject(c, MaxJSONBody)
	if err != nil {
		return err
	}
	t, err := h.updateTool(c.Request().Context(), tenantFrom(c).ID, c.Param("id"), raw)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newToolJSON(t))
}

// updateTool applies the fields of raw to the tenant's tool id: the REST
// PATCH and the MCP tool update_tool. An unknown tool is a 404 before the
// body's problems.
func (h *Handler) updateTool(ctx context.Context, tenantID, id string, raw map[string]json.RawMessage) (parley.Tool, error) {
	cur, err := h.Manage.Tool(ctx, tenantID, id)
	if err != nil {
		return parley.Tool{}, err
	}
	return h.Manage.UpdateTool(ctx, cur, toolInput(raw))
}

// DeleteTool answers DELETE /tenants/{slug}/tools/{id}.
func (h *Handler) DeleteTool(c echo.Context) error {
	return deleteOne(c, "id", h.Manage.DeleteTool)
}
