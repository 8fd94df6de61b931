package api

import (
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/caldav"
	"github.com/parley/parley/db/business"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/jsonbody"
	"github.com/parley/parley/handlers/resource"
)

// The calendar connector: the tenant's calendar over CalDAV, which
// CHECK_AVAILABILITY reads and BOOK_MEETING writes. The API
// (/tenants/{slug}/integrations/calendar) and the dashboard
// (/admin/integrations/calendar) share its rules (parley.CalendarInput)
// and operations (manage); the live check of a save, CalDAV discovery, is
// discoverCalendar below.

// calendarJSON is the connector as the API shows it: the password never,
// only whether one is set.
type calendarJSON struct {
	Connected    bool               `json:"connected"`
	ServerURL    *string            `json:"serverUrl"`
	Username     *string            `json:"username"`
	HasPassword  bool               `json:"hasPassword"`
	CalendarURL  *string            `json:"calendarUrl"`
	CalendarName *string            `json:"calendarName"`
	OfficeHours  parley.OfficeHours `json:"officeHours"`
	Timezone     string             `json:"timezone"`
	UpdatedAt    *time.Time         `json:"updatedAt"`
}

func newCalendarJSON(t parley.Tenant, c *parley.CalendarConnector) calendarJSON {
	out := calendarJSON{OfficeHours: parley.DefaultOfficeHours(), Timezone: resource.TenantLocation(t).String()}
	if c == nil {
		return out
	}
	out.Connected, out.HasPassword = true, len(c.SealedPassword) > 0
	out.ServerURL, out.Username, out.CalendarURL = &c.ServerURL, &c.Username, &c.CalendarURL
	out.CalendarName, out.OfficeHours, out.UpdatedAt = &c.CalendarName, c.OfficeHours, &c.UpdatedAt
	return out
}

// ShowCalendarConnector answers GET /tenants/{slug}/integrations/calendar.
func (h *Tools) ShowCalendarConnector(c echo.Context) error {
	t := handlers.TenantFrom(c)
	cur, err := h.Manage.CalendarConnector(c.Request().Context(), t.ID)
	if err != nil {
		return err
	}
	// The answer also names the tenant's time zone: no 304.
	return handlers.JSONWithETag(c, http.StatusOK, business.CalendarETag(cur), newCalendarJSON(t, cur))
}

// UpdateCalendarConnector answers PUT /tenants/{slug}/integrations/calendar:
// it connects to the server and saves the connector once the calendar is
// found. An absent password keeps the stored one (same server only). Under
// an If-Match, only over the connector as the client read it (none: 412),
// checked before the server is asked.
func (h *Tools) UpdateCalendarConnector(c echo.Context) error {
	t := handlers.TenantFrom(c)
	ctx := handlers.Conditional(c)
	raw, err := jsonbody.DecodeObject(c, jsonbody.MaxJSONBody)
	if err != nil {
		return err
	}
	var b handlers.CalendarBody
	errs := jsonbody.DecodeFields(raw, &b)
	saved, err := h.Manage.SaveCalendarConnector(ctx, t.ID, b.Input(errs), h.DiscoverCalendar)
	if err != nil {
		return err
	}
	return handlers.JSONWithETag(c, http.StatusOK, business.CalendarETag(&saved), newCalendarJSON(t, &saved))
}

// DeleteCalendarConnector answers DELETE /tenants/{slug}/integrations/calendar:
// the credentials are deleted and the meeting tools are no longer offered.
func (h *Tools) DeleteCalendarConnector(c echo.Context) error {
	t := handlers.TenantFrom(c)
	if err := h.Manage.DeleteCalendarConnector(c.Request().Context(), t.ID); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"deleted": true})
}

// TestCalendarConnector answers POST /tenants/{slug}/integrations/calendar/test:
// it reads the calendar with the stored credentials and returns the next
// free slots; a server that fails is a 502 saying why.
func (h *Tools) TestCalendarConnector(c echo.Context) error {
	t := handlers.TenantFrom(c)
	ctx := c.Request().Context()
	cur, err := h.ConnectedCalendar(ctx, t.ID)
	if err != nil {
		return err
	}
	out, err := h.TestCalendar(ctx, t, cur)
	var ce *caldav.Error
	if errors.As(err, &ce) {
		h.Log(c).Warn("calendar connection test failed", "err", err)
		return &parley.Error{Kind: parley.KindUpstream, Code: "CALENDAR_UNAVAILABLE", Message: "The calendar could not be read: " + ce.Message}
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}
