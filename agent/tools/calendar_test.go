package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound"
	"github.com/parley/parley/agent/outbound/caldav"
	"github.com/parley/parley/agent/outbound/caldav/caldavtest"
	"github.com/parley/parley/agent/outbound/llm"
	"github.com/parley/parley/agent/tools/toolstest"
)

func starts(slots []time.Time, loc *time.Location) []string {
	out := []string{}
	for _, s := range slots {
		out = append(out, s.In(loc).Format("Mon 15:04 -07:00"))
	}
	return out
}

// Slots follow the office hours on the wall clock of the tenant's zone,
// across a change of daylight saving time; the buffer keeps room on both
// sides of busy times; the minimum notice and the booking window bound
// them.
func TestFreeSlots(t *testing.T) {
	t.Parallel()
	paris, _ := time.LoadLocation("Europe/Paris")
	rules := SlotRules{
		Hours: parley.OfficeHours{"saturday": {Start: "09:00", End: "10:00"}, "sunday": {Start: "09:00", End: "10:00"}, "monday": {Start: "09:00", End: "10:00"}},
		Loc:   paris,
		// Saturday 24 October 2026, 07:00: summer time ends on the 25th at 03:00.
		Now:     time.Date(2026, 10, 24, 7, 0, 0, 0, paris),
		Meeting: parley.MeetingConfig{DurationMinutes: 20, BufferMinutes: 10, BookingWindowDays: 2, MinNoticeHours: 2},
	}
	from := time.Date(2026, 10, 24, 0, 0, 0, 0, paris)
	busy := []caldav.BusyTime{{Start: time.Date(2026, 10, 25, 9, 30, 0, 0, paris), End: time.Date(2026, 10, 25, 9, 40, 0, 0, paris)}}
	got := starts(rules.FreeSlots(busy, from, from.AddDate(0, 0, 7), 50), paris)
	// 20-minute meetings every 15 minutes; Saturday from 09:00 (2 hours'
	// notice); Sunday (now UTC+1) loses 09:15 and 09:30 to the busy time
	// and its 10-minute buffer; Monday is past the 2-day window.
	want := []string{"Sat 09:00 +02:00", "Sat 09:15 +02:00", "Sat 09:30 +02:00", "Sun 09:00 +01:00"}
	if !slices.Equal(got, want) {
		t.Errorf("slots %v\nwant %v", got, want)
	}
	for _, tc := range []struct {
		at   time.Time
		want string
	}{
		{time.Date(2026, 10, 24, 9, 0, 0, 0, paris), ""},
		{time.Date(2026, 10, 24, 9, 40, 0, 0, paris), ""}, // ends at 10:00 sharp
		{time.Date(2026, 10, 24, 9, 41, 0, 0, paris), "outside the office hours"},
		{time.Date(2026, 10, 24, 8, 59, 0, 0, paris), "outside the office hours"},
		{time.Date(2026, 10, 24, 8, 0, 0, 0, time.UTC), "outside the office hours"}, // 10:00 in Paris
		{time.Date(2026, 10, 27, 9, 0, 0, 0, paris), "no meetings on Tuesday"},
		{time.Date(2026, 10, 26, 9, 0, 0, 0, paris), "at most 2 day(s) ahead"},
	} {
		if got := rules.Bookable(tc.at); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("Bookable(%s) = %q, want %q", tc.at, got, tc.want)
		}
	}
	rules.Now = time.Date(2026, 10, 24, 7, 1, 0, 0, paris)
	if got := rules.Bookable(time.Date(2026, 10, 24, 9, 0, 0, 0, paris)); !strings.Contains(got, "at least 2 hour(s) ahead") {
		t.Errorf("one minute short of the notice: %q", got)
	}
}

// lockStore serializes bookings as db.LockCalendar does, in process.
type lockStore struct{ mu sync.Mutex }

func (s *lockStore) CalendarConnector(context.Context, string) (*parley.CalendarConnector, error) {
	return nil, nil
}

func (s *lockStore) LockCalendar(ctx context.Context, _ string, fn func(context.Context) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fn(ctx)
}

