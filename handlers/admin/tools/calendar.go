package tools

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/caldav"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/handlers/resource"
	"github.com/parley/parley/views"
)

const calendarPagePath = "/admin/integrations/calendar"

// calendarForm is the page's model of the stored connector (nil: none).
func calendarForm(t parley.Tenant, c *parley.CalendarConnector) views.CalendarForm {
	f := views.CalendarForm{Timezone: resource.TenantLocation(t).String()}
	hours := parley.DefaultOfficeHours()
	if c != nil {
		f.Connected, f.ServerURL, f.Username, f.HasPassword = true, c.ServerURL, c.Username, len(c.SealedPassword) > 0
		f.CalendarURL, f.CalendarName, hours = c.CalendarURL, c.CalendarName, c.OfficeHours
	}
	f.Days = calendarDays(hours)
	return f
}

// calendarDays lays the office hours out as the form's rows, closed days
// showing the usual hours to start from.
func calendarDays(hours parley.OfficeHours) []views.CalendarDay {
	days := make([]views.CalendarDay, len(parley.Weekdays))
	for i, key := range parley.Weekdays {
		d := views.CalendarDay{Key: key, Label: dayLabel(key), Start: "09:00", End: "17:00"}
		if h, open := hours[key]; open {
			d.Open, d.Start, d.End = true, h.Start, h.End
		}
		days[i] = d
	}
	return days
}

// dayLabel is a weekday key as the form shows it: "monday" → "Monday".
func dayLabel(key string) string { return strings.ToUpper(key[:1]) + key[1:] }

func (h *Tools) renderCalendar(c echo.Context, status int, f views.CalendarForm) error {
	return handlers.Render(c, status, views.CalendarPage(dash.Page(c, h.Sessions, "Calendar", "integrations"), f))
}

// ShowCalendarPage renders the calendar connector's form.
func (h *Tools) ShowCalendarPage(c echo.Context) error {
	t := dash.AdminFrom(c).Tenant
	cur, err := h.Manage.CalendarConnector(c.Request().Context(), t.ID)
	if err != nil {
		return err
	}
	return h.renderCalendar(c, http.StatusOK, calendarForm(t, cur))
}

// SaveCalendarConnector connects the calendar with the API's rules (the
// server is asked for the calendar before anything is stored), or
// re-renders the form with the errors.
func (h *Tools) SaveCalendarConnector(c echo.Context) error {
	t := dash.AdminFrom(c).Tenant
	ctx := c.Request().Context()
	cur, err := h.Manage.CalendarConnector(ctx, t.ID)
	if err != nil {
		return err
	}
	form, err := c.FormParams()
	if err != nil {
		return handlers.Invalid("Could not read the form")
	}
	b, days := calendarFormBody(form)
	f := calendarForm(t, cur)
	f.ServerURL, f.Username, f.CalendarURL, f.Days = b.ServerURL.Value, b.Username.Value, b.CalendarURL.Value, days
	_, err = h.Manage.SaveCalendarConnector(ctx, t.ID, b.Input(nil), h.DiscoverCalendar)
	if status, ferrs, _, ok := dash.FormStatus(err); ok && len(ferrs) > 0 {
		f.Errors = ferrs
		return h.renderCalendar(c, status, f)
	}
	if err != nil {
		return err
	}
	h.Sessions.Put(ctx, dash.SessFlash, "Calendar connected.")
	return c.Redirect(http.StatusSeeOther, calendarPagePath)
}

// calendarFormBody reads the form as the API's body, with the office hours
// as the form's rows (so that a refused form shows what was typed).
func calendarFormBody(form url.Values) (handlers.CalendarBody, []views.CalendarDay) {
	b := handlers.CalendarBody{
		ServerURL:   parley.Some(strings.TrimSpace(form.Get("serverUrl"))),
		Username:    parley.Some(strings.TrimSpace(form.Get("username"))),
		CalendarURL: parley.Some(strings.TrimSpace(form.Get("calendarUrl"))),
	}
	if p := form.Get("password"); p != "" {
		b.Password = parley.Some(p)
	}
	hours := map[string]*parley.DayHours{}
	days := make([]views.CalendarDay, len(parley.Weekdays))
	for i, key := range parley.Weekdays {
		d := views.CalendarDay{Key: key, Label: dayLabel(key),
			Open: form.Get("open_"+key) == "true", Start: strings.TrimSpace(form.Get("start_" + key)), End: strings.TrimSpace(form.Get("end_" + key))}
		if d.Open {
			hours[key] = &parley.DayHours{Start: d.Start, End: d.End}
		}
		days[i] = d
	}
	b.OfficeHours = parley.Some(hours)
	return b, days
}

// TestCalendarConnection reads the calendar now and shows the next free
// slots, or why it could not: a fragment for htmx, else the page.
func (h *Tools) TestCalendarConnection(c echo.Context) error {
	t := dash.AdminFrom(c).Tenant
	ctx := c.Request().Context()
	cur, err := h.ConnectedCalendar(ctx, t.ID)
	if err != nil {
		return err
	}
	res, err := h.TestCalendar(ctx, t, cur)
	v := views.CalendarTest{CalendarName: res.CalendarName, Duration: res.DurationMinutes, Timezone: res.Timezone}
	if res.Meeting != nil {
		v.Meeting = *res.Meeting
	}
	var ce *caldav.Error
	switch {
	case errors.As(err, &ce):
		h.Log(c).Warn("calendar connection test failed", "err", err)
		v.Error = ce.Message
	case err != nil:
		return err
	}
	for _, s := range res.Slots {
		v.Slots = append(v.Slots, s.Label)
	}
	if dash.IsHTMX(c) {
		return handlers.Render(c, http.StatusOK, views.CalendarTestView(v))
	}
	f := calendarForm(t, cur)
	f.Test = &v
	return h.renderCalendar(c, http.StatusOK, f)
}

// RemoveCalendarConnector disconnects the calendar; htmx is sent back to the page.
func (h *Tools) RemoveCalendarConnector(c echo.Context) error {
	ctx := c.Request().Context()
	// None connected is done already: the page says so.
	if err := h.Manage.DeleteCalendarConnector(ctx, dash.AdminFrom(c).Tenant.ID); err != nil && parley.ErrorKind(err) != parley.KindNotFound {
		return err
	}
	h.Sessions.Put(ctx, dash.SessFlash, "Calendar disconnected.")
	return dash.SeeOther(c, calendarPagePath)
}
