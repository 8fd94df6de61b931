package parley

import (
	"fmt"
	"sort"
	"time"
)

// CalendarConnector is a tenant's calendar over CalDAV: where it is, who
// signs in (the password stays sealed), and when meetings may be booked.
type CalendarConnector struct {
	TenantID  string
	ServerURL string
	Username  string
	// SealedPassword is the password or app password, sealed with the
	// service's box; it is never shown.
	SealedPassword []byte
	// CalendarURL is the calendar collection used (chosen or discovered),
	// CalendarName its display name.
	CalendarURL  string
	CalendarName string
	OfficeHours  OfficeHours
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// Weekdays are the keys of OfficeHours, Monday first.
var Weekdays = []string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}

// OfficeHours maps a weekday (Weekdays) to the hours meetings may be booked
// in, in the tenant's time zone; a day not listed is closed.
type OfficeHours map[string]DayHours

// DayHours is one day's opening, "HH:MM" 24-hour times, Start before End.
type DayHours struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

// DefaultOfficeHours is Monday to Friday, 09:00 to 17:00.
func DefaultOfficeHours() OfficeHours {
	h := OfficeHours{}
	for _, d := range Weekdays[:5] {
		h[d] = DayHours{Start: "09:00", End: "17:00"}
	}
	return h
}

// Minutes returns the day's start and end in minutes after midnight.
func (d DayHours) Minutes() (start, end int, err error) {
	if start, err = clockMinutes(d.Start); err != nil {
		return 0, 0, err
	}
	if end, err = clockMinutes(d.End); err != nil {
		return 0, 0, err
	}
	return start, end, nil
}

// clockMinutes parses "HH:MM" (00:00 to 24:00).
func clockMinutes(s string) (int, error) {
	var h, m int
	if len(s) != 5 || s[2] != ':' {
		return 0, fmt.Errorf("%q is not a time of day as HH:MM", s)
	}
	if _, err := fmt.Sscanf(s, "%02d:%02d", &h, &m); err != nil || h > 24 || m > 59 || (h == 24 && m != 0) {
		return 0, fmt.Errorf("%q is not a time of day as HH:MM", s)
	}
	return h*60 + m, nil
}

// Validate adds a problem per bad day to errs under field.
func (o OfficeHours) Validate(errs FieldErrors, field string) {
	known := map[string]bool{}
	for _, d := range Weekdays {
		known[d] = true
	}
	days := make([]string, 0, len(o))
	for day := range o {
		days = append(days, day)
	}
	sort.Strings(days)
	for _, day := range days {
		h := o[day]
		if !known[day] {
			errs.Add(field, fmt.Sprintf("%q is not a weekday (use monday to sunday)", day))
			continue
		}
		start, end, err := h.Minutes()
		switch {
		case err != nil:
			errs.Add(field, day+": "+err.Error())
		case start >= end:
			errs.Add(field, day+": start must be before end")
		}
	}
}
