package caldav

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-ical"

	"github.com/parley/parley/agent/outbound"
	"github.com/parley/parley/agent/outbound/caldav/caldavtest"
)

// The client reads what the calendar holds as busy: a weekly recurring
// event on each of its days, an all-day event for the whole day in the
// tenant's zone; and a server that does not answer in time, or a private
// address the operator did not exempt, are errors in the owner's words.
func TestCalDAVClient(t *testing.T) {
	t.Parallel()
	cal := caldavtest.Start(t)
	guard := outbound.New([]netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, nil)
	conn, err := Dial(guard.Client(2*time.Second), cal.URL, cal.Username, cal.Password)
	if err != nil {
		t.Fatal(err)
	}
	found, err := conn.Discover(t.Context(), "")
	if err != nil || found.Path != caldavtest.CalendarPath || found.Name != caldavtest.CalendarName {
		t.Fatalf("discover: %+v %v", found, err)
	}
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	cal.AddComponent(func(ev *ical.Event) {
		ev.Props.SetDateTime(ical.PropDateTimeStart, time.Date(2026, 11, 2, 1, 0, 0, 0, time.UTC))
		ev.Props.SetDateTime(ical.PropDateTimeEnd, time.Date(2026, 11, 2, 2, 0, 0, 0, time.UTC))
		rule := ical.NewProp(ical.PropRecurrenceRule)
		rule.Value = "FREQ=WEEKLY;COUNT=10"
		ev.Props.Set(rule)
	})
	cal.AddComponent(func(ev *ical.Event) {
		ev.Props.SetDate(ical.PropDateTimeStart, time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC))
		ev.Props.SetDate(ical.PropDateTimeEnd, time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC))
	})
	busy, err := conn.Busy(t.Context(), found.Path, time.Date(2026, 11, 15, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC), tokyo)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range busy {
		got = append(got, b.Start.UTC().Format(time.RFC3339)+"/"+b.End.Sub(b.Start).String())
	}
	slices.Sort(got)
	want := []string{"2026-11-16T01:00:00Z/1h0m0s", "2026-11-19T15:00:00Z/24h0m0s", "2026-11-23T01:00:00Z/1h0m0s"}
	if !slices.Equal(got, want) {
		t.Errorf("busy %v\nwant %v", got, want)
	}

	// An event exactly the range asked for is busy (go-webdav's server
	// misses it without the query's margin).
	exact := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	cal.AddEvent("Exact", exact, exact.Add(30*time.Minute))
	if busy, err := conn.Busy(t.Context(), found.Path, exact, exact.Add(30*time.Minute), time.UTC); err != nil || len(busy) != 1 {
		t.Errorf("an event exactly the range: %v %v", busy, err)
	}

	cal.Delay.Store(int64(3 * time.Second))
	_, err = conn.Busy(t.Context(), found.Path, time.Now(), time.Now().Add(time.Hour), time.UTC)
	if err == nil || !strings.Contains(err.Error(), "did not answer in time") {
		t.Errorf("slow server: %v", err)
	}
	cal.Delay.Store(0)

	guarded, err := Dial(outbound.New(nil, nil).Client(time.Second), cal.URL, cal.Username, cal.Password)
	if err != nil {
		t.Fatal(err)
	}
	before := cal.Requests.Load()
	if _, err := guarded.Discover(t.Context(), ""); err == nil || !strings.Contains(err.Error(), "refused") || strings.Contains(err.Error(), cal.Password) {
		t.Errorf("private address: %v", err)
	}
	if cal.Requests.Load() != before {
		t.Errorf("the guard let a request through")
	}
}
