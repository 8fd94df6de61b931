package handlers

// The calendar connector's live checks (discovery, connection, a test of
// free slots), which the REST API and the dashboard's calendar page run
// alike.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/caldav"
	"github.com/parley/parley/agent/tools"
	"github.com/parley/parley/handlers/resource"
)

// testSlots is how many free slots a connection test shows.
const testSlots = 5

// CalendarBody is the JSON of a calendar connector save.
type CalendarBody struct {
	ServerURL   parley.Opt[string]                      `json:"serverUrl"`
	Username    parley.Opt[string]                      `json:"username"`
	Password    parley.Opt[string]                      `json:"password"`
	CalendarURL parley.Opt[string]                      `json:"calendarUrl"`
	OfficeHours parley.Opt[map[string]*parley.DayHours] `json:"officeHours"`
}

// Input is the save as the management operations take it; problems holds
// what could not be read of it.
func (b CalendarBody) Input(problems parley.FieldErrors) parley.CalendarInput {
	return parley.CalendarInput{ServerURL: b.ServerURL, Username: b.Username, Password: b.Password,
		CalendarURL: b.CalendarURL, OfficeHours: b.OfficeHours, Problems: problems}
}

// DiscoverCalendar connects to the connector's server (through the
// outbound guard) and finds the calendar: the live check of a save, given
// to the management operation, which stores the connector once it passes.
// A failure is a parley.FieldErrors naming the field at fault.
func (h *Base) DiscoverCalendar(ctx context.Context, c parley.CalendarConnector, password, want string) (string, string, error) {
	if h.Outbound == nil {
		return "", "", parley.FieldErrors{"serverUrl": "outgoing connections are not configured on this server"}.Err()
	}
	conn, err := caldav.Dial(h.Outbound.Client(caldav.Timeout), c.ServerURL, c.Username, password)
	if err != nil {
		return "", "", parley.FieldErrors{"serverUrl": err.Error()}.Err()
	}
	found, err := conn.Discover(ctx, want)
	if err != nil {
		return "", "", parley.FieldErrors{calendarErrorField(err, want): err.Error()}.Err()
	}
	return found.Path, found.Name, nil
}

// calendarErrorField names the field a failed connection is about.
func calendarErrorField(err error, want string) string {
	var ce *caldav.Error
	switch {
	case errors.As(err, &ce) && (ce.Status == http.StatusUnauthorized || ce.Status == http.StatusForbidden):
		return "password"
	case want != "":
		return "calendarUrl"
	}
	return "serverUrl"
}

// ConnectedCalendar reads the tenant's connector; none is noCalendar.
func (h *Base) ConnectedCalendar(ctx context.Context, tenantID string) (*parley.CalendarConnector, error) {
	cur, err := h.Manage.CalendarConnector(ctx, tenantID)
	if err == nil && cur == nil {
		err = parley.NoCalendar()
	}
	return cur, err
}

// calendarTest is the result of a connection test.
type calendarTest struct {
	OK              bool         `json:"ok"`
	CalendarURL     string       `json:"calendarUrl"`
	CalendarName    string       `json:"calendarName"`
	Timezone        string       `json:"timezone"`
	Meeting         *string      `json:"meeting"`
	DurationMinutes int          `json:"durationMinutes"`
	Slots           []tools.Slot `json:"slots"`
}

// TestCalendar connects with the stored connector and reads the next free
// slots, under the rules of the tenant's first active BOOK_MEETING tool (the
// connector's own, tools.ConnectorMeeting, when there is none: the slots
// check_availability lists then). A failure is a *caldav.Error.
func (h *Base) TestCalendar(ctx context.Context, t parley.Tenant, cur *parley.CalendarConnector) (calendarTest, error) {
	out := calendarTest{CalendarURL: cur.CalendarURL, CalendarName: cur.CalendarName, Timezone: resource.TenantLocation(t).String()}
	meeting := tools.ConnectorMeeting()
	tenantTools, err := h.DB.ListTools(ctx, t.ID)
	if err != nil {
		return out, err
	}
	for _, tool := range tenantTools {
		if tool.IsActive && tool.Type == parley.ToolBookMeeting {
			meeting = parley.DefaultMeetingConfig()
			if len(tool.Config) > 0 {
				_ = json.Unmarshal(tool.Config, &meeting)
			}
			out.Meeting = &tool.Name
			break
		}
	}
	out.DurationMinutes = meeting.DurationMinutes
	if h.Outbound == nil {
		return out, &caldav.Error{Message: "outgoing connections are not configured on this server"}
	}
	password, err := h.Box.Open(cur.SealedPassword)
	if err != nil {
		return out, err
	}
	conn, err := caldav.Dial(h.Outbound.Client(caldav.Timeout), cur.ServerURL, cur.Username, string(password))
	if err != nil {
		return out, err
	}
	rules := tools.SlotRules{Hours: cur.OfficeHours, Loc: resource.TenantLocation(t), Meeting: meeting, Now: h.Clock()}
	out.Slots, err = tools.NextFreeSlots(ctx, conn, cur.CalendarURL, rules, testSlots)
	if err != nil {
		return out, err
	}
	if out.Slots == nil {
		out.Slots = []tools.Slot{}
	}
	out.OK = true
	return out, nil
}
