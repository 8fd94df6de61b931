// Package caldavtest is an in-process CalDAV server for tests: go-webdav's
// caldav.Handler over an in-memory calendar of one user, behind basic
// authentication, with switches to make it fail.
package caldavtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-ical"
	"github.com/emersion/go-webdav"
	"github.com/emersion/go-webdav/caldav"
)

// The server's paths: the user's principal, calendar home and calendar
// (go-webdav's caldav.Handler tells them apart by their depth).
const (
	Principal    = "/ada/"
	HomeSet      = "/ada/calendars/"
	CalendarPath = "/ada/calendars/work/"
	CalendarName = "Work"
)

// Server is a running CalDAV server.
type Server struct {
	URL                string // the server's base URL (http://127.0.0.1:port/)
	Username, Password string
	// Status, when set, answers every request with this status (503: the
	// server is down for maintenance, 500: it fails).
	Status atomic.Int32
	// Delay, when set, holds every answer that long (a slow server).
	Delay atomic.Int64
	// Requests counts the requests received, authenticated or not.
	Requests atomic.Int64

	mu      sync.Mutex
	objects map[string]*ical.Calendar // by path
	headers []http.Header             // of every request, in order
}

// Start serves a CalDAV server until the test ends. Its one user is
// "ada" with password "app-password-1".
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{Username: "ada", Password: "app-password-1", objects: map[string]*ical.Calendar{}}
	h := &caldav.Handler{Backend: &backend{s: s}}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Requests.Add(1)
		s.mu.Lock()
		s.headers = append(s.headers, r.Header.Clone())
		s.mu.Unlock()
		if d := time.Duration(s.Delay.Load()); d > 0 {
			select {
			case <-time.After(d):
			case <-r.Context().Done():
				return
			}
		}
		if st := int(s.Status.Load()); st != 0 {
			http.Error(w, "unavailable", st)
			return
		}
		user, pass, ok := r.BasicAuth()
		if !ok || user != s.Username || pass != s.Password {
			w.Header().Set("WWW-Authenticate", `Basic realm="caldavtest"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	s.URL = ts.URL + "/"
	return s
}

// Headers returns the headers of every request received so far.
func (s *Server) Headers() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.headers...)
}

// Event is an event of the calendar, as tests check it.
type Event struct {
	UID, Summary, Description string
	Start, End                time.Time
	// Attendees are the ATTENDEE values (mailto:...) with their CN.
	Attendees []Attendee
	Raw       string // the iCalendar text as stored
}

// Attendee is one ATTENDEE of an event.
type Attendee struct {
	Address, Name string
}

// AddEvent puts an event taking [start, end) into the calendar (a meeting
// booked elsewhere); it returns its UID.
func (s *Server) AddEvent(summary string, start, end time.Time) string {
	return s.AddComponent(func(ev *ical.Event) {
		ev.Props.SetText(ical.PropSummary, summary)
		ev.Props.SetDateTime(ical.PropDateTimeStart, start.UTC())
		ev.Props.SetDateTime(ical.PropDateTimeEnd, end.UTC())
	})
}

// AddComponent puts an event that fill describes into the calendar; it
// returns its UID.
func (s *Server) AddComponent(fill func(*ical.Event)) string {
	b := make([]byte, 8)
	rand.Read(b)
	uid := hex.EncodeToString(b) + "@caldavtest"
	cal := ical.NewCalendar()
	cal.Props.SetText(ical.PropVersion, "2.0")
	cal.Props.SetText(ical.PropProductID, "-//caldavtest//EN")
	ev := ical.NewEvent()
	ev.Props.SetText(ical.PropUID, uid)
	ev.Props.SetDateTime(ical.PropDateTimeStamp, time.Now().UTC())
	fill(ev)
	cal.Children = append(cal.Children, ev.Component)
	s.mu.Lock()
	s.objects[CalendarPath+uid+".ics"] = cal
	s.mu.Unlock()
	return uid
}

// Events lists the calendar's events, by start.
func (s *Server) Events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Event
	for _, cal := range s.objects {
		var buf bytes.Buffer
		_ = ical.NewEncoder(&buf).Encode(cal)
		for _, ev := range cal.Events() {
			e := Event{Raw: buf.String()}
			e.UID, _ = ev.Props.Text(ical.PropUID)
			e.Summary, _ = ev.Props.Text(ical.PropSummary)
			e.Description, _ = ev.Props.Text(ical.PropDescription)
			e.Start, _ = ev.DateTimeStart(time.UTC)
			e.End, _ = ev.DateTimeEnd(time.UTC)
			for _, a := range ev.Props.Values(ical.PropAttendee) {
				e.Attendees = append(e.Attendees, Attendee{Address: a.Value, Name: a.Params.Get(ical.ParamCommonName)})
			}
			out = append(out, e)
		}
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Start.Before(out[j-1].Start); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// backend is the in-memory calendar of the server's one user.
type backend struct{ s *Server }

var errNotFound = webdav.NewHTTPError(http.StatusNotFound, errors.New("not found"))

func (b *backend) CurrentUserPrincipal(context.Context) (string, error) { return Principal, nil }
func (b *backend) CalendarHomeSetPath(context.Context) (string, error)  { return HomeSet, nil }

func (b *backend) CreateCalendar(context.Context, *caldav.Calendar) error {
	return webdav.NewHTTPError(http.StatusForbidden, errors.New("calendars cannot be created"))
}

func (b *backend) calendar() caldav.Calendar {
	return caldav.Calendar{Path: CalendarPath, Name: CalendarName, SupportedComponentSet: []string{ical.CompEvent}}
}

func (b *backend) ListCalendars(context.Context) ([]caldav.Calendar, error) {
	return []caldav.Calendar{b.calendar()}, nil
}

func (b *backend) GetCalendar(_ context.Context, p string) (*caldav.Calendar, error) {
	if strings.TrimSuffix(p, "/") != strings.TrimSuffix(CalendarPath, "/") {
		return nil, errNotFound
	}
	c := b.calendar()
	return &c, nil
}

func (b *backend) object(p string, cal *ical.Calendar) caldav.CalendarObject {
	var buf bytes.Buffer
	_ = ical.NewEncoder(&buf).Encode(cal)
	sum := hex.EncodeToString([]byte(path.Base(p)))
	return caldav.CalendarObject{Path: p, ModTime: time.Now(), ContentLength: int64(buf.Len()), ETag: sum, Data: cal}
}

func (b *backend) GetCalendarObject(_ context.Context, p string, _ *caldav.CalendarCompRequest) (*caldav.CalendarObject, error) {
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	cal, ok := b.s.objects[p]
	if !ok {
		return nil, errNotFound
	}
	o := b.object(p, cal)
	return &o, nil
}

func (b *backend) ListCalendarObjects(_ context.Context, p string, _ *caldav.CalendarCompRequest) ([]caldav.CalendarObject, error) {
	if strings.TrimSuffix(p, "/") != strings.TrimSuffix(CalendarPath, "/") {
		return nil, errNotFound
	}
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	var out []caldav.CalendarObject
	for op, cal := range b.s.objects {
		out = append(out, b.object(op, cal))
	}
	return out, nil
}

func (b *backend) QueryCalendarObjects(ctx context.Context, p string, q *caldav.CalendarQuery) ([]caldav.CalendarObject, error) {
	all, err := b.ListCalendarObjects(ctx, p, nil)
	if err != nil {
		return nil, err
	}
	return caldav.Filter(q, all)
}

func (b *backend) PutCalendarObject(_ context.Context, p string, cal *ical.Calendar, opts *caldav.PutCalendarObjectOptions) (*caldav.CalendarObject, error) {
	if path.Dir(p)+"/" != CalendarPath {
		return nil, errNotFound
	}
	if _, _, err := caldav.ValidateCalendarObject(cal); err != nil {
		return nil, webdav.NewHTTPError(http.StatusBadRequest, err)
	}
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	if _, exists := b.s.objects[p]; exists && opts != nil && opts.IfNoneMatch.IsWildcard() {
		return nil, webdav.NewHTTPError(http.StatusPreconditionFailed, errors.New("exists"))
	}
	b.s.objects[p] = cal
	o := b.object(p, cal)
	return &o, nil
}

func (b *backend) DeleteCalendarObject(_ context.Context, p string) error {
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	if _, ok := b.s.objects[p]; !ok {
		return errNotFound
	}
	delete(b.s.objects, p)
	return nil
}
