// Package caldav is the calendar connector's client: a tenant's calendar
// over CalDAV (RFC 4791), through the SSRF-guarded client. Its failures are
// *Error, whose message is safe to show to the tenant and to relay to a
// visitor: it never holds the password, nor what the server answered beyond
// its status.
package caldav

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/emersion/go-ical"
	gocaldav "github.com/emersion/go-webdav/caldav"

	"github.com/parley/parley/agent/outbound"
)

// Timeout bounds each exchange with a calendar server.
const Timeout = 10 * time.Second

// maxCalendarResponse bounds what is read of one answer of a calendar server.
const maxCalendarResponse = 8 << 20

// Error is a failed exchange with a calendar server.
type Error struct {
	// Status is the server's HTTP status, 0 when it gave none.
	Status int
	// Message says what went wrong, in the owner's words.
	Message string
	// Err is the underlying error, for logs.
	Err error
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.Err }

// Client is a connection to one tenant's calendar server.
type Client struct {
	client *gocaldav.Client
	http   *davHTTP
	host   string
}

// davHTTP signs each request in (basic authentication), makes every PUT
// create only (If-None-Match: *), bounds the answers, and records the last
// failed status, which go-webdav's errors do not expose.
type davHTTP struct {
	client         *http.Client
	user, password string
	status         atomic.Int32
}

func (d *davHTTP) Do(req *http.Request) (*http.Response, error) {
	req.SetBasicAuth(d.user, d.password)
	if req.Method == http.MethodPut {
		req.Header.Set("If-None-Match", "*")
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		d.status.Store(int32(resp.StatusCode))
	}
	resp.Body = limitedBody{Reader: io.LimitReader(resp.Body, maxCalendarResponse), Closer: resp.Body}
	return resp, nil
}

type limitedBody struct {
	io.Reader
	io.Closer
}

// Dial prepares the connection to serverURL (no request is sent yet).
// client must be the SSRF-guarded client ((*outbound.Guard).Client).
func Dial(client *http.Client, serverURL, username, password string) (*Client, error) {
	u, err := url.Parse(serverURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, &Error{Message: "the server URL is not an http(s) address", Err: err}
	}
	d := &davHTTP{client: client, user: username, password: password}
	c, err := gocaldav.NewClient(d, serverURL)
	if err != nil {
		return nil, &Error{Message: "the server URL is not usable", Err: err}
	}
	return &Client{client: c, http: d, host: u.Hostname()}, nil
}

// fail turns an error of an exchange into a *Error saying what
// went wrong.
func (c *Client) fail(err error, what string) *Error {
	if err == nil {
		return nil
	}
	var ce *Error
	if errors.As(err, &ce) {
		return ce
	}
	status := int(c.http.status.Swap(0))
	e := &Error{Status: status, Err: err}
	var oe *outbound.Error
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Message = "the calendar server refused the username or password (HTTP " + fmt.Sprint(status) + ")"
	case status == http.StatusNotFound:
		e.Message = "the calendar server has no " + what + " at that address (HTTP 404)"
	case status != 0:
		e.Message = fmt.Sprintf("the calendar server answered HTTP %d about the %s", status, what)
	case outbound.IsTimeout(err):
		e.Message = "the calendar server " + c.host + " did not answer in time"
	case errors.As(err, &oe):
		e.Message = "the calendar server " + oe.Error()
	default:
		if oe := outbound.Classify(err, c.host); oe.Kind != outbound.Unreachable || isTransport(err) {
			e.Message = "the calendar server " + oe.Error()
		} else {
			e.Message = "the calendar server's answer about the " + what + " could not be understood"
		}
	}
	return e
}

// isTransport reports whether err came from the connection rather than
// from decoding an answer.
func isTransport(err error) bool {
	var ue *url.Error
	return errors.As(err, &ue)
}

// Calendar is the calendar a connector uses.
type Calendar struct {
	Path string
	Name string
}

