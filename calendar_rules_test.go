package parley_test

import (
	"strings"
	"testing"

	"github.com/parley/parley"
)

// The calendar connector's rules: limits at N and N+1, the server URL's
// shape and address, the password required on a first connection or a
// change of server, and the surface's problems first.
func TestCalendarRules(t *testing.T) {
	t.Parallel()
	stored := &parley.CalendarConnector{ServerURL: "https://caldav.example.com/dav/", Username: "ada"}
	save := func(edit func(*parley.CalendarInput)) parley.CalendarInput {
		in := parley.CalendarInput{ServerURL: parley.Some(" https://caldav.example.com/ "), Username: parley.Some("ada"), Password: parley.Some("pw")}
		if edit != nil {
			edit(&in)
		}
		return in
	}
	hours := func(day string, h *parley.DayHours) parley.Opt[map[string]*parley.DayHours] {
		return parley.Some(map[string]*parley.DayHours{day: h})
	}
	private := func(raw string) string {
		if strings.Contains(raw, "10.0.0.1") {
			return "must not be a private address"
		}
		return ""
	}
	for name, c := range map[string]struct {
		in    parley.CalendarInput
		cur   *parley.CalendarConnector
		field string
		want  string
	}{
		"Sound":        {save(nil), nil, "", ""},
		"NoServer":     {save(func(in *parley.CalendarInput) { in.ServerURL = parley.Opt[string]{Set: true, Null: true} }), nil, "serverUrl", "is required (use DELETE to disconnect the calendar)"},
		"ServerNotURL": {save(func(in *parley.CalendarInput) { in.ServerURL = parley.Some("caldav.example.com") }), nil, "serverUrl", "must be an absolute URL such as https://example.com/path"},
		"ServerAtLimit": {save(func(in *parley.CalendarInput) {
			in.ServerURL = parley.Some("https://caldav.example.com/" + strings.Repeat("a", parley.MaxURL-27))
		}), nil, "", ""},
		"ServerPast": {save(func(in *parley.CalendarInput) {
			in.ServerURL = parley.Some("https://caldav.example.com/" + strings.Repeat("a", parley.MaxURL-26))
		}), nil, "serverUrl", "must be at most 500 characters"},
		"Credentials":     {save(func(in *parley.CalendarInput) { in.ServerURL = parley.Some("https://ada:pw@caldav.example.com/") }), nil, "serverUrl", "must not contain credentials; give them as username and password"},
		"PlainHTTP":       {save(func(in *parley.CalendarInput) { in.ServerURL = parley.Some("http://caldav.example.com/") }), nil, "serverUrl", "must use https"},
		"PlainHTTPExempt": {save(func(in *parley.CalendarInput) { in.ServerURL = parley.Some("http://127.0.0.1:8080/") }), nil, "", ""},
		"PrivateAddress":  {save(func(in *parley.CalendarInput) { in.ServerURL = parley.Some("https://10.0.0.1/") }), nil, "serverUrl", "must not be a private address"},
		"NoUsername":      {save(func(in *parley.CalendarInput) { in.Username = parley.Some("  ") }), nil, "username", "is required"},
		"UsernameAtLimit": {save(func(in *parley.CalendarInput) {
			in.Username = parley.Some(" " + strings.Repeat("é", parley.MaxCalendarUsername) + " ")
		}), nil, "", ""},
		"UsernamePast": {save(func(in *parley.CalendarInput) {
			in.Username = parley.Some(strings.Repeat("é", parley.MaxCalendarUsername+1))
		}), nil, "username", "must be at most 200 characters"},
		"PasswordAtLimit": {save(func(in *parley.CalendarInput) {
			in.Password = parley.Some(strings.Repeat("p", parley.MaxCalendarPassword))
		}), nil, "", ""},
		"PasswordPast": {save(func(in *parley.CalendarInput) {
			in.Password = parley.Some(strings.Repeat("p", parley.MaxCalendarPassword+1))
		}), nil, "password", "must be at most 500 characters"},
		"PasswordFirst": {save(func(in *parley.CalendarInput) { in.Password = parley.Opt[string]{} }), nil, "password", "is required to connect a calendar"},
		"PasswordKept":  {save(func(in *parley.CalendarInput) { in.Password = parley.Some("") }), stored, "", ""},
		"PasswordNewServer": {save(func(in *parley.CalendarInput) {
			in.Password, in.ServerURL = parley.Opt[string]{}, parley.Some("https://other.example.com/")
		}), stored, "password", "is required when the server changes: the stored password is only sent to caldav.example.com"},
		"CalendarAtLimit": {save(func(in *parley.CalendarInput) {
			in.CalendarURL = parley.Some("/" + strings.Repeat("c", parley.MaxCalendarURL-1))
		}), nil, "", ""},
		"CalendarPast": {save(func(in *parley.CalendarInput) {
			in.CalendarURL = parley.Some("/" + strings.Repeat("c", parley.MaxCalendarURL))
		}), nil, "calendarUrl", "must be at most 1000 characters"},
		"HoursNull": {save(func(in *parley.CalendarInput) {
			in.OfficeHours = parley.Opt[map[string]*parley.DayHours]{Set: true, Null: true}
		}), nil, "officeHours", "must be an object of weekdays (an empty object closes every day)"},
		"HoursBadDay": {save(func(in *parley.CalendarInput) {
			in.OfficeHours = hours("funday", &parley.DayHours{Start: "09:00", End: "10:00"})
		}), nil, "officeHours", `"funday" is not a weekday (use monday to sunday)`},
		"HoursBackwards": {save(func(in *parley.CalendarInput) {
			in.OfficeHours = hours("monday", &parley.DayHours{Start: "17:00", End: "09:00"})
		}), nil, "officeHours", "monday: start must be before end"},
		"HoursClosedDay": {save(func(in *parley.CalendarInput) { in.OfficeHours = hours("monday", nil) }), nil, "", ""},
		"ProblemsFirst": {save(func(in *parley.CalendarInput) {
			in.Username, in.Problems = parley.Some(""), parley.FieldErrors{"username": "must be a string"}
		}), nil, "username", "must be a string"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			errs := c.in.Check(c.cur, private, func(raw string) bool { return strings.HasPrefix(raw, "http://127.0.0.1") })
			if c.field == "" {
				if len(errs) > 0 {
					t.Fatalf("problems: %v", errs)
				}
				return
			}
			if got := errs[c.field]; got != c.want || len(errs) != 1 {
				t.Fatalf("problems %v, want only %s: %q", errs, c.field, c.want)
			}
		})
	}
}

