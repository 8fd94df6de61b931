package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/agent"
	"github.com/parley/parley/db"
)

// Tool limits chosen here and documented in the OpenAPI document.
const (
	maxToolName          = 100
	maxToolDescription   = 1000
	maxToolWebhookSecret = 255
)

// toolBody is the JSON of a tool create or PATCH.
type toolBody struct {
	Name          parley.Opt[string]          `json:"name"`
	Description   parley.Opt[string]          `json:"description"`
	Type          parley.Opt[string]          `json:"type"`
	Config        parley.Opt[json.RawMessage] `json:"config"`
	SegmentID     parley.Opt[string]          `json:"segmentId"`
	IsActive      parley.Opt[bool]            `json:"isActive"`
	Position      parley.Opt[float64]         `json:"position"`
	WebhookURL    parley.Opt[string]          `json:"webhookUrl"`
	WebhookSecret parley.Opt[string]          `json:"webhookSecret"`
}

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

// decodeTool validates a tool body against cur (nil when creating) and returns the write.
func (h *Handler) decodeTool(c echo.Context, cur *parley.Tool) (db.ToolWrite, error) {
	raw, err := decodeObject(c, maxJSONBody)
	if err != nil {
		return db.ToolWrite{}, err
	}
	var b toolBody
	errs := decodeFields(raw, &b)
	return h.validateTool(c.Request().Context(), tenantFrom(c).ID, b, errs, cur)
}

// validateTool checks a decoded tool body against cur (nil when creating),
// adding to errs those found while decoding, and returns the write. The API
// and the dashboard both save tools through it.
func (h *Handler) validateTool(ctx context.Context, tenantID string, b toolBody, errs parley.FieldErrors, cur *parley.Tool) (db.ToolWrite, error) {
	creating := cur == nil
	parley.NullIfEmpty(&b.WebhookURL)
	text := func(field string, o *parley.Opt[string], max int) {
		if creating && !o.Set {
			errs.Add(field, "is required")
			return
		}
		if parley.NotNull(errs, field, *o) {
			o.Value = strings.TrimSpace(o.Value)
			if o.Value == "" {
				errs.Add(field, "must not be empty")
			}
			parley.CheckLen(errs, field, *o, max)
		}
	}
	text("name", &b.Name, maxToolName)
	text("description", &b.Description, maxToolDescription)

	typ := ""
	if cur != nil {
		typ = cur.Type
	}
	if creating && !b.Type.Set {
		errs.Add("type", "is required; one of "+strings.Join(agent.UserToolTypes, ", "))
	} else if b.Type.Set {
		switch {
		case b.Type.Null:
			errs.Add("type", "must not be null")
		case slices.Contains(agent.SyntheticToolTypes, b.Type.Value):
			errs.Add("type", fmt.Sprintf("%s is injected automatically at chat time and cannot be created or changed; allowed types: %s",
				b.Type.Value, strings.Join(agent.UserToolTypes, ", ")))
		case !slices.Contains(agent.UserToolTypes, b.Type.Value):
			errs.Add("type", "must be one of "+strings.Join(agent.UserToolTypes, ", "))
		default:
			typ = b.Type.Value
		}
	}
	w := db.ToolWrite{Name: b.Name, Description: b.Description, Type: b.Type, IsActive: b.IsActive, Position: b.Position, WebhookURL: b.WebhookURL}
	if typ != "" && errs["type"] == "" {
		// The config is validated whenever it or the type changes.
		cfg := b.Config.Value
		if !b.Config.Set && cur != nil {
			cfg = cur.Config
		}
		if b.Config.Set || b.Type.Set || creating {
			norm, problems := agent.ValidateToolConfig(typ, cfg)
			if len(problems) > 0 {
				errs.Add("config", strings.Join(problems, "; "))
			} else {
				w.Config = parley.Some(norm)
			}
		}
	}
	parley.NotNull(errs, "isActive", b.IsActive)
	if parley.NotNull(errs, "position", b.Position) && (b.Position.Value < -1e9 || b.Position.Value > 1e9) {
		errs.Add("position", "must be between -1000000000 and 1000000000")
	}
	if b.WebhookURL.Set && !b.WebhookURL.Null {
		if typ != agent.ToolEscalateToHuman {
			errs.Add("webhookUrl", "only ESCALATE_TO_HUMAN tools call a webhook")
		}
		// https, as every outgoing call, except to a host the operator
		// exempted (PARLEY_SSRF_ALLOW), as for webhook endpoints.
		parley.CheckHTTPURL(errs, "webhookUrl", b.WebhookURL, false)
		if u, err := url.Parse(b.WebhookURL.Value); err == nil && u.Scheme == "http" && u.Host != "" && h.plainHTTPRefused(ctx, u, b.WebhookURL.Value) {
			errs.Add("webhookUrl", "must use https")
		}
		h.checkOutboundURL(ctx, errs, "webhookUrl", b.WebhookURL.Value)
	}
	if b.WebhookSecret.Set {
		switch {
		case b.WebhookSecret.Null || b.WebhookSecret.Value == "":
			w.WebhookSecret = parley.Opt[[]byte]{Set: true, Null: true}
		case utf8.RuneCountInString(b.WebhookSecret.Value) > maxToolWebhookSecret:
			errs.Add("webhookSecret", parley.TooLong(maxToolWebhookSecret))
		case typ != agent.ToolEscalateToHuman:
			errs.Add("webhookSecret", "only ESCALATE_TO_HUMAN tools sign a webhook")
		default:
			w.WebhookSecret = parley.Some(h.Box.Seal([]byte(b.WebhookSecret.Value)))
		}
	}
	if b.SegmentID.Set {
		if b.SegmentID.Null || b.SegmentID.Value == "" {
			w.SegmentID = parley.Opt[string]{Set: true, Null: true}
		} else if s, err := h.DB.Segment(ctx, tenantID, b.SegmentID.Value); err != nil {
			errs.Add("segmentId", fmt.Sprintf("no segment with id or slug %q", b.SegmentID.Value))
		} else {
			w.SegmentID = parley.Some(s.ID)
		}
	}
	return w, errs.Err()
}

