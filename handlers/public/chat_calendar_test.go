package public_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-ical"

	"github.com/parley/parley/agent/outbound/caldav/caldavtest"
	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/web/webtest"
)

// slotStarts are the starts of a check_availability result's slots.
func slotStarts(t *testing.T, res map[string]any, key string) []string {
	t.Helper()
	inner, _ := res["result"].(map[string]any)
	list, ok := inner[key].([]any)
	if !ok {
		t.Fatalf("no %s in %v", key, res)
	}
	out := []string{}
	for _, s := range list {
		out = append(out, s.(map[string]any)["start"].(string))
	}
	return out
}

// Meetings through the real chat endpoint, against a real CalDAV server:
// BOOK_MEETING is offered with CHECK_AVAILABILITY only once the calendar is
// connected; the slots respect the office hours, the minimum notice, the
// buffer around busy events and the tenant's time zone; a booking creates
// the event with the visitor as attendee and a submission; a slot taken
// meanwhile (or booked twice) is refused with other slots; a calendar that
// fails is a tool result the model can explain; bad arguments are refused
// at their limits.
func TestChatCalendar(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	var logs webtest.LogBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	b.LogTo(logger)
	b.WithOutbound(t, true, nil)
	paris, _ := time.LoadLocation("Europe/Paris")
	// Monday 30 November 2026, 08:00 in Paris (07:00 UTC).
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, paris)
	b.Srv.Base.Now = func() time.Time { return now }
	cal := caldavtest.Start(t)

	ten := b.NewTenant(t, "starter")
	base := "/tenants/" + ten.Slug
	b.MustDo(t, 200, "PUT", base, ten.Token, map[string]any{"timezone": "Europe/Paris"})
	b.MustDo(t, 201, "POST", base+"/tools", ten.Token, map[string]any{"name": "Book demo", "description": "Book a product demo", "type": "BOOK_MEETING",
		"config": map[string]any{"durationMinutes": 30, "bufferMinutes": 15, "bookingWindowDays": 14, "minNoticeHours": 2}})
	path := "/chat/" + ten.Slug

	// turn sends one message whose model calls the tools, and returns the
	// model's requests (the second carries the tool results).
	turn := func(t *testing.T, session string, calls ...llmtest.ToolCall) []llmtest.Received {
		t.Helper()
		llm.Push(llmtest.Turn{ToolCalls: calls}, llmtest.Turn{Text: []string{"OK."}})
		n := len(llm.Requests())
		r := b.Chat(t, path, map[string]any{"message": "I'd like a demo", "sessionId": session}, webtest.AgentHeaders)
		if r.Status != 200 {
			t.Fatalf("got %d %v", r.Status, r.Body)
		}
		reqs := llm.Requests()[n:]
		if len(reqs) != 2 {
			t.Fatalf("%d model requests, want 2", len(reqs))
		}
		return reqs
	}

	// Not connected: the booking tool is not offered.
	llm.Push(llmtest.Turn{Text: []string{"Hello."}})
	n := len(llm.Requests())
	if r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "cal-0"}, webtest.AgentHeaders); r.Status != 200 {
		t.Fatalf("got %d %v", r.Status, r.Body)
	}
	if got := webtest.OfferedTools(llm.Requests()[n]); len(got) != 0 {
		t.Fatalf("offered %v without a calendar", got)
	}
	_, _, ctx := b.GetContext(t, ten.Slug)
	if caps := ctx["capabilities"].([]any); slices.Contains(caps, any("book_meeting")) {
		t.Errorf("context lists book_meeting without a calendar: %v", caps)
	}

	b.MustDo(t, 200, "PUT", base+"/integrations/calendar", ten.Token, webtest.CalendarBody(cal, map[string]any{"officeHours": map[string]any{
		"monday": map[string]any{"start": "09:00", "end": "12:00"}, "tuesday": map[string]any{"start": "09:00", "end": "12:00"}}}))
	// Busy Monday 10:45-11:15 Paris.
	cal.AddEvent("Dentist", time.Date(2026, 11, 30, 10, 45, 0, 0, paris), time.Date(2026, 11, 30, 11, 15, 0, 0, paris))
	// A transparent event and a cancelled one take no time.
	cal.AddComponent(func(ev *ical.Event) {
		ev.Props.SetDateTime(ical.PropDateTimeStart, time.Date(2026, 12, 1, 9, 0, 0, 0, paris).UTC())
		ev.Props.SetDateTime(ical.PropDateTimeEnd, time.Date(2026, 12, 1, 12, 0, 0, 0, paris).UTC())
		ev.Props.SetText(ical.PropTransparency, "TRANSPARENT")
	})
	cal.AddComponent(func(ev *ical.Event) {
		ev.Props.SetDateTime(ical.PropDateTimeStart, time.Date(2026, 12, 1, 9, 0, 0, 0, paris).UTC())
		ev.Props.SetDateTime(ical.PropDateTimeEnd, time.Date(2026, 12, 1, 12, 0, 0, 0, paris).UTC())
		ev.Props.SetText(ical.PropStatus, "CANCELLED")
	})
	if _, _, ctx := b.GetContext(t, ten.Slug); !slices.Contains(ctx["capabilities"].([]any), any("book_meeting")) {
		t.Errorf("context omits book_meeting with a calendar: %v", ctx["capabilities"])
	}

	t.Run("Availability", func(t *testing.T) {
		reqs := turn(t, "cal-1", webtest.Call("c1", "check_availability", `{"from":"2026-11-30","to":"2026-12-02"}`))
		if got := webtest.OfferedTools(reqs[0]); !slices.Equal(got, []string{"book_demo", "check_availability"}) {
			t.Fatalf("offered %v", got)
		}
		res := webtest.ToolResult(t, reqs[1])
		// Monday: 09:00 and 09:30 are within 2 hours' notice; 10:30 and 11:00
		// touch the busy 10:45-11:15 with the 15-minute buffer. Tuesday is
		// free all morning; Wednesday is closed.
		want := []string{"2026-11-30T10:00:00+01:00", "2026-11-30T11:30:00+01:00",
			"2026-12-01T09:00:00+01:00", "2026-12-01T09:30:00+01:00", "2026-12-01T10:00:00+01:00",
			"2026-12-01T10:30:00+01:00", "2026-12-01T11:00:00+01:00", "2026-12-01T11:30:00+01:00"}
		if got := slotStarts(t, res, "slots"); !slices.Equal(got, want) || res["success"] != true {
			t.Errorf("slots %v\nwant %v\n(%v)", got, want, res)
		}
		if inner := res["result"].(map[string]any); inner["timezone"] != "Europe/Paris" || inner["durationMinutes"] != float64(30) {
			t.Errorf("result %v", inner)
		}
		// The default range is the coming week: today to Sunday.
		res = webtest.ToolResult(t, turn(t, "cal-1", webtest.Call("c1", "check_availability", `{}`))[1])
		if got := slotStarts(t, res, "slots"); !slices.Equal(got, want) {
			t.Errorf("default range: %v", got)
		}
		// The next week: Monday 7 and Tuesday 8 December, all morning.
		res = webtest.ToolResult(t, turn(t, "cal-1", webtest.Call("c1", "check_availability", `{"from":"2026-12-03","to":"2026-12-09"}`))[1])
		if got := slotStarts(t, res, "slots"); len(got) != 12 || got[0] != "2026-12-07T09:00:00+01:00" || got[11] != "2026-12-08T11:30:00+01:00" {
			t.Errorf("next week: %v", got)
		}
	})

	t.Run("Book", func(t *testing.T) {
		res := webtest.ToolResult(t, turn(t, "cal-2", webtest.Call("c1", "book_demo",
			`{"start":"2026-11-30T11:30:00+01:00","name":"Grace Hopper","email":"Grace@Example.com","notes":"Fleet pricing"}`))[1])
		if res["success"] != true || !strings.Contains(res["summary"].(string), "Monday 30 November 2026, 11:30–12:00") {
			t.Fatalf("booking: %v", res)
		}
		var booked *caldavtest.Event
		for _, e := range cal.Events() {
			if strings.Contains(e.Summary, "Grace Hopper") {
				booked = &e
			}
		}
		if booked == nil || !booked.Start.Equal(time.Date(2026, 11, 30, 10, 30, 0, 0, time.UTC)) || !booked.End.Equal(booked.Start.Add(30*time.Minute)) ||
			len(booked.Attendees) != 1 || booked.Attendees[0] != (caldavtest.Attendee{Address: "mailto:grace@example.com", Name: "Grace Hopper"}) ||
			!strings.Contains(booked.Description, "Fleet pricing") {
			t.Fatalf("event %+v", booked)
		}
		subs := b.MustDo(t, 200, "GET", base+"/submissions?toolType=BOOK_MEETING", ten.Token, nil)["submissions"].([]any)
		if len(subs) != 1 {
			t.Fatalf("%d submissions", len(subs))
		}
		sub := subs[0].(map[string]any)
		data, _ := json.Marshal(sub)
		if !strings.Contains(string(data), "grace@example.com") || !strings.Contains(string(data), "2026-11-30T11:30:00+01:00") {
			t.Errorf("submission %s", data)
		}
		if n := b.Count(t, `SELECT count(*) FROM events e JOIN submissions s ON s.id = e.submission_id
			WHERE e.tenant_id = $1 AND e.type = 'submission.created' AND s.tool_type = 'BOOK_MEETING'`, ten.ID); n != 1 {
			t.Errorf("%d submission.created events for the booking, want 1", n)
		}
		// The same slot again: refused, with other slots.
		res = webtest.ToolResult(t, turn(t, "cal-3", webtest.Call("c1", "book_demo", `{"start":"2026-11-30T11:30:00+01:00","name":"Alan","email":"alan@example.com"}`))[1])
		if res["success"] != false || !strings.Contains(res["summary"].(string), "no longer free") {
			t.Errorf("double booking: %v", res)
		}
		if got := slotStarts(t, res, "alternatives"); !slices.Equal(got, []string{"2026-11-30T10:00:00+01:00", "2026-12-01T09:00:00+01:00", "2026-12-01T09:30:00+01:00"}) {
			t.Errorf("alternatives %v", got)
		}
	})

	t.Run("TakenMeanwhile", func(t *testing.T) {
		before := len(cal.Events())
		// Offered, then taken in the calendar before the visitor chooses.
		cal.AddEvent("Board meeting", time.Date(2026, 12, 1, 9, 0, 0, 0, paris), time.Date(2026, 12, 1, 9, 30, 0, 0, paris))
		res := webtest.ToolResult(t, turn(t, "cal-4", webtest.Call("c1", "book_demo", `{"start":"2026-12-01T09:00:00+01:00","name":"Alan","email":"alan@example.com"}`))[1])
		if res["success"] != false || !strings.Contains(res["summary"].(string), "taken meanwhile") ||
			!strings.Contains(res["summary"].(string), "Tuesday 1 December 2026, 10:00–10:30") {
			t.Errorf("taken meanwhile: %v", res)
		}
		if len(cal.Events()) != before+1 {
			t.Errorf("an event was created for a taken slot")
		}
		if n := b.Count(t, `SELECT count(*) FROM submissions WHERE tenant_id = $1`, ten.ID); n != 1 {
			t.Errorf("%d submissions, want the one booking", n)
		}
	})

	t.Run("BadArguments", func(t *testing.T) {
		for _, tc := range []struct {
			name, tool, args, want string
		}{
			{"31 days", "check_availability", `{"from":"2026-11-30","to":"2026-12-30"}`, `"success":true`},
			{"32 days", "check_availability", `{"from":"2026-11-30","to":"2026-12-31"}`, "at most 31 days"},
			{"to before from", "check_availability", `{"from":"2026-12-02","to":"2026-12-01"}`, "must not be before"},
			{"date a number", "check_availability", `{"from":20261130}`, "YYYY-MM-DD"},
			{"date not a date", "check_availability", `{"from":"next monday"}`, "YYYY-MM-DD"},
			{"beyond the window", "check_availability", `{"from":"2027-01-04","to":"2027-01-05"}`, `"slots":[],"timezone":"Europe/Paris","to":"2027-01-05"},"success":true,"summary":"No slot in that range: meetings can be booked from Monday 30 November 2026, 10:00 to Monday 14 December 2026`},
			{"start a number", "book_demo", `{"start":1764496800,"name":"A","email":"a@example.com"}`, "start must be"},
			{"no name", "book_demo", `{"start":"2026-12-01T10:00:00+01:00","email":"a@example.com"}`, "name (the visitor's name) is required"},
			{"bad email", "book_demo", `{"start":"2026-12-01T10:00:00+01:00","name":"A","email":"not-an-email"}`, "email must be"},
			{"name 201", "book_demo", `{"start":"2026-12-01T10:00:00+01:00","name":"` + strings.Repeat("n", 201) + `","email":"a@example.com"}`, "longer than 200"},
			{"notes 1001", "book_demo", `{"start":"2026-12-01T10:00:00+01:00","name":"A","email":"a@example.com","notes":"` + strings.Repeat("x", 1001) + `"}`, "at most 1000"},
			{"outside hours", "book_demo", `{"start":"2026-12-01T13:00:00+01:00","name":"A","email":"a@example.com"}`, "outside the office hours"},
			{"closed day", "book_demo", `{"start":"2026-12-02T10:00:00+01:00","name":"A","email":"a@example.com"}`, "no meetings on Wednesday"},
			{"too soon", "book_demo", `{"start":"2026-11-30T09:30:00+01:00","name":"A","email":"a@example.com"}`, "at least 2 hour(s) ahead"},
			{"beyond window", "book_demo", `{"start":"2026-12-15T10:00:00+01:00","name":"A","email":"a@example.com"}`, "at most 14 day(s) ahead"},
			{"not JSON", "book_demo", `{"start":`, "not a valid JSON object"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				res := webtest.ToolResults(turn(t, "cal-bad", webtest.Call("c1", tc.tool, tc.args))[1])
				if len(res) != 1 || !strings.Contains(res[0], tc.want) {
					t.Errorf("%s: %q, want %q", tc.args, res, tc.want)
				}
				if !strings.Contains(tc.want, `"success":true`) && !strings.Contains(res[0], `"success":false`) {
					t.Errorf("not a failure: %q", res)
				}
			})
		}
		// At the limits: name 200 and notes 1000 book (Tuesday 11:30).
		res := webtest.ToolResult(t, turn(t, "cal-bad", webtest.Call("c1", "book_demo", fmt.Sprintf(`{"start":"2026-12-01T11:30:00+01:00","name":"%s","email":"n@example.com","notes":"%s"}`,
			strings.Repeat("n", 200), strings.Repeat("x", 1000))))[1])
		if res["success"] != true {
			t.Errorf("at the limits: %v", res)
		}
	})

	t.Run("CalendarFails", func(t *testing.T) {
		for _, tc := range []struct {
			status int
			want   string
		}{
			{503, "HTTP 503"},
			{401, "refused the username or password"},
		} {
			cal.Status.Store(int32(tc.status))
			res := webtest.ToolResult(t, turn(t, "cal-5", webtest.Call("c1", "check_availability", `{}`))[1])
			if res["success"] != false || !strings.Contains(res["summary"].(string), tc.want) || !strings.Contains(res["summary"].(string), "contact details") {
				t.Errorf("%d: %v", tc.status, res)
			}
			res = webtest.ToolResult(t, turn(t, "cal-5", webtest.Call("c1", "book_demo", `{"start":"2026-12-01T10:00:00+01:00","name":"A","email":"a@example.com"}`))[1])
			if res["success"] != false || !strings.Contains(res["summary"].(string), "Nothing was booked") {
				t.Errorf("%d booking: %v", tc.status, res)
			}
		}
		cal.Status.Store(0)
		if n := b.Count(t, `SELECT count(*) FROM tool_history
			WHERE tenant_id = $1 AND (input::text LIKE '%'||$2||'%' OR result::text LIKE '%'||$2||'%')`, ten.ID, cal.Password); n != 0 {
			t.Errorf("the calendar password is in the tool history")
		}
		if n := b.Count(t, `SELECT count(*) FROM tool_history
			WHERE tenant_id = $1 AND tool_type = 'CHECK_AVAILABILITY' AND result::text LIKE '%HTTP 503%'`, ten.ID); n == 0 {
			t.Errorf("the failure is not in the tool history")
		}
		if len(logs.Lines(t, "tool failed")) == 0 {
			t.Errorf("the failures are not logged")
		}
		logs.Mu.Lock()
		defer logs.Mu.Unlock()
		if strings.Contains(logs.Buf.String(), cal.Password) {
			t.Errorf("the calendar password is in the logs")
		}
	})

	t.Run("OtherTenant", func(t *testing.T) {
		// Another tenant with a BOOK_MEETING tool and no calendar of its own
		// is not offered it, and its chat never reaches this calendar.
		other := b.NewTenant(t, "starter")
		b.MustDo(t, 201, "POST", "/tenants/"+other.Slug+"/tools", other.Token, map[string]any{"name": "Book demo", "description": "d", "type": "BOOK_MEETING"})
		before := cal.Requests.Load()
		llm.Push(llmtest.Turn{Text: []string{"Hello."}})
		n := len(llm.Requests())
		if r := b.Chat(t, "/chat/"+other.Slug, map[string]any{"message": "Hi", "sessionId": "cal-o"}, webtest.AgentHeaders); r.Status != 200 {
			t.Fatalf("got %d %v", r.Status, r.Body)
		}
		if got := webtest.OfferedTools(llm.Requests()[n]); len(got) != 0 || cal.Requests.Load() != before {
			t.Errorf("another tenant offered %v", got)
		}
	})

	t.Run("Disconnected", func(t *testing.T) {
		b.MustDo(t, 200, "DELETE", base+"/integrations/calendar", ten.Token, nil)
		llm.Push(llmtest.Turn{Text: []string{"Hello."}})
		n := len(llm.Requests())
		if r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "cal-6"}, webtest.AgentHeaders); r.Status != 200 {
			t.Fatalf("got %d %v", r.Status, r.Body)
		}
		if got := webtest.OfferedTools(llm.Requests()[n]); len(got) != 0 {
			t.Errorf("offered %v after disconnecting", got)
		}
	})
}

