package api

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/jsonbody"
	"github.com/parley/parley/handlers/resource"
)

func decodeSegment(c echo.Context) (parley.SegmentInput, error) {
	raw, err := jsonbody.DecodeObject(c, jsonbody.MaxJSONBody)
	if err != nil {
		return parley.SegmentInput{}, err
	}
	return resource.SegmentInputOf(raw), nil
}

// ListSegments answers GET /tenants/{slug}/segments: a bare array without system prompts.
func (h *Settings) ListSegments(c echo.Context) error {
	out, err := resource.SegmentSummaries(c.Request().Context(), h.DB, handlers.TenantFrom(c).ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

// ShowSegment answers GET /tenants/{slug}/segments/{id} (id or slug).
func (h *Settings) ShowSegment(c echo.Context) error {
	s, err := h.Manage.Segment(c.Request().Context(), handlers.TenantFrom(c).ID, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, s)
}

// CreateSegment answers POST /tenants/{slug}/segments.
func (h *Settings) CreateSegment(c echo.Context) error {
	in, err := decodeSegment(c)
	if err != nil {
		return err
	}
	s, err := h.Manage.CreateSegment(c.Request().Context(), handlers.TenantFrom(c), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, s)
}

// UpdateSegment answers PUT (and PATCH) /tenants/{slug}/segments/{id}: only sent fields change.
func (h *Settings) UpdateSegment(c echo.Context) error {
	in, err := decodeSegment(c)
	if err != nil {
		return err
	}
	s, err := h.Manage.UpdateSegment(c.Request().Context(), handlers.TenantFrom(c).ID, c.Param("id"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, s)
}

// DeleteSegment answers DELETE /tenants/{slug}/segments/{id}[?cascade=true].
func (h *Settings) DeleteSegment(c echo.Context) error {
	cascade := false
	if v := c.QueryParam("cascade"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return handlers.Invalid("cascade must be true or false")
		}
		cascade = b
	}
	del, err := h.Manage.DeleteSegment(c.Request().Context(), handlers.TenantFrom(c).ID, c.Param("id"), cascade)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, segmentDeletionJSON{Deleted: true, ID: del.ID, CorpusEntriesDeleted: del.CorpusEntriesDeleted,
		ToolsDeleted: del.ToolsDeleted})
}

// segmentDeletionJSON is what DELETE /tenants/{slug}/segments/{id} answers:
// the segment's id, and what went with it.
type segmentDeletionJSON struct {
	Deleted              bool   `json:"deleted"`
	ID                   string `json:"id"`
	CorpusEntriesDeleted int64  `json:"corpusEntriesDeleted"`
	ToolsDeleted         int64  `json:"toolsDeleted"`
}
