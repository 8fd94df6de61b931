package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/resource"
)

// ShowConversationStats answers GET /tenants/{slug}/conversations/stats:
// the stats' query with window.
func (h *Leads) ShowConversationStats(c echo.Context) error {
	t := handlers.TenantFrom(c)
	l := handlers.StatsListingQuery(c, resource.TenantLocation(t))
	l.Window = c.QueryParam("window")
	q, st, err := h.Manage.ConversationStats(c.Request().Context(), t.ID, l, h.Clock())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, resource.NewConversationStatsJSON(l.Scope.Location, q, st))
}

// ExportConversationStats answers GET /tenants/{slug}/conversations/stats/export:
// one dataset of the stats as CSV or NDJSON. The rows are few (a year of
// days, or maxStatsExportRows): written at once.
func (h *Leads) ExportConversationStats(c echo.Context) error {
	return h.WriteStatsExport(c)
}