// CHECK_AVAILABILITY is the calendar connector's (the spec: injected when
// the connector is active), not a BOOK_MEETING tool's: a tenant with a
// connected calendar and no booking tool is offered check_availability, in
// chat and on a call, and its slots are the connector's own
// (tools.ConnectorMeeting: 30 minutes, 2 hours' notice, no buffer), not
// those of an inactive booking tool's rules; the model is told nothing can
// be booked. Without a connector, or once it is disconnected, it is not
// offered.
func TestChatAvailabilityWithoutBookingTool(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	b.WithOutbound(t, true, nil)
	paris, _ := time.LoadLocation("Europe/Paris")
	// Monday 30 November 2026, 08:00 in Paris.
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, paris)
	b.Srv.Base.Now = func() time.Time { return now }
	cal := caldavtest.Start(t)

	ten, secret := b.VoiceTenant(t, "scale", true, `{}`)
	base := "/tenants/" + ten.Slug
	path := "/chat/" + ten.Slug
	b.MustDo(t, 200, "PUT", base, ten.Token, map[string]any{"timezone": "Europe/Paris"})
	// An inactive booking tool with other rules: neither offered nor the
	// source of the slots.
	b.MustDo(t, 201, "POST", base+"/tools", ten.Token, map[string]any{"name": "Long demo", "description": "An hour's demo", "type": "BOOK_MEETING",
		"isActive": false, "config": map[string]any{"durationMinutes": 60, "bufferMinutes": 30, "minNoticeHours": 0}})
	b.MustDo(t, 201, "POST", base+"/tools", ten.Token, map[string]any{"name": "Call back", "description": "Take the visitor's number", "type": "SUBMIT_FORM",
		"config": map[string]any{"fields": []any{map[string]any{"name": "phone", "label": "Phone", "type": "phone", "required": true}}}})

	offered := func(t *testing.T, session string) llmtest.Received {
		t.Helper()
		llm.Push(llmtest.Turn{Text: []string{"Hello."}})
		n := len(llm.Requests())
		if r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": session}, webtest.AgentHeaders); r.Status != 200 {
			t.Fatalf("got %d %v", r.Status, r.Body)
		}
		return llm.Requests()[n]
	}
	if got := webtest.OfferedTools(offered(t, "avail-0")); !slices.Equal(got, []string{"call_back"}) {
		t.Fatalf("offered %v without a calendar", got)
	}

	b.MustDo(t, 200, "PUT", base+"/integrations/calendar", ten.Token, webtest.CalendarBody(cal, map[string]any{"officeHours": map[string]any{
		"monday": map[string]any{"start": "09:00", "end": "12:00"}}}))
	// Busy Monday 10:45-11:15 Paris.
	cal.AddEvent("Dentist", time.Date(2026, 11, 30, 10, 45, 0, 0, paris), time.Date(2026, 11, 30, 11, 15, 0, 0, paris))

	req := offered(t, "avail-1")
	if got := webtest.OfferedTools(req); !slices.Equal(got, []string{"call_back", "check_availability"}) {
		t.Fatalf("offered %v with a calendar and no booking tool", got)
	}
	for _, tool := range req.Chat.Tools {
		if d := tool.Function.Description; tool.Function.Name == "check_availability" &&
			(!strings.Contains(d, "30 minutes") || !strings.Contains(d, "nothing can be booked")) {
			t.Errorf("description %q", d)
		}
	}

	// checkSlots asserts a check_availability result: Monday's free
	// 30-minute slots from 10:00 (2 hours' notice), 10:30 and 11:00 taken
	// by the busy time (no buffer).
	checkSlots := func(t *testing.T, res map[string]any) {
		t.Helper()
		want := []string{"2026-11-30T10:00:00+01:00", "2026-11-30T11:30:00+01:00"}
		if got := slotStarts(t, res, "slots"); !slices.Equal(got, want) || res["success"] != true {
			t.Errorf("slots %v, want %v (%v)", got, want, res)
		}
		inner := res["result"].(map[string]any)
		if inner["durationMinutes"] != float64(30) || inner["timezone"] != "Europe/Paris" {
			t.Errorf("result %v", inner)
		}
		for _, s := range inner["slots"].([]any) {
			slot := s.(map[string]any)
			start, _ := time.Parse(time.RFC3339, slot["start"].(string))
			end, _ := time.Parse(time.RFC3339, slot["end"].(string))
			if end.Sub(start) != 30*time.Minute {
				t.Errorf("slot %v is not 30 minutes", slot)
			}
		}
		if strings.Contains(res["summary"].(string), "to book") {
			t.Errorf("summary %q offers a booking", res["summary"])
		}
	}
	llm.Push(llmtest.Turn{ToolCalls: []llmtest.ToolCall{webtest.Call("c1", "check_availability", `{"from":"2026-11-30","to":"2026-11-30"}`)}},
		llmtest.Turn{Text: []string{"We are free at 10:00 and 11:30."}})
	n := len(llm.Requests())
	if r := b.Chat(t, path, map[string]any{"message": "When are you free?", "sessionId": "avail-2"}, webtest.AgentHeaders); r.Status != 200 {
		t.Fatalf("got %d %v", r.Status, r.Body)
	}
	if reqs := llm.Requests()[n:]; len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	} else {
		checkSlots(t, webtest.ToolResult(t, reqs[1]))
	}

	// On a call (the voice tool set), the same tool, the same slots.
	r := b.VoicePost(t, "/voice/"+ten.Slug+"/events", webtest.VoiceBearer(secret), map[string]any{"message": map[string]any{"type": "tool-calls",
		"toolCallList": []any{map[string]any{"id": "v1", "type": "function",
			"function": map[string]any{"name": "check_availability", "arguments": `{"from":"2026-11-30","to":"2026-11-30"}`}}}}})
	results, _ := r.Body["results"].([]any)
	if r.Status != 200 || len(results) != 1 {
		t.Fatalf("voice tool-calls: %d %v", r.Status, r.Body)
	}
	var voiceRes map[string]any
	if err := json.Unmarshal([]byte(results[0].(map[string]any)["result"].(string)), &voiceRes); err != nil {
		t.Fatal(err)
	}
	checkSlots(t, voiceRes)

	// Another tenant, without a calendar of its own, is not offered it.
	other := b.NewTenant(t, "starter")
	llm.Push(llmtest.Turn{Text: []string{"Hello."}})
	n = len(llm.Requests())
	if r := b.Chat(t, "/chat/"+other.Slug, map[string]any{"message": "Hi", "sessionId": "avail-o"}, webtest.AgentHeaders); r.Status != 200 {
		t.Fatalf("got %d %v", r.Status, r.Body)
	}
	if got := webtest.OfferedTools(llm.Requests()[n]); slices.Contains(got, "check_availability") {
		t.Errorf("a tenant without a calendar offered %v", got)
	}

	b.MustDo(t, 200, "DELETE", base+"/integrations/calendar", ten.Token, nil)
	if got := webtest.OfferedTools(offered(t, "avail-3")); !slices.Equal(got, []string{"call_back"}) {
		t.Errorf("offered %v after disconnecting", got)
	}
}
