package parley

import (
	"net/url"
	"strings"
	"unicode/utf8"
)

// The rules of a save of the tenant's calendar connector (CalDAV), which
// the REST API and the dashboard share through the management operations.

// The calendar connector's limits (the server URL's is MaxURL).
const (
	MaxCalendarUsername = 200
	MaxCalendarPassword = 500
	MaxCalendarURL      = 1000
)

// NoCalendar is the refusal of a request about the connector of a tenant
// without one.
func NoCalendar() error { return Errorf(KindNotFound, "No calendar is connected") }

// CalendarInput is a save of the tenant's calendar connector: server URL
// and username are required; an unset (null or "") password keeps the
// stored one, which is only ever sent to the server it was given for; an
// unset calendar URL is discovered; unset office hours keep the stored
// ones (DefaultOfficeHours without). A null day in OfficeHours is closed.
// Problems holds what the surface could not read of it, reported first.
type CalendarInput struct {
	ServerURL   Opt[string]
	Username    Opt[string]
	Password    Opt[string]
	CalendarURL Opt[string]
	OfficeHours Opt[map[string]*DayHours]
	Problems    FieldErrors
}

// HasPassword says whether the save gives a password.
func (in *CalendarInput) HasPassword() bool {
	return in.Password.Set && !in.Password.Null && in.Password.Value != ""
}

// Check trims server URL, username and calendar URL and returns the
// save's problems, Problems first; cur is the stored connector (nil when
// none), whose password is required to be given again on a first
// connection or a change of server. address, when not nil, says why Parley
// must not call a URL ("" when it may); plainHTTP, when not nil, says
// whether a URL may be called over plain http (nil: https only).
func (in *CalendarInput) Check(cur *CalendarConnector, address func(rawURL string) string, plainHTTP func(rawURL string) bool) FieldErrors {
	errs := in.Problems.Copy()
	in.ServerURL.Value = strings.TrimSpace(in.ServerURL.Value)
	if !in.ServerURL.Set || in.ServerURL.Null || in.ServerURL.Value == "" {
		errs.Add("serverUrl", "is required (use DELETE to disconnect the calendar)")
	} else {
		CheckHTTPURL(errs, "serverUrl", in.ServerURL, false)
		checkCalendarServer(errs, in.ServerURL.Value, address, plainHTTP)
	}
	in.Username.Value = strings.TrimSpace(in.Username.Value)
	switch {
	case !in.Username.Set || in.Username.Null || in.Username.Value == "":
		errs.Add("username", "is required")
	case utf8.RuneCountInString(in.Username.Value) > MaxCalendarUsername:
		errs.Add("username", TooLong(MaxCalendarUsername))
	}
	switch {
	case in.HasPassword():
		if utf8.RuneCountInString(in.Password.Value) > MaxCalendarPassword {
			errs.Add("password", TooLong(MaxCalendarPassword))
		}
	case cur == nil:
		errs.Add("password", "is required to connect a calendar")
	case !sameServer(cur.ServerURL, in.server()):
		errs.Add("password", "is required when the server changes: the stored password is only sent to "+hostOf(cur.ServerURL))
	}
	if in.CalendarURL.Set && !in.CalendarURL.Null {
		in.CalendarURL.Value = strings.TrimSpace(in.CalendarURL.Value)
		if utf8.RuneCountInString(in.CalendarURL.Value) > MaxCalendarURL {
			errs.Add("calendarUrl", TooLong(MaxCalendarURL))
		}
	}
	if in.OfficeHours.Set {
		if in.OfficeHours.Null {
			errs.Add("officeHours", "must be an object of weekdays (an empty object closes every day)")
		}
		in.hours().Validate(errs, "officeHours")
	}
	return errs
}

// server is the server URL given, "" when none.
func (in *CalendarInput) server() string {
	if !in.ServerURL.Set || in.ServerURL.Null {
		return ""
	}
	return strings.TrimSpace(in.ServerURL.Value)
}

// hours is the office hours given, closed days left out.
func (in *CalendarInput) hours() OfficeHours {
	hours := OfficeHours{}
	for day, h := range in.OfficeHours.Value {
		if h != nil { // null: the day is closed
			hours[day] = *h
		}
	}
	return hours
}

// Want is the calendar asked for, "" to discover it.
func (in *CalendarInput) Want() string {
	if in.CalendarURL.Set && !in.CalendarURL.Null {
		return strings.TrimSpace(in.CalendarURL.Value)
	}
	return ""
}

// Connector is the connector a checked save describes, over cur (nil when
// none): without its password, calendar URL and name.
func (in *CalendarInput) Connector(tenantID string, cur *CalendarConnector) CalendarConnector {
	c := CalendarConnector{TenantID: tenantID, ServerURL: in.server(), Username: strings.TrimSpace(in.Username.Value),
		OfficeHours: DefaultOfficeHours()}
	if cur != nil {
		c.OfficeHours = cur.OfficeHours
	}
	if in.OfficeHours.Set {
		c.OfficeHours = in.hours()
	}
	return c
}

// checkCalendarServer refuses credentials in the server URL (they go in
// username and password), plain http to a host plainHTTP does not allow,
// and addresses address refuses.
func checkCalendarServer(errs FieldErrors, raw string, address func(string) string, plainHTTP func(string) bool) {
	if _, bad := errs["serverUrl"]; bad {
		return
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		errs.Add("serverUrl", "must be an absolute URL such as https://caldav.example.com/")
	case u.User != nil:
		errs.Add("serverUrl", "must not contain credentials; give them as username and password")
	case u.Scheme != "https" && (plainHTTP == nil || !plainHTTP(raw)):
		errs.Add("serverUrl", "must use https")
	default:
		checkAddress(errs, "serverUrl", raw, address)
	}
}

// hostOf is the host of a server URL, for messages.
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
