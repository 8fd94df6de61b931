package admin_test

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/web/webtest"
)

// The "Live chat with your team" settings (issue 36): when a person can
// answer, how long visitors wait, when the assistant takes a silent
// conversation back; saved with the API's rules.
func TestAdminTeamSettings(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.OwnedTenant(t, "starter")
	c := b.NewAdminClient(t)
	c.SignIn(ten)
	const page = "/admin/settings/team"
	form := func(t *testing.T) (webtest.AdminPage, map[string][]string) {
		t.Helper()
		p := c.As(t).Get(page)
		if p.Status != http.StatusOK {
			t.Fatalf("GET: %d", p.Status)
		}
		return p, webtest.FormValues(p.Doc.Find("#team-form"))
	}

	p, f := form(t)
	if got := f["hours"]; len(got) != 1 || got[0] != "always" || f["humanWaitSeconds"][0] != "180" || f["humanIdleSeconds"][0] != "600" ||
		f["timezone"][0] != "UTC" {
		t.Fatalf("defaults shown: %v", f)
	}
	if p.Doc.Find("#hours-calendar[disabled]").Length() != 1 || p.Text("#humanWaitSeconds option[selected]") != "3 minutes" {
		t.Errorf("without a calendar its hours cannot be chosen; wait shown as %q", p.Text("#humanWaitSeconds option[selected]"))
	}
	if p.Doc.Find(`nav.tabs a[aria-current="page"][href="/admin/settings/team"]`).Length() != 1 {
		t.Errorf("the tab is not current")
	}

	t.Run("RefusedShowsWhatWasChosen", func(t *testing.T) {
		_, f := form(t)
		f["hours"] = []string{"weekly"}
		f["open_monday"], f["start_monday"], f["end_monday"] = []string{"true"}, []string{"18:00"}, []string{"09:00"}
		f["humanWaitSeconds"] = []string{"3601"}
		f["timezone"] = []string{"Mars/Olympus"}
		p := c.As(t).Submit(page, f)
		if p.Status != http.StatusUnprocessableEntity {
			t.Fatalf("status %d", p.Status)
		}
		for id, want := range map[string]string{"#err-humanHours": "monday: start must be before end",
			"#err-humanWaitSeconds": "between 30 and 3600", "#err-timezone": "time zone"} {
			if got := p.Text(id); !strings.Contains(got, want) {
				t.Errorf("%s = %q, want %q", id, got, want)
			}
		}
		if v := webtest.FormValues(p.Doc.Find("#team-form")); v["hours"][0] != "weekly" || v["start_monday"][0] != "18:00" || v["timezone"][0] != "Mars/Olympus" {
			t.Errorf("the form lost what was chosen: %v", v)
		}
		if got := b.TenantNow(t, ten.Slug); got.HumanHours.Mode != parley.HoursAlways || got.HumanWaitSeconds != 180 {
			t.Errorf("a refused form was saved: %+v %d", got.HumanHours, got.HumanWaitSeconds)
		}
	})

	t.Run("Saved", func(t *testing.T) {
		_, f := form(t)
		f["hours"] = []string{"weekly"}
		for _, d := range []string{"saturday", "sunday"} {
			f["open_"+d] = []string{"true"}
			f["start_"+d], f["end_"+d] = []string{"10:00"}, []string{"12:30"}
		}
		delete(f, "open_friday")
		f["humanWaitSeconds"], f["humanIdleSeconds"], f["timezone"] = []string{"60"}, []string{"3600"}, []string{"Europe/Paris"}
		if p := c.As(t).Submit(page, f); p.Status != http.StatusSeeOther || p.Location() != page {
			t.Fatalf("status %d to %q: %s", p.Status, p.Location(), p.Text("#form-errors"))
		}
		got := b.TenantNow(t, ten.Slug)
		want := parley.OfficeHours{"monday": {Start: "09:00", End: "17:00"}, "tuesday": {Start: "09:00", End: "17:00"},
			"wednesday": {Start: "09:00", End: "17:00"}, "thursday": {Start: "09:00", End: "17:00"},
			"saturday": {Start: "10:00", End: "12:30"}, "sunday": {Start: "10:00", End: "12:30"}}
		if got.HumanHours.Mode != parley.HoursWeekly || !reflect.DeepEqual(got.HumanHours.Days, want) ||
			got.HumanWaitSeconds != 60 || got.HumanIdleSeconds != 3600 || got.Timezone != "Europe/Paris" {
			t.Fatalf("stored %+v, wait %d, idle %d, %s", got.HumanHours, got.HumanWaitSeconds, got.HumanIdleSeconds, got.Timezone)
		}
		p, f := form(t)
		if f["hours"][0] != "weekly" || len(f["open_friday"]) != 0 || f["start_sunday"][0] != "10:00" ||
			p.Text("#humanIdleSeconds option[selected]") != "1 hour" {
			t.Errorf("shown after saving: %v", f)
		}
	})

	t.Run("AWaitTheAPISetIsKept", func(t *testing.T) {
		if _, err := b.DB.Pool().Exec(context.Background(), `UPDATE tenants SET human_wait_seconds = 95 WHERE id = $1`, ten.ID); err != nil {
			t.Fatal(err)
		}
		p, f := form(t)
		if f["humanWaitSeconds"][0] != "95" || p.Text("#humanWaitSeconds option[selected]") != "95 seconds" {
			t.Errorf("shown %v %q", f["humanWaitSeconds"], p.Text("#humanWaitSeconds option[selected]"))
		}
	})
}