// Two visitors booking the same slot at once: the slot is re-checked under
// the tenant's calendar lock, so one gets it and the other is told it was
// taken, with other slots; the calendar holds one event.
func TestBookMeetingConcurrent(t *testing.T) {
	t.Parallel()
	cal := caldavtest.Start(t)
	guard := outbound.New([]netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, nil)
	store := &lockStore{}
	now := time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC)
	tool := toolstest.Tool(t, "Demo", parley.ToolBookMeeting, parley.MeetingConfig{DurationMinutes: 30, BookingWindowDays: 7})
	registry := func() *Registry {
		conn, err := caldav.Dial(guard.Client(5*time.Second), cal.URL, cal.Username, cal.Password)
		if err != nil {
			t.Fatal(err)
		}
		cb := &CalendarBooking{Store: store, Server: conn, Path: caldavtest.CalendarPath, Loc: time.UTC, TenantID: "t1", BotName: "Bot",
			Hours: parley.OfficeHours{"monday": {Start: "09:00", End: "17:00"}}}
		return NewRegistry([]parley.Tool{tool}, Deps{Calendar: cb, Now: func() time.Time { return now }})
	}
	var wg sync.WaitGroup
	results := make([]Execution, 8)
	for i := range results {
		reg := registry()
		wg.Go(func() {
			results[i] = reg.Execute(t.Context(), llm.ToolCall{ID: "c", Name: "demo",
				Arguments: json.RawMessage(fmt.Sprintf(`{"start":"2026-11-30T10:00:00Z","name":"V%d","email":"v%d@example.com"}`, i, i))})
		})
	}
	wg.Wait()
	booked := 0
	for _, ex := range results {
		switch {
		case ex.Success && ex.Submission != nil:
			booked++
		case !strings.Contains(ex.Summary, "no longer free") || !strings.Contains(ex.Summary, "Monday 30 November 2026, 09:00–09:30"):
			t.Errorf("refused booking: %q", ex.Summary)
		}
	}
	if booked != 1 || len(cal.Events()) != 1 {
		t.Errorf("%d booked, %d events; want 1 and 1", booked, len(cal.Events()))
	}
}

// check_availability lists at most MaxSlots slots: exactly MaxSlots free
// slots are all listed without more; one day more lists MaxSlots and says
// more exist.
func TestAvailabilityMaxSlots(t *testing.T) {
	t.Parallel()
	cal := caldavtest.Start(t)
	guard := outbound.New([]netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, nil)
	conn, err := caldav.Dial(guard.Client(5*time.Second), cal.URL, cal.Username, cal.Password)
	if err != nil {
		t.Fatal(err)
	}
	// Four 30-minute slots a weekday, from Monday 30 November 2026.
	hours := parley.OfficeHours{}
	for _, d := range parley.Weekdays[:5] {
		hours[d] = parley.DayHours{Start: "09:00", End: "11:00"}
	}
	now := time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC)
	tool := toolstest.Tool(t, "Demo", parley.ToolBookMeeting, parley.MeetingConfig{DurationMinutes: 30, BookingWindowDays: 30})
	cb := &CalendarBooking{Server: conn, Path: caldavtest.CalendarPath, Loc: time.UTC, TenantID: "t1", BotName: "Bot", Hours: hours}
	reg := NewRegistry([]parley.Tool{tool}, Deps{Calendar: cb, Now: func() time.Time { return now }})
	for _, tc := range []struct {
		to    string
		slots int
		more  bool
	}{
		{"2026-12-04", MaxSlots, false}, // Monday to Friday: 5 × 4
		{"2026-12-07", MaxSlots, true},  // and Monday: 24 free
	} {
		ex := reg.Execute(t.Context(), llm.ToolCall{ID: "c", Name: checkAvailabilityTool,
			Arguments: json.RawMessage(`{"from":"2026-11-30","to":"` + tc.to + `"}`)})
		slots, _ := ex.Result["slots"].([]Slot)
		if !ex.Success || len(slots) != tc.slots || ex.Result["more"] != tc.more {
			t.Errorf("to %s: success %v, %d slots, more %v; want %d, %v (%s)", tc.to, ex.Success, len(slots), ex.Result["more"], tc.slots, tc.more, ex.Summary)
		}
	}
}
