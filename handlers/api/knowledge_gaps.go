package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/jsonbody"
	"github.com/parley/parley/handlers/resource"
	"github.com/parley/parley/manage"
)

// ListKnowledgeGaps answers GET /tenants/{slug}/knowledge-gaps: the
// questions the assistant could not answer well, grouped by wording, the
// most asked first, in the window (from, to; the last 30 days by
// default), channel and segment asked for, the groups of state (open by
// default), one page.
func (h *Knowledge) ListKnowledgeGaps(c echo.Context) error {
	l := manage.NewGapListing()
	handlers.QueryInt(c, "page", &l.Page)
	handlers.QueryInt(c, "limit", &l.Limit)
	l.Scope = parley.ConversationScope{From: c.QueryParam("from"), To: c.QueryParam("to"), Channel: c.QueryParam("channel"),
		Segment: c.QueryParam("segment"), Location: time.UTC}
	if s := c.QueryParam("state"); s != "" {
		l.State = s
	}
	page, err := h.Manage.ListKnowledgeGaps(c.Request().Context(), handlers.TenantFrom(c).ID, l, h.Clock())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, resource.NewKnowledgeGapListJSON(l, page))
}

// MarkKnowledgeGap answers POST /tenants/{slug}/knowledge-gaps/state:
// body {key, state, entryId}. The group of key is answered (by the entry,
// optional), dismissed, or open again.
func (h *Knowledge) MarkKnowledgeGap(c echo.Context) error {
	raw, err := jsonbody.DecodeObject(c, jsonbody.MaxJSONBody)
	if err != nil {
		return err
	}
	var m manage.GapMark
	m.Problems = jsonbody.DecodeFields(raw, &m)
	if err := h.Manage.MarkKnowledgeGap(c.Request().Context(), handlers.TenantFrom(c).ID, m); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, resource.NewKnowledgeGapStateJSON(m))
}
