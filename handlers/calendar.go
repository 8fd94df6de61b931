package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/agent"
)

// The calendar connector: the tenant's calendar over CalDAV, which
// CHECK_AVAILABILITY reads and BOOK_MEETING writes. The API
// (/tenants/{slug}/integrations/calendar) and the dashboard
// (/admin/integrations/calendar) share the rules below.

const (
	maxCalendarUsername = 200
	maxCalendarPassword = 500
	maxCalendarURL      = 1000
	// testSlots is how many free slots a connection test shows.
	testSlots = 5
)

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
	out := calendarJSON{OfficeHours: parley.DefaultOfficeHours(), Timezone: tenantLocation(t).String()}
	if c == nil {
		return out
	}
	out.Connected, out.HasPassword = true, len(c.SealedPassword) > 0
	out.ServerURL, out.Username, out.CalendarURL = &c.ServerURL, &c.Username, &c.CalendarURL
	out.CalendarName, out.OfficeHours, out.UpdatedAt = &c.CalendarName, c.OfficeHours, &c.UpdatedAt
	return out
}

// calendarBody is the JSON of a calendar connector save.
type calendarBody struct {
	ServerURL   parley.Opt[string]                      `json:"serverUrl"`
	Username    parley.Opt[string]                      `json:"username"`
	Password    parley.Opt[string]                      `json:"password"`
	CalendarURL parley.Opt[string]                      `json:"calendarUrl"`
	OfficeHours parley.Opt[map[string]*parley.DayHours] `json:"officeHours"`
}

// connectCalendar checks a save against the stored connector (nil when
// none), connects to the server to find (or check) the calendar, and
// returns the connector to store; problems are added to errs. The password
// is required to connect for the first time and whenever the server
// changes: the stored one is never sent to another server.
func (h *Handler) connectCalendar(ctx context.Context, t parley.Tenant, cur *parley.CalendarConnector, b calendarBody, errs parley.FieldErrors) parley.CalendarConnector {
	c := parley.CalendarConnector{TenantID: t.ID, OfficeHours: parley.DefaultOfficeHours()}
	if cur != nil {
		c.OfficeHours = cur.OfficeHours
	}
	switch {
	case !b.ServerURL.Set || b.ServerURL.Null || strings.TrimSpace(b.ServerURL.Value) == "":
		errs.Add("serverUrl", "is required (use DELETE to disconnect the calendar)")
	default:
		c.ServerURL = strings.TrimSpace(b.ServerURL.Value)
		parley.CheckHTTPURL(errs, "serverUrl", parley.Some(c.ServerURL), false)
		h.checkCalendarURL(ctx, errs, c.ServerURL)
	}
	c.Username = strings.TrimSpace(b.Username.Value)
	switch {
	case !b.Username.Set || b.Username.Null || c.Username == "":
		errs.Add("username", "is required")
	case utf8.RuneCountInString(c.Username) > maxCalendarUsername:
		errs.Add("username", parley.TooLong(maxCalendarUsername))
	}
	var password string
	switch {
	case b.Password.Set && !b.Password.Null && b.Password.Value != "":
		password = b.Password.Value
		if utf8.RuneCountInString(password) > maxCalendarPassword {
			errs.Add("password", parley.TooLong(maxCalendarPassword))
		}
	case cur == nil:
		errs.Add("password", "is required to connect a calendar")
	case !sameServer(cur.ServerURL, c.ServerURL):
		errs.Add("password", "is required when the server changes: the stored password is only sent to "+hostOf(cur.ServerURL))
	default:
		sealed, err := h.Box.Open(cur.SealedPassword)
		if err != nil {
			errs.Add("password", "the stored password cannot be read; type it again")
		}
		password = string(sealed)
	}
	var want string
	if b.CalendarURL.Set && !b.CalendarURL.Null {
		want = strings.TrimSpace(b.CalendarURL.Value)
		if utf8.RuneCountInString(want) > maxCalendarURL {
			errs.Add("calendarUrl", parley.TooLong(maxCalendarURL))
		}
	}
	if b.OfficeHours.Set {
		if b.OfficeHours.Null {
			errs.Add("officeHours", "must be an object of weekdays (an empty object closes every day)")
		}
		hours := parley.OfficeHours{}
		for day, h := range b.OfficeHours.Value {
			if h != nil { // null: the day is closed
				hours[day] = *h
			}
		}
		hours.Validate(errs, "officeHours")
		c.OfficeHours = hours
	}
	if len(errs) > 0 {
		return c
	}
	if h.Outbound == nil {
		errs.Add("serverUrl", "outgoing connections are not configured on this server")
		return c
	}
	conn, err := agent.DialCalDAV(h.Outbound.Client(agent.CalendarTimeout), c.ServerURL, c.Username, password)
	if err != nil {
		errs.Add("serverUrl", err.Error())
		return c
	}
	found, err := conn.Discover(ctx, want)
	if err != nil {
		errs.Add(calendarErrorField(err, want), err.Error())
		return c
	}
	c.CalendarURL, c.CalendarName = found.Path, found.Name
	c.SealedPassword = h.Box.Seal([]byte(password))
	return c
}

// checkCalendarURL refuses credentials in the URL (they go in username and
// password), plain http to a host the operator did not exempt, and private
// or reserved addresses.
func (h *Handler) checkCalendarURL(ctx context.Context, errs parley.FieldErrors, raw string) {
	if _, bad := errs["serverUrl"]; bad {
		return
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		errs.Add("serverUrl", "must be an absolute URL such as https://caldav.example.com/")
	case u.User != nil:
		errs.Add("serverUrl", "must not contain credentials; give them as username and password")
	case h.plainHTTPRefused(ctx, u, raw):
		errs.Add("serverUrl", "must use https")
	default:
		h.checkOutboundURL(ctx, errs, "serverUrl", raw)
	}
}

