package handlers

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
)

// segmentSummaryJSON is a list item: no systemPrompt, with counts.
type segmentSummaryJSON struct {
	ID                   string             `json:"id"`
	Slug                 string             `json:"slug"`
	Name                 string             `json:"name"`
	WelcomeMessage       *string            `json:"welcomeMessage"`
	ConversationStarters []parley.Starter   `json:"conversationStarters"`
	FormConfig           *parley.FormConfig `json:"formConfig"`
	IsDefault            bool               `json:"isDefault"`
	IsActive             bool               `json:"isActive"`
	CorpusCount          int                `json:"corpusCount"`
	ConversationsCount   int                `json:"conversationsCount"`
	CreatedAt            time.Time          `json:"createdAt"`
	UpdatedAt            time.Time          `json:"updatedAt"`
}

// segmentInput decodes the fields of a segment write: the REST body or an
// MCP tool's arguments.
func segmentInput(raw map[string]json.RawMessage) parley.SegmentInput {
	var in parley.SegmentInput
	in.Problems = DecodeFields(raw, &in)
	return in
}

func decodeSegment(c echo.Context) (parley.SegmentInput, error) {
	raw, err := DecodeObject(c, MaxJSONBody)
	if err != nil {
		return parley.SegmentInput{}, err
	}
	return segmentInput(raw), nil
}

// ListSegments answers GET /tenants/{slug}/segments: a bare array without system prompts.
func (h *Handler) ListSegments(c echo.Context) error {
	out, err := h.segmentSummaries(c.Request().Context(), tenantFrom(c).ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

// ShowSegment answers GET /tenants/{slug}/segments/{id} (id or slug).
func (h *Handler) ShowSegment(c echo.Context) error {
	s, err := h.Manage.Segment(c.Request().Context(), tenantFrom(c).ID, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, s)
}

// CreateSegment answers POST /tenants/{slug}/segments.
func (h *Handler) CreateSegment(c echo.Context) error {
	in, err := decodeSegment(c)
	if err != nil {
		return err
	}
	s, err := h.Manage.CreateSegment(c.Request().Context(), tenantFrom(c), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, s)
}

// UpdateSegment answers PUT (and PATCH) /tenants/{slug}/segments/{id}: only sent fields change.
func (h *Handler) UpdateSegment(c echo.Context) error {
	in, err := decodeSegment(c)
	if err != nil {
		return err
	}
	s, err := h.Manage.UpdateSegment(c.Request().Context(), tenantFrom(c).ID, c.Param("id"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, s)
}

// DeleteSegment answers DELETE /tenants/{slug}/segments/{id}[?cascade=true].
func (h *Handler) DeleteSegment(c echo.Context) error {
	cascade := false
	if v := c.QueryParam("cascade"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return Invalid("cascade must be true or false")
		}
		cascade = b
	}
	del, err := h.Manage.DeleteSegment(c.Request().Context(), tenantFrom(c).ID, c.Param("id"), cascade)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"deleted": true, "id": del.ID, "corpusEntriesDeleted": del.CorpusEntriesDeleted, "toolsDeleted": del.ToolsDeleted})
}