// Discover finds the calendar to use: want (a path or URL on the server)
// when given, checked by a query; else the first calendar of the signed-in
// user that holds events.
func (c *Client) Discover(ctx context.Context, want string) (Calendar, error) {
	if want = strings.TrimSpace(want); want != "" {
		path := want
		if u, err := url.Parse(want); err == nil && u.IsAbs() {
			if u.Hostname() != c.host {
				return Calendar{}, &Error{Message: "the calendar URL must be on the calendar server (" + c.host + ")"}
			}
			path = u.EscapedPath()
		}
		if !strings.HasPrefix(path, "/") {
			return Calendar{}, &Error{Message: "the calendar URL must be an absolute path or URL"}
		}
		now := time.Now()
		if _, err := c.events(ctx, path, now, now.Add(time.Minute)); err != nil {
			return Calendar{}, err
		}
		return Calendar{Path: path}, nil
	}
	principal, err := c.client.FindCurrentUserPrincipal(ctx)
	if err != nil {
		return Calendar{}, c.fail(err, "user principal")
	}
	home, err := c.client.FindCalendarHomeSet(ctx, principal)
	if err != nil {
		return Calendar{}, c.fail(err, "calendar home")
	}
	cals, err := c.client.FindCalendars(ctx, home)
	if err != nil {
		return Calendar{}, c.fail(err, "calendar list")
	}
	for _, cal := range cals {
		if len(cal.SupportedComponentSet) == 0 || slices.Contains(cal.SupportedComponentSet, ical.CompEvent) {
			return Calendar{Path: cal.Path, Name: cal.Name}, nil
		}
	}
	return Calendar{}, &Error{Message: "the calendar server lists no calendar that holds events for this user"}
}

// BusyTime is a time the calendar is taken, [Start, End).
type BusyTime struct {
	Start, End time.Time
}

// queryMargin widens each calendar-query: the client keeps only the events
// that overlap, and some servers miss an event that matches the range
// exactly (go-webdav's own matching among them).
const queryMargin = time.Hour

// events checks that path is a calendar the user may read, with a query.
func (c *Client) events(ctx context.Context, path string, from, to time.Time) ([]BusyTime, error) {
	return c.Busy(ctx, path, from, to, time.UTC)
}

// Busy reads the calendar's events overlapping [from, to) with a
// calendar-query and returns the times they take: transparent and
// cancelled events are free time; all-day events take their days in loc;
// recurring events are expanded within the range.
func (c *Client) Busy(ctx context.Context, path string, from, to time.Time, loc *time.Location) ([]BusyTime, error) {
	q := &gocaldav.CalendarQuery{
		CompRequest: gocaldav.CalendarCompRequest{Name: ical.CompCalendar, AllProps: true, AllComps: true},
		CompFilter: gocaldav.CompFilter{Name: ical.CompCalendar,
			Comps: []gocaldav.CompFilter{{Name: ical.CompEvent, Start: from.Add(-queryMargin).UTC(), End: to.Add(queryMargin).UTC()}}},
	}
	objs, err := c.client.QueryCalendar(ctx, path, q)
	if err != nil {
		return nil, c.fail(err, "calendar")
	}
	var out []BusyTime
	for _, o := range objs {
		if o.Data == nil {
			continue
		}
		for _, ev := range o.Data.Events() {
			out = append(out, eventBusy(ev, from, to, loc)...)
		}
	}
	return out, nil
}

// eventBusy is the time one event takes within [from, to).
func eventBusy(ev ical.Event, from, to time.Time, loc *time.Location) []BusyTime {
	if t, _ := ev.Props.Text(ical.PropTransparency); strings.EqualFold(t, "TRANSPARENT") {
		return nil
	}
	if s, _ := ev.Status(); s == ical.EventCancelled {
		return nil
	}
	start, err := ev.DateTimeStart(loc)
	if err != nil || start.IsZero() {
		return nil
	}
	end, err := ev.DateTimeEnd(loc)
	if err != nil || !end.After(start) {
		end = start
	}
	length := end.Sub(start)
	set, err := ev.RecurrenceSet(loc)
	if err != nil || set == nil {
		if end.After(from) && start.Before(to) {
			return []BusyTime{{start, end}}
		}
		return nil
	}
	var out []BusyTime
	for _, s := range set.Between(from.Add(-length), to, true) {
		out = append(out, BusyTime{s, s.Add(length)})
	}
	return out
}

// CreateEvent stores cal as a new calendar object of the calendar at path
// (If-None-Match: *: never over an existing one).
func (c *Client) CreateEvent(ctx context.Context, path, uid string, cal *ical.Calendar) error {
	if _, err := c.client.PutCalendarObject(ctx, strings.TrimSuffix(path, "/")+"/"+uid+".ics", cal); err != nil {
		return c.fail(err, "calendar")
	}
	return nil
}
