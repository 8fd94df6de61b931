package admin

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/handlers/resource"
	"github.com/parley/parley/views"
)

// The "Live chat with your team" settings (issue 36, "Nobody there"): when
// a person can answer a visitor who asks for one (humanHours), how long a
// visitor waits for one (humanWaitSeconds), how long a person may stay
// silent in a conversation they took (humanIdleSeconds), and the tenant's
// time zone the hours are read in. Saved with the API's rules
// (manage.UpdateTenant).

const teamSettingsPath = "/admin/settings/team"

// The waits offered, in seconds, within the rules' bounds.
var (
	waitChoices = []int{30, 60, 120, 180, 300, 600, 900, 1800, 3600}
	idleChoices = []int{60, 300, 600, 900, 1800, 3600, 7200, 14400, 28800, 86400}
)

// durationChoices are the choices of a wait, with cur among them even when
// the API set a value the list does not have.
func durationChoices(choices []int, cur string) []views.Option {
	var out []views.Option
	found := false
	for _, s := range choices {
		v := strconv.Itoa(s)
		found = found || v == cur
		out = append(out, views.Option{Value: v, Label: durationWords(s)})
	}
	if n, err := strconv.Atoi(cur); err == nil && !found {
		out = append(out, views.Option{Value: cur, Label: durationWords(n)})
	}
	return out
}

// durationWords is a number of seconds in words: 30 seconds, 3 minutes, 1 hour.
func durationWords(s int) string {
	plural := func(n int, unit string) string {
		if n == 1 {
			return "1 " + unit
		}
		return fmt.Sprintf("%d %ss", n, unit)
	}
	switch {
	case s%3600 == 0:
		return plural(s/3600, "hour")
	case s%60 == 0:
		return plural(s/60, "minute")
	}
	return plural(s, "second")
}

// teamSettingsForm is the page's model of the tenant as stored.
func teamSettingsForm(t parley.Tenant, hasCalendar bool) views.TeamSettingsForm {
	f := views.TeamSettingsForm{Hours: t.HumanHours.Mode, HasCalendar: hasCalendar, Timezone: resource.TenantLocation(t).String(),
		Wait: strconv.Itoa(t.HumanWaitSeconds), Idle: strconv.Itoa(t.HumanIdleSeconds)}
	if f.Hours == "" {
		f.Hours = parley.HoursAlways
	}
	days := t.HumanHours.Days
	if f.Hours != parley.HoursWeekly {
		days = parley.DefaultOfficeHours() // where to start from
	}
	for _, key := range parley.Weekdays {
		d := views.CalendarDay{Key: key, Label: strings.ToUpper(key[:1]) + key[1:], Start: "09:00", End: "17:00"}
		if h, open := days[key]; open {
			d.Open, d.Start, d.End = true, h.Start, h.End
		}
		f.Days = append(f.Days, d)
	}
	return f
}

func (h *Settings) renderTeamSettings(c echo.Context, status int, f views.TeamSettingsForm) error {
	f.WaitChoices, f.IdleChoices = durationChoices(waitChoices, f.Wait), durationChoices(idleChoices, f.Idle)
	return handlers.Render(c, status, views.TeamSettingsPage(dash.Page(c, h.Sessions, "Live chat with your team", "settings"), f))
}

// ShowTeamSettingsPage renders the live chat settings.
func (h *Settings) ShowTeamSettingsPage(c echo.Context) error {
	t := dash.AdminFrom(c).Tenant
	cal, err := h.Manage.CalendarConnector(c.Request().Context(), t.ID)
	if err != nil {
		return err
	}
	return h.renderTeamSettings(c, http.StatusOK, teamSettingsForm(t, cal != nil))
}

// SaveTeamSettings saves the live chat settings with the API's rules, or
// re-renders the page with what was chosen and the errors.
func (h *Settings) SaveTeamSettings(c echo.Context) error {
	t := dash.AdminFrom(c).Tenant
	ctx := c.Request().Context()
	cal, err := h.Manage.CalendarConnector(ctx, t.ID)
	if err != nil {
		return err
	}
	form, err := c.FormParams()
	if err != nil {
		return handlers.Invalid("Could not read the form")
	}
	f := teamSettingsForm(t, cal != nil)
	in, days := teamSettingsInput(form)
	f.Hours, f.Days, f.Wait, f.Idle, f.Timezone = in.HumanHours.Value.Mode, days, form.Get("humanWaitSeconds"),
		form.Get("humanIdleSeconds"), in.Timezone.Value
	_, err = h.Manage.UpdateTenant(ctx, t, in)
	if status, ferrs, _, ok := dash.FormStatus(err); ok && len(ferrs) > 0 {
		f.Errors = ferrs
		return h.renderTeamSettings(c, status, f)
	}
	if err != nil {
		return err
	}
	h.Sessions.Put(ctx, dash.SessFlash, "Settings saved.")
	return c.Redirect(http.StatusSeeOther, teamSettingsPath)
}

// teamSettingsInput reads the form as the tenant's input, with the days as
// the form's rows (so that a refused form shows what was typed). The days
// go with the weekly hours only.
func teamSettingsInput(form url.Values) (parley.TenantInput, []views.CalendarDay) {
	in := parley.TenantInput{Timezone: parley.Some(strings.TrimSpace(form.Get("timezone"))), Problems: parley.FieldErrors{}}
	hours := parley.HumanHours{Mode: form.Get("hours")}
	var days []views.CalendarDay
	for _, key := range parley.Weekdays {
		d := views.CalendarDay{Key: key, Label: strings.ToUpper(key[:1]) + key[1:],
			Open: form.Get("open_"+key) == "true", Start: strings.TrimSpace(form.Get("start_" + key)), End: strings.TrimSpace(form.Get("end_" + key))}
		if d.Open && hours.Mode == parley.HoursWeekly {
			if hours.Days == nil {
				hours.Days = parley.OfficeHours{}
			}
			hours.Days[key] = parley.DayHours{Start: d.Start, End: d.End}
		}
		days = append(days, d)
	}
	in.HumanHours = parley.Some(hours)
	for _, fd := range []struct {
		name string
		o    *parley.Opt[int]
	}{{"humanWaitSeconds", &in.HumanWaitSeconds}, {"humanIdleSeconds", &in.HumanIdleSeconds}} {
		if n, err := strconv.Atoi(form.Get(fd.name)); err != nil {
			in.Problems.Add(fd.name, "choose one of the durations offered")
		} else {
			*fd.o = parley.Some(n)
		}
	}
	return in, days
}
