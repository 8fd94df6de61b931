package api_test

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/web/webtest"
)

// The settings of a person's part in the tenant's conversations (issue 36):
// when a person can answer, how long an escalated conversation waits for
// one, how long a person's silence hands a taken one back.
func TestTenantPeopleSettings(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)

	t.Run("Defaults", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "starter")
		got := b.GetTenant(t, ten)
		want := map[string]any{"humanHours": map[string]any{"mode": "always"}, "humanWaitSeconds": 180.0, "humanIdleSeconds": 600.0}
		for k, v := range want {
			if !reflect.DeepEqual(got[k], v) {
				t.Errorf("%s = %#v, want %#v", k, got[k], v)
			}
		}
	})

	weekly := map[string]any{"mode": "weekly", "days": map[string]any{
		"monday": map[string]any{"start": "09:00", "end": "18:00"}, "saturday": map[string]any{"start": "10:00", "end": "12:30"}}}
	for _, tc := range []struct {
		name   string
		body   map[string]any
		field  string // the field refused; "" when accepted
		errHas string
	}{
		{name: "wait 30", body: map[string]any{"humanWaitSeconds": 30}},
		{name: "wait 29", body: map[string]any{"humanWaitSeconds": 29}, field: "humanWaitSeconds", errHas: "between 30 and 3600"},
		{name: "wait 3600", body: map[string]any{"humanWaitSeconds": 3600}},
		{name: "wait 3601", body: map[string]any{"humanWaitSeconds": 3601}, field: "humanWaitSeconds", errHas: "between 30 and 3600"},
		{name: "wait string", body: map[string]any{"humanWaitSeconds": "180"}, field: "humanWaitSeconds", errHas: "must be an integer"},
		{name: "wait fraction", body: map[string]any{"humanWaitSeconds": 180.5}, field: "humanWaitSeconds", errHas: "must be an integer"},
		{name: "wait null", body: map[string]any{"humanWaitSeconds": nil}, field: "humanWaitSeconds", errHas: "null"},
		{name: "idle 60", body: map[string]any{"humanIdleSeconds": 60}},
		{name: "idle 59", body: map[string]any{"humanIdleSeconds": 59}, field: "humanIdleSeconds", errHas: "between 60 and 86400"},
		{name: "idle 86400", body: map[string]any{"humanIdleSeconds": 86400}},
		{name: "idle 86401", body: map[string]any{"humanIdleSeconds": 86401}, field: "humanIdleSeconds", errHas: "between 60 and 86400"},
		{name: "idle boolean", body: map[string]any{"humanIdleSeconds": true}, field: "humanIdleSeconds", errHas: "must be an integer"},
		{name: "hours always", body: map[string]any{"humanHours": map[string]any{"mode": "always"}}},
		{name: "hours weekly", body: map[string]any{"humanHours": weekly}},
		{name: "hours weekly without days", body: map[string]any{"humanHours": map[string]any{"mode": "weekly"}}, field: "humanHours", errHas: "at least one day"},
		{name: "hours weekly end before start", body: map[string]any{"humanHours": map[string]any{"mode": "weekly",
			"days": map[string]any{"monday": map[string]any{"start": "18:00", "end": "09:00"}}}}, field: "humanHours", errHas: "monday: start must be before end"},
		{name: "hours weekly not a weekday", body: map[string]any{"humanHours": map[string]any{"mode": "weekly",
			"days": map[string]any{"someday": map[string]any{"start": "09:00", "end": "10:00"}}}}, field: "humanHours", errHas: "not a weekday"},
		{name: "hours days without weekly", body: map[string]any{"humanHours": map[string]any{"mode": "always", "days": weekly["days"]}}, field: "humanHours", errHas: "only with mode weekly"},
		{name: "hours calendar without one", body: map[string]any{"humanHours": map[string]any{"mode": "calendar"}}, field: "humanHours", errHas: "connect a calendar"},
		{name: "hours unknown mode", body: map[string]any{"humanHours": map[string]any{"mode": "sometimes"}}, field: "humanHours", errHas: "always, calendar or weekly"},
		{name: "hours a string", body: map[string]any{"humanHours": "always"}, field: "humanHours", errHas: "must be an object"},
		{name: "hours mode a number", body: map[string]any{"humanHours": map[string]any{"mode": 1}}, field: "humanHours", errHas: "mode must be a string"},
		{name: "hours null", body: map[string]any{"humanHours": nil}, field: "humanHours", errHas: "null"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ten := b.NewTenant(t, "starter")
			status, body, raw := b.Request(t, "PUT", "/tenants/"+ten.Slug, webtest.Bearer(ten.Token), jsonBody(t, tc.body))
			if tc.field != "" {
				if status != http.StatusBadRequest {
					t.Fatalf("status %d, want 400: %.500s", status, raw)
				}
				checkErrorShape(t, status, body, raw)
				d := webtest.Details(t, body)
				if len(d) != 1 || !strings.Contains(fmt.Sprint(d[tc.field]), tc.errHas) {
					t.Errorf("details %v, want %s mentioning %q", d, tc.field, tc.errHas)
				}
				return
			}
			if status != http.StatusOK {
				t.Fatalf("status %d, want 200: %.500s", status, raw)
			}
			got := b.GetTenant(t, ten)
			for k, v := range tc.body {
				if !reflect.DeepEqual(got[k], jsonValue(t, v)) {
					t.Errorf("after GET, %s = %#v, want %#v", k, got[k], jsonValue(t, v))
				}
			}
		})
	}

	t.Run("CalendarHoursWithAConnector", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "starter")
		if _, err := b.DB.SaveCalendarConnector(context.Background(), parley.CalendarConnector{TenantID: ten.ID,
			ServerURL: "https://dav.example.com", Username: "u", SealedPassword: []byte("x"), CalendarURL: "/cal/",
			OfficeHours: parley.DefaultOfficeHours()}); err != nil {
			t.Fatal(err)
		}
		status, body := b.Do(t, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"humanHours": map[string]any{"mode": "calendar"}})
		if status != http.StatusOK || !reflect.DeepEqual(body["humanHours"], map[string]any{"mode": "calendar"}) {
			t.Fatalf("%d %v", status, body["humanHours"])
		}
	})
}
