package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley/agent/outbound/caldav/caldavtest"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/web/webtest"
)

// The calendar connector's API: connect (the calendar discovered, or the
// one given checked, on the real CalDAV server), read without the password,
// test (the next free slots), disconnect; every bad input a 400 naming its
// field, the credentials refused by the server a 400 on password, the
// stored password never sent to another server, and another tenant's slug
// a 404.
func TestCalendarConnectorAPI(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	b.WithOutbound(t, true, nil)
	cal := caldavtest.Start(t)
	ten := b.NewTenant(t, "starter")
	base := "/tenants/" + ten.Slug + "/integrations/calendar"

	got := b.MustDo(t, 200, "GET", base, ten.Token, nil)
	if got["connected"] != false || got["serverUrl"] != nil || got["hasPassword"] != false || got["timezone"] != "UTC" {
		t.Fatalf("before connecting: %v", got)
	}
	b.MustDo(t, 404, "POST", base+"/test", ten.Token, nil)
	b.MustDo(t, 404, "DELETE", base, ten.Token, nil)

	t.Run("BadInputs", func(t *testing.T) {
		for _, tc := range []struct {
			name  string
			body  any
			field string
			has   string
		}{
			{"no server", webtest.CalendarBody(cal, map[string]any{"serverUrl": nil}), "serverUrl", "required"},
			{"server not a URL", webtest.CalendarBody(cal, map[string]any{"serverUrl": "caldav.example.com"}), "serverUrl", "absolute URL"},
			{"server wrong type", webtest.CalendarBody(cal, map[string]any{"serverUrl": 42}), "serverUrl", "must be a string"},
			{"credentials in URL", webtest.CalendarBody(cal, map[string]any{"serverUrl": strings.Replace(cal.URL, "http://", "http://ada:pw@", 1)}), "serverUrl", "credentials"},
			{"plain http elsewhere", webtest.CalendarBody(cal, map[string]any{"serverUrl": "http://caldav.example.com/"}), "serverUrl", "https"},
			{"private address", webtest.CalendarBody(cal, map[string]any{"serverUrl": "https://10.0.0.1/"}), "serverUrl", "private"},
			{"server 501", webtest.CalendarBody(cal, map[string]any{"serverUrl": "https://caldav.example.com/" + strings.Repeat("a", 501-27)}), "serverUrl", "at most 500"},
			{"calendar 1001", webtest.CalendarBody(cal, map[string]any{"calendarUrl": "/" + strings.Repeat("c", 1000)}), "calendarUrl", "at most 1000"},
			{"calendar 1000", webtest.CalendarBody(cal, map[string]any{"calendarUrl": "/" + strings.Repeat("c", 999)}), "calendarUrl", "404"},
			{"no username", webtest.CalendarBody(cal, map[string]any{"username": ""}), "username", "required"},
			{"username 201", webtest.CalendarBody(cal, map[string]any{"username": strings.Repeat("u", 201)}), "username", "at most 200"},
			{"no password", webtest.CalendarBody(cal, map[string]any{"password": nil}), "password", "required"},
			{"password 501", webtest.CalendarBody(cal, map[string]any{"password": strings.Repeat("p", 501)}), "password", "at most 500"},
			{"hours not an object", webtest.CalendarBody(cal, map[string]any{"officeHours": "9-5"}), "officeHours", "object"},
			{"hours null", map[string]any{"serverUrl": cal.URL, "username": "ada", "password": cal.Password, "officeHours": nil}, "officeHours", "object"},
			// At the limits the checks pass and the server has its say.
			{"username 200", webtest.CalendarBody(cal, map[string]any{"username": strings.Repeat("u", 200)}), "password", "refused"},
			{"username 200 and spaces", webtest.CalendarBody(cal, map[string]any{"username": " " + strings.Repeat("u", 200) + " "}), "password", "refused"},
			{"password 500", webtest.CalendarBody(cal, map[string]any{"password": strings.Repeat("p", 500)}), "password", "refused"},
			{"unknown day", webtest.CalendarBody(cal, map[string]any{"officeHours": map[string]any{"funday": map[string]any{"start": "09:00", "end": "10:00"}}}), "officeHours", "weekday"},
			{"bad time", webtest.CalendarBody(cal, map[string]any{"officeHours": map[string]any{"monday": map[string]any{"start": "9am", "end": "10:00"}}}), "officeHours", "HH:MM"},
			{"25:00", webtest.CalendarBody(cal, map[string]any{"officeHours": map[string]any{"monday": map[string]any{"start": "09:00", "end": "25:00"}}}), "officeHours", "HH:MM"},
			{"start after end", webtest.CalendarBody(cal, map[string]any{"officeHours": map[string]any{"monday": map[string]any{"start": "17:00", "end": "09:00"}}}), "officeHours", "before end"},
			{"wrong password", webtest.CalendarBody(cal, map[string]any{"password": "nope"}), "password", "refused the username or password"},
			{"no such calendar", webtest.CalendarBody(cal, map[string]any{"calendarUrl": "/ada/calendars/missing/"}), "calendarUrl", "404"},
			{"calendar on another host", webtest.CalendarBody(cal, map[string]any{"calendarUrl": "https://evil.example.com/dav/"}), "calendarUrl", "must be on the calendar server"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				status, got := b.Do(t, "PUT", base, ten.Token, tc.body)
				if status != 400 {
					t.Fatalf("got %d %v", status, got)
				}
				if msg, _ := webtest.Details(t, got)[tc.field].(string); !strings.Contains(msg, tc.has) {
					t.Errorf("details %v, want %s: ...%s...", got["details"], tc.field, tc.has)
				}
			})
		}
		if n := b.Count(t, `SELECT count(*) FROM calendar_connectors WHERE tenant_id = $1`, ten.ID); n != 0 {
			t.Errorf("a refused save stored a connector")
		}
		status, got := b.Do(t, "PUT", base, ten.Token, `[]`)
		if status != 400 || got["error"] != "Request body must be a JSON object" {
			t.Errorf("array body: %d %v", status, got)
		}
	})

	t.Run("ConnectDiscoverAndShow", func(t *testing.T) {
		got := b.MustDo(t, 200, "PUT", base, ten.Token, webtest.CalendarBody(cal, map[string]any{
			"officeHours": map[string]any{"monday": map[string]any{"start": "00:00", "end": "24:00"}, "sunday": nil}}))
		if got["connected"] != true || got["hasPassword"] != true || got["calendarUrl"] != caldavtest.CalendarPath || got["calendarName"] != caldavtest.CalendarName {
			t.Fatalf("connected: %v", got)
		}
		if _, there := got["password"]; there {
			t.Errorf("the password is echoed: %v", got)
		}
		hours := got["officeHours"].(map[string]any)
		if len(hours) != 1 || hours["monday"] == nil {
			t.Errorf("office hours %v", hours)
		}
		shown := b.MustDo(t, 200, "GET", base, ten.Token, nil)
		if shown["calendarUrl"] != caldavtest.CalendarPath || shown["hasPassword"] != true {
			t.Errorf("shown %v", shown)
		}
		var sealed []byte
		if err := b.DB.Pool().QueryRow(t.Context(), `SELECT password FROM calendar_connectors WHERE tenant_id = $1`, ten.ID).Scan(&sealed); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(sealed), cal.Password) {
			t.Errorf("the password is stored in clear")
		}
	})

	t.Run("KeepPasswordSameServerOnly", func(t *testing.T) {
		// Absent password: the stored one is used (the server accepts it).
		b.MustDo(t, 200, "PUT", base, ten.Token, webtest.CalendarBody(cal, map[string]any{"password": nil, "calendarUrl": cal.URL + "ada/calendars/work/"}))
		// Another server: the stored password is not sent there.
		other := caldavtest.Start(t)
		before := other.Requests.Load()
		status, got := b.Do(t, "PUT", base, ten.Token, webtest.CalendarBody(other, map[string]any{"password": nil}))
		if status != 400 || !strings.Contains(webtest.Details(t, got)["password"].(string), "server changes") {
			t.Fatalf("another server without a password: %d %v", status, got)
		}
		if other.Requests.Load() != before {
			t.Errorf("the other server was called")
		}
		for _, h := range cal.Headers() {
			if _, _, ok := basicAuth(h); !ok {
				t.Fatalf("a request without credentials: %v", h)
			}
		}
	})

	t.Run("Test", func(t *testing.T) {
		got := b.MustDo(t, 200, "POST", base+"/test", ten.Token, nil)
		slots, _ := got["slots"].([]any)
		if got["ok"] != true || len(slots) != 5 || got["meeting"] != nil || got["durationMinutes"] != float64(30) {
			t.Fatalf("test: %v", got)
		}
		first := slots[0].(map[string]any)
		start, err := time.Parse(time.RFC3339, first["start"].(string))
		if err != nil || start.Weekday() != time.Monday || start.Before(time.Now().Add(2*time.Hour-time.Minute)) {
			t.Errorf("first slot %v: only Mondays are open, from 2 hours ahead", first)
		}
		cal.Status.Store(503)
		defer cal.Status.Store(0)
		status, body := b.Do(t, "POST", base+"/test", ten.Token, nil)
		if status != 502 || body["code"] != "CALENDAR_UNAVAILABLE" || !strings.Contains(body["error"].(string), "HTTP 503") ||
			strings.Contains(body["error"].(string), cal.Password) {
			t.Errorf("server down: %d %v", status, body)
		}
	})

	t.Run("ScopesAndIsolation", func(t *testing.T) {
		readOnly := b.Token(t, ten.ID, auth.ScopeSettingsRead)
		b.MustDo(t, 200, "GET", base, readOnly, nil)
		b.MustDo(t, 403, "PUT", base, readOnly, webtest.CalendarBody(cal, nil))
		b.MustDo(t, 403, "POST", base+"/test", readOnly, nil)
		b.MustDo(t, 403, "DELETE", base, readOnly, nil)
		b.MustDo(t, 401, "GET", base, "", nil)
		other := b.NewTenant(t, "starter")
		for _, m := range []string{"GET", "PUT", "DELETE"} {
			b.MustDo(t, 404, m, base, other.Token, webtest.CalendarBody(cal, nil))
		}
		b.MustDo(t, 404, "POST", base+"/test", other.Token, nil)
		if got := b.MustDo(t, 200, "GET", "/tenants/"+other.Slug+"/integrations/calendar", other.Token, nil); got["connected"] != false {
			t.Errorf("the other tenant sees a calendar: %v", got)
		}
	})

	t.Run("Disconnect", func(t *testing.T) {
		b.MustDo(t, 200, "DELETE", base, ten.Token, nil)
		if got := b.MustDo(t, 200, "GET", base, ten.Token, nil); got["connected"] != false || got["hasPassword"] != false {
			t.Errorf("after delete: %v", got)
		}
		b.MustDo(t, 404, "DELETE", base, ten.Token, nil)
	})
}

// basicAuth reads the basic credentials of a request's headers.
func basicAuth(h http.Header) (string, string, bool) {
	return (&http.Request{Header: h}).BasicAuth()
}