// A sound save's connector: trimmed, closed days left out, the stored
// office hours kept when none are given.
func TestCalendarConnectorOfSave(t *testing.T) {
	t.Parallel()
	in := parley.CalendarInput{ServerURL: parley.Some(" https://caldav.example.com/ "), Username: parley.Some(" ada "),
		CalendarURL: parley.Some(" /ada/work/ "),
		OfficeHours: parley.Some(map[string]*parley.DayHours{"monday": {Start: "09:00", End: "12:00"}, "tuesday": nil})}
	if errs := in.Check(nil, nil, nil); len(errs) != 1 || errs["password"] == "" {
		t.Fatalf("problems %v, want only the password's", errs)
	}
	c := in.Connector("t1", nil)
	if c.TenantID != "t1" || c.ServerURL != "https://caldav.example.com/" || c.Username != "ada" || in.Want() != "/ada/work/" {
		t.Fatalf("connector %+v, want %q", c, in.Want())
	}
	if len(c.OfficeHours) != 1 || c.OfficeHours["monday"].End != "12:00" {
		t.Fatalf("office hours %v", c.OfficeHours)
	}
	in.OfficeHours = parley.Opt[map[string]*parley.DayHours]{}
	kept := parley.OfficeHours{"friday": {Start: "10:00", End: "11:00"}}
	if c := in.Connector("t1", &parley.CalendarConnector{OfficeHours: kept}); len(c.OfficeHours) != 1 || c.OfficeHours["friday"].Start != "10:00" {
		t.Fatalf("office hours %v, want the stored ones", c.OfficeHours)
	}
	if c := in.Connector("t1", nil); len(c.OfficeHours) != 5 {
		t.Fatalf("office hours %v, want the default", c.OfficeHours)
	}
}
