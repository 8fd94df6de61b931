package manage

import (
	"context"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/business"
)

// The tenant's calendar connector (CalDAV): its password is sealed here
// and only ever opened again to be sent to the server it was given for.

// CalendarDiscovery connects to c's server with password and finds the
// calendar: the one at want, or the account's default when want is "". It
// returns the calendar's URL and display name, or why it could not (a
// *parley.Error, a parley.FieldErrors naming the field at fault, for a
// server that refuses). The surface gives it: the CalDAV client is agent
// code, which manage does not import.
type CalendarDiscovery func(ctx context.Context, c parley.CalendarConnector, password, want string) (calendarURL, name string, err error)

// CalendarConnector reads the tenant's connector, nil when none.
func (s *Service) CalendarConnector(ctx context.Context, tenantID string) (*parley.CalendarConnector, error) {
	return s.DB.CalendarConnector(ctx, tenantID)
}

// SaveCalendarConnector checks a save of the tenant's connector, connects
// to the server through discover once the save is sound, and stores the
// connector with the calendar found and the password sealed. An unset
// password is the stored one, on the same server only.
func (s *Service) SaveCalendarConnector(ctx context.Context, tenantID string, in parley.CalendarInput, discover CalendarDiscovery) (parley.CalendarConnector, error) {
	cur, err := s.DB.CalendarConnector(ctx, tenantID)
	if err != nil {
		return parley.CalendarConnector{}, err
	}
	// A stale If-Match is refused before the server is asked.
	if err := db.CheckIfMatch(ctx, business.CalendarETag(cur)); err != nil {
		return parley.CalendarConnector{}, err
	}
	var plainHTTP func(string) bool
	if s.Addresses != nil {
		plainHTTP = func(rawURL string) bool { return s.Addresses.PlainHTTP(ctx, rawURL) }
	}
	errs := in.Check(cur, s.address(ctx), plainHTTP)
	password := in.Password.Value
	if _, bad := errs["password"]; !bad && !in.HasPassword() {
		sealed, err := s.Box.Open(cur.SealedPassword)
		if err != nil {
			errs.Add("password", "the stored password cannot be read; type it again")
		}
		password = string(sealed)
	}
	c := in.Connector(tenantID, cur)
	if err := errs.Err(); err != nil {
		return c, err
	}
	if c.CalendarURL, c.CalendarName, err = discover(ctx, c, password, in.Want()); err != nil {
		return c, err
	}
	c.SealedPassword = s.Box.Seal([]byte(password))
	return s.DB.SaveCalendarConnector(ctx, c)
}

// DeleteCalendarConnector deletes the tenant's connector and its
// credentials: the meeting tools are no longer offered. None is
// parley.NoCalendar.
func (s *Service) DeleteCalendarConnector(ctx context.Context, tenantID string) error {
	found, err := s.DB.DeleteCalendarConnector(ctx, tenantID)
	if err == nil && !found {
		err = parley.NoCalendar()
	}
	return err
}