// ListTools answers GET /tenants/{slug}/tools: a bare array, lowest position first.
func (h *Handler) ListTools(c echo.Context) error {
	tools, err := h.DB.ListTools(c.Request().Context(), tenantFrom(c).ID)
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
	t, err := h.DB.Tool(c.Request().Context(), tenantFrom(c).ID, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newToolJSON(t))
}

// CreateTool answers POST /tenants/{slug}/tools: only user-configurable types.
func (h *Handler) CreateTool(c echo.Context) error {
	w, err := h.decodeTool(c, nil)
	if err != nil {
		return err
	}
	t, err := h.DB.CreateTool(c.Request().Context(), tenantFrom(c).ID, w)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, newToolJSON(t))
}

// UpdateTool answers PATCH /tenants/{slug}/tools/{id}: any subset of the create fields.
func (h *Handler) UpdateTool(c echo.Context) error {
	raw, err := decodeObject(c, maxJSONBody)
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
// PATCH and the MCP tool update_tool.
func (h *Handler) updateTool(ctx context.Context, tenantID, id string, raw map[string]json.RawMessage) (parley.Tool, error) {
	cur, err := h.DB.Tool(ctx, tenantID, id)
	if err != nil {
		return parley.Tool{}, err
	}
	var b toolBody
	errs := decodeFields(raw, &b)
	w, err := h.validateTool(ctx, tenantID, b, errs, &cur)
	if err != nil {
		return parley.Tool{}, err
	}
	if w.Type.Set && w.Type.Value != agent.ToolEscalateToHuman && cur.Type == agent.ToolEscalateToHuman {
		w.WebhookURL = parley.Opt[string]{Set: true, Null: true} // a webhook only belongs to escalation
		w.WebhookSecret = parley.Opt[[]byte]{Set: true, Null: true}
	}
	return h.DB.UpdateTool(ctx, cur.TenantID, cur.ID, w)
}

// DeleteTool answers DELETE /tenants/{slug}/tools/{id}.
func (h *Handler) DeleteTool(c echo.Context) error {
	return deleteOne(c, "id", h.DB.DeleteTool)
}