// calendarErrorField names the field a failed connection is about.
func calendarErrorField(err error, want string) string {
	var ce *agent.CalendarError
	switch {
	case errors.As(err, &ce) && (ce.Status == http.StatusUnauthorized || ce.Status == http.StatusForbidden):
		return "password"
	case want != "":
		return "calendarUrl"
	}
	return "serverUrl"
}

func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	return "the server it was given for"
}

// sameServer reports whether two server URLs reach the same origin.
func sameServer(a, b string) bool {
	ua, errA := url.Parse(a)
	ub, errB := url.Parse(b)
	return errA == nil && errB == nil && ua.Scheme == ub.Scheme && strings.EqualFold(ua.Host, ub.Host)
}

// ShowCalendarConnector answers GET /tenants/{slug}/integrations/calendar.
func (h *Handler) ShowCalendarConnector(c echo.Context) error {
	t := tenantFrom(c)
	cur, err := h.DB.CalendarConnector(c.Request().Context(), t.ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newCalendarJSON(t, cur))
}

// UpdateCalendarConnector answers PUT /tenants/{slug}/integrations/calendar:
// it connects to the server and saves the connector once the calendar is
// found. An absent password keeps the stored one (same server only).
func (h *Handler) UpdateCalendarConnector(c echo.Context) error {
	t := tenantFrom(c)
	ctx := c.Request().Context()
	raw, err := decodeObject(c, maxJSONBody)
	if err != nil {
		return err
	}
	var b calendarBody
	errs := decodeFields(raw, &b)
	cur, err := h.DB.CalendarConnector(ctx, t.ID)
	if err != nil {
		return err
	}
	conn := h.connectCalendar(ctx, t, cur, b, errs)
	if err := errs.Err(); err != nil {
		return err
	}
	saved, err := h.DB.SaveCalendarConnector(ctx, conn)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newCalendarJSON(t, &saved))
}

// DeleteCalendarConnector answers DELETE /tenants/{slug}/integrations/calendar:
// the credentials are deleted and the meeting tools are no longer offered.
func (h *Handler) DeleteCalendarConnector(c echo.Context) error {
	t := tenantFrom(c)
	found, err := h.DB.DeleteCalendarConnector(c.Request().Context(), t.ID)
	if err != nil {
		return err
	}
	if !found {
		return noCalendar()
	}
	return c.JSON(http.StatusOK, map[string]any{"deleted": true})
}

// noCalendar answers a request about the connector of a tenant without one.
func noCalendar() error { return parley.Errorf(parley.KindNotFound, "No calendar is connected") }

// connectedCalendar reads the tenant's connector; none is noCalendar.
func (h *Handler) connectedCalendar(ctx context.Context, tenantID string) (*parley.CalendarConnector, error) {
	cur, err := h.DB.CalendarConnector(ctx, tenantID)
	if err == nil && cur == nil {
		err = noCalendar()
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
	Slots           []agent.Slot `json:"slots"`
}

// testCalendar connects with the stored connector and reads the next free
// slots, under the rules of the tenant's first active BOOK_MEETING tool (the
// connector's own, agent.ConnectorMeeting, when there is none: the slots
// check_availability lists then). A failure is a *agent.CalendarError.
func (h *Handler) testCalendar(ctx context.Context, t parley.Tenant, cur *parley.CalendarConnector) (calendarTest, error) {
	out := calendarTest{CalendarURL: cur.CalendarURL, CalendarName: cur.CalendarName, Timezone: tenantLocation(t).String()}
	meeting := agent.ConnectorMeeting()
	tools, err := h.DB.ListTools(ctx, t.ID)
	if err != nil {
		return out, err
	}
	for _, tool := range tools {
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
		return out, &agent.CalendarError{Message: "outgoing connections are not configured on this server"}
	}
	password, err := h.Box.Open(cur.SealedPassword)
	if err != nil {
		return out, err
	}
	conn, err := agent.DialCalDAV(h.Outbound.Client(agent.CalendarTimeout), cur.ServerURL, cur.Username, string(password))
	if err != nil {
		return out, err
	}
	rules := agent.SlotRules{Hours: cur.OfficeHours, Loc: tenantLocation(t), Meeting: meeting, Now: h.now()}
	out.Slots, err = agent.NextFreeSlots(ctx, conn, cur.CalendarURL, rules, testSlots)
	if err != nil {
		return out, err
	}
	if out.Slots == nil {
		out.Slots = []agent.Slot{}
	}
	out.OK = true
	return out, nil
}

// TestCalendarConnector answers POST /tenants/{slug}/integrations/calendar/test:
// it reads the calendar with the stored credentials and returns the next
// free slots; a server that fails is a 502 saying why.
func (h *Handler) TestCalendarConnector(c echo.Context) error {
	t := tenantFrom(c)
	ctx := c.Request().Context()
	cur, err := h.connectedCalendar(ctx, t.ID)
	if err != nil {
		return err
	}
	out, err := h.testCalendar(ctx, t, cur)
	var ce *agent.CalendarError
	if errors.As(err, &ce) {
		h.log(c).Warn("calendar connection test failed", "err", err)
		return &parley.Error{Kind: parley.KindUpstream, Code: "CALENDAR_UNAVAILABLE", Message: "The calendar could not be read: " + ce.Message}
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}
