package tools

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/emersion/go-ical"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/caldav"
)

// Meetings: CHECK_AVAILABILITY lists the free slots of the tenant's
// calendar and BOOK_MEETING books one, both under a BOOK_MEETING tool's
// rules (parley.MeetingConfig: duration, buffer, booking window, minimum notice),
// within the connector's office hours, in the tenant's time zone.
// CHECK_AVAILABILITY is offered whenever the tenant's calendar connector is
// active (agent's enrichCalendar), BOOK_MEETING when the segment also has an active
// BOOK_MEETING tool; without one, the slots are the connector's own
// (ConnectorMeeting).

// The synthetic availability tool: its type and the name the model sees.
const (
	CheckAvailabilityType = "CHECK_AVAILABILITY"
	checkAvailabilityTool = "check_availability"
)

// Availability bounds.
const (
	// MaxAvailabilityDays is the longest range one availability call reads.
	MaxAvailabilityDays = 31
	// MaxSlots is how many free slots one availability call lists.
	MaxSlots = 20
	// alternativeSlots is how many free slots a refused booking offers.
	alternativeSlots = 3
	maxBookingName   = 200
	maxBookingNotes  = 1000
)

// CalendarStore reads a tenant's calendar connector and serializes its
// bookings; *db.DB satisfies it.
type CalendarStore interface {
	CalendarConnector(ctx context.Context, tenantID string) (*parley.CalendarConnector, error)
	LockCalendar(ctx context.Context, tenantID string, fn func(context.Context) error) error
}

// CalendarServer is the tenant's calendar as the meeting tools read and
// write it; *caldav.Client satisfies it.
type CalendarServer interface {
	// Busy lists the times the calendar at path is taken within [from, to).
	Busy(ctx context.Context, path string, from, to time.Time, loc *time.Location) ([]caldav.BusyTime, error)
	// CreateEvent stores a new event in the calendar at path.
	CreateEvent(ctx context.Context, path, uid string, cal *ical.Calendar) error
}

// CalendarBooking runs the meeting tools of one turn: the engine binds it
// to the tenant's connector (the calendar at Path on Server, its office
// hours in the tenant's zone Loc); Store serializes the tenant's bookings,
// BotName names the bot in the events it books.
type CalendarBooking struct {
	Store    CalendarStore
	Server   CalendarServer
	Path     string // the calendar collection's path
	Hours    parley.OfficeHours
	Loc      *time.Location
	TenantID string
	BotName  string
	// meetings are the turn's BOOK_MEETING tools, in order; set by
	// NewRegistry.
	meetings []*registeredTool
}

// TenantLocation is the tenant's time zone (its IANA name), UTC when unset
// or unknown: the zone of office hours and slots.
func TenantLocation(zone string) *time.Location {
	if loc, err := time.LoadLocation(zone); err == nil && zone != "" && zone != "Local" {
		return loc
	}
	return time.UTC
}

// SlotRules are what decide the free slots: the office hours in the
// tenant's time zone, a BOOK_MEETING tool's rules, and now.
type SlotRules struct {
	Hours   parley.OfficeHours
	Loc     *time.Location
	Meeting parley.MeetingConfig
	Now     time.Time
}

func (r SlotRules) duration() time.Duration {
	return time.Duration(max(r.Meeting.DurationMinutes, 5)) * time.Minute
}
func (r SlotRules) buffer() time.Duration {
	return time.Duration(r.Meeting.BufferMinutes) * time.Minute
}

// earliest is the first bookable start: now plus the minimum notice.
func (r SlotRules) earliest() time.Time {
	return r.Now.Add(time.Duration(r.Meeting.MinNoticeHours) * time.Hour)
}

// latest is the end of the booking window: no slot starts at or after it.
func (r SlotRules) latest() time.Time {
	return r.Now.Add(time.Duration(max(r.Meeting.BookingWindowDays, 1)) * 24 * time.Hour)
}

// step is the spacing of the slots offered: 30 minutes, 15 for meetings
// shorter than 30.
func (r SlotRules) step() time.Duration {
	if r.duration() < 30*time.Minute {
		return 15 * time.Minute
	}
	return 30 * time.Minute
}

// dayOpen returns the office hours of the day of t (in the tenant's zone).
func (r SlotRules) dayOpen(day time.Time) (open, close time.Time, ok bool) {
	y, m, d := day.In(r.Loc).Date()
	h, found := r.Hours[strings.ToLower(day.In(r.Loc).Weekday().String())]
	if !found {
		return time.Time{}, time.Time{}, false
	}
	start, end, err := h.Minutes()
	if err != nil || start >= end {
		return time.Time{}, time.Time{}, false
	}
	open = time.Date(y, m, d, start/60, start%60, 0, 0, r.Loc)
	close = time.Date(y, m, d, end/60, end%60, 0, 0, r.Loc)
	return open, close, true
}

// Bookable says why a meeting cannot start at s, "" when the rules allow
// it (the calendar aside).
func (r SlotRules) Bookable(s time.Time) string {
	open, close, ok := r.dayOpen(s)
	switch {
	case !ok:
		return "the business takes no meetings on " + s.In(r.Loc).Weekday().String()
	case s.Before(open) || s.Add(r.duration()).After(close):
		return fmt.Sprintf("%s is outside the office hours (%s to %s on %s)", s.In(r.Loc).Format("15:04"),
			open.Format("15:04"), close.Format("15:04"), s.In(r.Loc).Weekday())
	case s.Before(r.earliest()):
		return fmt.Sprintf("meetings must be booked at least %d hour(s) ahead", r.Meeting.MinNoticeHours)
	case !s.Before(r.latest()):
		return fmt.Sprintf("meetings can be booked at most %d day(s) ahead", r.Meeting.BookingWindowDays)
	}
	return ""
}

// free reports whether a meeting starting at s, with its buffer on each
// side, overlaps none of busy.
func (r SlotRules) free(s time.Time, busy []caldav.BusyTime) bool {
	from, to := s.Add(-r.buffer()), s.Add(r.duration()+r.buffer())
	for _, b := range busy {
		if b.Start.Before(to) && b.End.After(from) {
			return false
		}
	}
	return true
}

// FreeSlots lists the starts of the free slots in [from, to), at most n.
func (r SlotRules) FreeSlots(busy []caldav.BusyTime, from, to time.Time, n int) []time.Time {
	var out []time.Time
	from = maxTime(from, r.earliest())
	to = minTime(to, r.latest())
	for day := startOfDay(from, r.Loc); day.Before(to) && len(out) < n; day = startOfDay(day.Add(36*time.Hour), r.Loc) {
		open, close, ok := r.dayOpen(day)
		if !ok {
			continue
		}
		for s := open; !s.Add(r.duration()).After(close) && len(out) < n; s = s.Add(r.step()) {
			if !s.Before(from) && s.Before(to) && r.free(s, busy) {
				out = append(out, s)
			}
		}
	}
	return out
}

func startOfDay(t time.Time, loc *time.Location) time.Time {
	y, m, d := t.In(loc).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, loc)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// Slot is a free slot as the tools and the dashboard show it.
type Slot struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Label is the slot in words in the tenant's time zone:
	// "Thursday 26 November 2026, 09:00–09:30".
	Label string `json:"label"`
}

// NewSlot is the slot starting at s.
func (r SlotRules) NewSlot(s time.Time) Slot {
	s = s.In(r.Loc)
	e := s.Add(r.duration())
	return Slot{Start: s, End: e, Label: s.Format("Monday 2 January 2006, 15:04") + "–" + e.Format("15:04")}
}

func (r SlotRules) slots(starts []time.Time) []Slot {
	out := make([]Slot, len(starts))
	for i, s := range starts {
		out[i] = r.NewSlot(s)
	}
	return out
}

// NextFreeSlots reads the calendar and returns its next n free slots under
// rules, searching the booking window (at most MaxAvailabilityDays).
func NextFreeSlots(ctx context.Context, c CalendarServer, calendar string, rules SlotRules, n int) ([]Slot, error) {
	from := rules.earliest()
	to := minTime(rules.latest(), from.Add(MaxAvailabilityDays*24*time.Hour))
	starts, err := freeSlots(ctx, c, calendar, rules, from, to, n)
	if err != nil {
		return nil, err
	}
	return rules.slots(starts), nil
}

// freeSlots reads the calendar's busy times over [from, to), widened by a
// meeting and its buffers, and returns the starts of at most n free slots.
func freeSlots(ctx context.Context, c CalendarServer, calendar string, rules SlotRules, from, to time.Time, n int) ([]time.Time, error) {
	busy, err := c.Busy(ctx, calendar, from.Add(-rules.buffer()), to.Add(rules.duration()+rules.buffer()), rules.Loc)
	if err != nil {
		return nil, err
	}
	return rules.FreeSlots(busy, from, to, n), nil
}

// ConnectorMeeting is the calendar connector's own slot: the rules
// CHECK_AVAILABILITY lists free slots under when the turn has no
// BOOK_MEETING tool, and the connection test's when the tenant has none.
// The connector has no setting for them: they are a meeting's defaults
// (parley.DefaultMeetingConfig: 30 minutes, no buffer, at least 2 hours and at
// most 30 days ahead), so that its slots are the ones a booking tool saved
// without rules would book.
func ConnectorMeeting() parley.MeetingConfig { return parley.DefaultMeetingConfig() }

func (cb *CalendarBooking) rules(meet parley.MeetingConfig, now time.Time) SlotRules {
	return SlotRules{Hours: cb.Hours, Loc: cb.Loc, Meeting: meet, Now: now}
}

// availabilityMeeting picks the rules an availability call lists slots
// under: the BOOK_MEETING tool named, else the turn's first; with no
// booking tool in the turn, the connector's (ConnectorMeeting), whatever
// is named. ok is false when name is none of the turn's booking tools.
func (cb *CalendarBooking) availabilityMeeting(name string) (meet parley.MeetingConfig, ok bool) {
	if len(cb.meetings) == 0 {
		return ConnectorMeeting(), true
	}
	for _, rt := range cb.meetings {
		if rt.spec.Name == name {
			return rt.meet, true
		}
	}
	if name == "" {
		return cb.meetings[0].meet, true
	}
	return parley.MeetingConfig{}, false
}

// meetingNames are the names the model sees of the turn's BOOK_MEETING tools.
func (cb *CalendarBooking) meetingNames() []string {
	names := make([]string, len(cb.meetings))
	for i, m := range cb.meetings {
		names[i] = m.spec.Name
	}
	return names
}

// argDate reads a YYYY-MM-DD argument in loc; ok false when it is there
// but not a date.
func argDate(in map[string]any, key string, loc *time.Location) (time.Time, bool, bool) {
	raw, there := in[key]
	if !there || raw == nil {
		return time.Time{}, false, true
	}
	s, isString := raw.(string)
	if !isString {
		return time.Time{}, false, false
	}
	d, err := time.ParseInLocation("2006-01-02", strings.TrimSpace(s), loc)
	if err != nil {
		return time.Time{}, false, false
	}
	return d, true, true
}

func (r *Registry) checkAvailability(ctx context.Context, in map[string]any, ex *Execution) {
	cb := r.deps.Calendar
	name, _ := argString(in, "meeting")
	meet, ok := cb.availabilityMeeting(name)
	if !ok {
		ex.Summary = fmt.Sprintf("%q is not a meeting type; use one of: %s.", name, strings.Join(cb.meetingNames(), ", "))
		return
	}
	rules := cb.rules(meet, r.now())
	today := startOfDay(rules.Now, cb.Loc)
	from, hasFrom, okFrom := argDate(in, "from", cb.Loc)
	to, hasTo, okTo := argDate(in, "to", cb.Loc)
	switch {
	case !okFrom || !okTo:
		ex.Summary = "from and to must be dates written YYYY-MM-DD (for example " + today.Format("2006-01-02") + ")."
		return
	case !hasFrom:
		from = today
	}
	if !hasTo {
		to = from.AddDate(0, 0, 6)
	}
	days := int(startOfDay(to, cb.Loc).Sub(from).Hours()/24+0.5) + 1
	switch {
	case to.Before(from):
		ex.Summary = "to must not be before from."
		return
	case days > MaxAvailabilityDays:
		ex.Summary = fmt.Sprintf("Ask for at most %d days at a time (this asked for %d).", MaxAvailabilityDays, days)
		return
	}
	end := to.AddDate(0, 0, 1) // to is inclusive
	winFrom, winTo := maxTime(from, rules.earliest()), minTime(end, rules.latest())
	result := map[string]any{"timezone": cb.Loc.String(), "durationMinutes": rules.duration() / time.Minute,
		"from": from.Format("2006-01-02"), "to": to.Format("2006-01-02")}
	if !winFrom.Before(winTo) {
		ex.Success = true
		ex.Result = result
		result["slots"] = []Slot{}
		ex.Summary = fmt.Sprintf("No slot in that range: meetings can be booked from %s to %s (%s).",
			rules.NewSlot(rules.earliest()).Start.Format("Monday 2 January 2006, 15:04"),
			rules.latest().In(cb.Loc).Format("Monday 2 January 2006"), cb.Loc)
		ex.Data = map[string]any{"slots": 0}
		return
	}
	starts, err := freeSlots(ctx, cb.Server, cb.Path, rules, winFrom, winTo, MaxSlots+1)
	if err != nil {
		ex.Err = err
		ex.Summary = "The calendar could not be read right now (" + calendarReason(err) + "). Apologize, and offer to take the visitor's contact details so that the team gets back to them."
		return
	}
	more := len(starts) > MaxSlots
	if more {
		starts = starts[:MaxSlots]
	}
	slots := rules.slots(starts)
	result["slots"], result["more"] = slots, more
	ex.Success, ex.Result = true, result
	ex.Data = map[string]any{"from": result["from"], "to": result["to"], "slots": len(slots)}
	switch {
	case len(slots) == 0:
		ex.Summary = fmt.Sprintf("No free slot from %s to %s. Suggest other dates.", from.Format("Monday 2 January"), to.Format("Monday 2 January"))
	case len(cb.meetings) == 0:
		ex.Summary = fmt.Sprintf("%d free slot(s) of %d minutes, times in %s. Tell the visitor a few; no meeting can be booked in this conversation.",
			len(slots), rules.duration()/time.Minute, cb.Loc)
	default:
		ex.Summary = fmt.Sprintf("%d free slot(s) of %d minutes, times in %s. Offer a few; to book, pass the chosen slot's start exactly as given.",
			len(slots), rules.duration()/time.Minute, cb.Loc)
	}
	if more {
		ex.Summary += " More slots exist after the last one listed."
	}
}

// calendarReason is what a calendar failure is, in a few words for the
// model; never the password nor the server's own words.
func calendarReason(err error) string {
	if ce, ok := err.(*caldav.Error); ok {
		return ce.Message
	}
	return "an error on our side"
}

// argStart reads a slot start: RFC 3339, or a local date and time in loc.
func argStart(s string, loc *time.Location) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, true
	}
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02T15:04:05"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// cleanText drops control characters and double quotes (which iCalendar
// parameters cannot hold) and trims.
func cleanText(s string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '"' {
			return ' '
		}
		return r
	}, s))
}

func (r *Registry) bookMeeting(ctx context.Context, rt *registeredTool, in map[string]any, ex *Execution) {
	cb := r.deps.Calendar
	rules := cb.rules(rt.meet, r.now())
	rawStart, okStart := in["start"].(string)
	name, okName := argString(in, "name")
	email, okEmail := argString(in, "email")
	notes, okNotes := argString(in, "notes")
	name, notes, email = cleanText(name), strings.TrimSpace(notes), strings.ToLower(email)
	var problems []string
	start, goodStart := argStart(rawStart, cb.Loc)
	switch {
	case !okStart || !goodStart:
		problems = append(problems, "start must be a slot's start as check_availability gave it (for example 2026-01-15T09:00:00+01:00)")
	case start.Second() != 0 || start.Nanosecond() != 0:
		problems = append(problems, "start must be a whole minute")
	}
	switch {
	case !okName || name == "":
		problems = append(problems, "name (the visitor's name) is required")
	case utf8.RuneCountInString(name) > maxBookingName:
		problems = append(problems, fmt.Sprintf("name is longer than %d characters", maxBookingName))
	}
	if !okEmail || len(email) > 254 || !emailPattern.MatchString(email) {
		problems = append(problems, "email must be the visitor's email address")
	}
	if !okNotes || utf8.RuneCountInString(notes) > maxBookingNotes {
		problems = append(problems, fmt.Sprintf("notes must be text of at most %d characters", maxBookingNotes))
	}
	if len(problems) > 0 {
		ex.Summary = "Nothing was booked: " + strings.Join(problems, "; ") + "."
		ex.Data = map[string]any{"errors": problems}
		return
	}
	if why := rules.Bookable(start); why != "" {
		r.refuseSlot(ctx, cb, rules, start, "That time cannot be booked: "+why+".", ex)
		return
	}
	end := start.Add(rules.duration())
	uid := newEventUID()
	taken := false
	book := func(ctx context.Context) error {
		busy, err := cb.Server.Busy(ctx, cb.Path, start.Add(-rules.buffer()), end.Add(rules.buffer()), cb.Loc)
		if err != nil {
			return err
		}
		if !rules.free(start, busy) {
			taken = true
			return nil
		}
		return cb.Server.CreateEvent(ctx, cb.Path, uid, meetingEvent(uid, rt.tool.Name, cb.BotName, name, email, notes, start, end, ex.At))
	}
	var err error
	if cb.Store != nil {
		err = cb.Store.LockCalendar(ctx, cb.TenantID, book)
	} else {
		err = book(ctx)
	}
	if err != nil {
		ex.Err = err
		ex.Summary = "The meeting could not be booked right now (" + calendarReason(err) + "). Nothing was booked: apologize, and offer to take the visitor's contact details so that the team gets back to them."
		return
	}
	if taken {
		r.refuseSlot(ctx, cb, rules, start, "That slot is no longer free: it was taken meanwhile.", ex)
		return
	}
	slot := rules.NewSlot(start)
	ex.Success = true
	ex.Result = map[string]any{"booked": true, "start": slot.Start, "end": slot.End, "label": slot.Label,
		"timezone": cb.Loc.String(), "durationMinutes": rules.duration() / time.Minute}
	// No invitation is promised: whether the calendar server mails its
	// attendees depends on the server.
	ex.Summary = fmt.Sprintf("Booked: %s (%s), in the business's calendar with %s as attendee. Tell the visitor the meeting is confirmed for that time.", slot.Label, cb.Loc, email)
	ex.Data = map[string]any{"start": slot.Start, "end": slot.End}
	input := map[string]any{"start": slot.Start, "end": slot.End, "timezone": cb.Loc.String(), "name": name, "email": email}
	if notes != "" {
		input["notes"] = notes
	}
	ex.Submission = &SubmissionDraft{ToolID: rt.tool.ID, ToolName: rt.tool.Name, ToolType: rt.tool.Type, Input: input,
		Result: map[string]any{"booked": true, "eventUid": uid, "start": slot.Start, "end": slot.End, "label": slot.Label}}
}

// refuseSlot answers a booking of a time that cannot be had, with the next
// free slots from that day on to offer instead.
func (r *Registry) refuseSlot(ctx context.Context, cb *CalendarBooking, rules SlotRules, start time.Time, why string, ex *Execution) {
	ex.Summary = why + " Nothing was booked."
	ex.Result = map[string]any{"booked": false, "timezone": cb.Loc.String()}
	from := maxTime(startOfDay(start, cb.Loc), rules.earliest())
	if !from.Before(rules.latest()) {
		from = rules.earliest()
	}
	to := minTime(rules.latest(), from.Add(MaxAvailabilityDays*24*time.Hour))
	starts, err := freeSlots(ctx, cb.Server, cb.Path, rules, from, to, alternativeSlots)
	if err != nil {
		ex.Err = err
		ex.Summary += " Call check_availability for other times."
		return
	}
	alt := rules.slots(starts)
	ex.Result["alternatives"] = alt
	ex.Data = map[string]any{"alternatives": len(alt)}
	if len(alt) == 0 {
		ex.Summary += " No other free slot was found in the booking window."
		return
	}
	labels := make([]string, len(alt))
	for i, s := range alt {
		labels[i] = s.Label
	}
	ex.Summary += " Offer the visitor one of these instead (" + cb.Loc.String() + "): " + strings.Join(labels, "; ") + "."
}

func newEventUID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b) + "@parley"
}

// meetingEvent is the iCalendar object of a booked meeting, times in UTC,
// the visitor as attendee.
func meetingEvent(uid, toolName, botName, name, email, notes string, start, end, now time.Time) *ical.Calendar {
	cal := ical.NewCalendar()
	cal.Props.SetText(ical.PropVersion, "2.0")
	cal.Props.SetText(ical.PropProductID, "-//Parley//Calendar connector//EN")
	ev := ical.NewEvent()
	ev.Props.SetText(ical.PropUID, uid)
	ev.Props.SetDateTime(ical.PropDateTimeStamp, now.UTC())
	ev.Props.SetDateTime(ical.PropDateTimeStart, start.UTC())
	ev.Props.SetDateTime(ical.PropDateTimeEnd, end.UTC())
	ev.Props.SetText(ical.PropSummary, cleanText(toolName)+": "+name)
	desc := "Booked by " + cleanText(botName) + " in a chat with " + name + " <" + email + ">."
	if notes != "" {
		desc += "\n\n" + notes
	}
	ev.Props.SetText(ical.PropDescription, desc)
	ev.Props.SetText(ical.PropStatus, string(ical.EventConfirmed))
	att := ical.NewProp(ical.PropAttendee)
	att.Value = "mailto:" + email
	att.Params.Set(ical.ParamCommonName, name)
	att.Params.Set(ical.ParamRole, "REQ-PARTICIPANT")
	att.Params.Set(ical.ParamParticipationStatus, "NEEDS-ACTION")
	att.Params.Set(ical.ParamRSVP, "TRUE")
	ev.Props.Add(att)
	cal.Children = append(cal.Children, ev.Component)
	return cal
}

// availabilityDescription tells the model what check_availability does and
// in which time zone; without a booking tool, that it books nothing, lest
// the model promise a meeting nobody booked.
func availabilityDescription(cb *CalendarBooking) string {
	d := "List the free meeting slots of the business's calendar (times in " + cb.Loc.String() + "), within its office hours and booking rules. " +
		"Give from and to as dates (YYYY-MM-DD, at most " + fmt.Sprint(MaxAvailabilityDays) + " days; by default the coming week). "
	switch {
	case len(cb.meetings) == 0:
		d += fmt.Sprintf("Slots are %d minutes long. Tell the visitor when the business is free; nothing can be booked in this conversation, "+
			"so never say a meeting is booked.", ConnectorMeeting().DurationMinutes)
	case len(cb.meetings) > 1:
		d += "Offer the visitor a few of the slots, then book the one they choose. Name the meeting type with meeting (the booking tool's name)."
	default:
		d += "Offer the visitor a few of the slots, then book the one they choose."
	}
	return d
}

func availabilitySchema(cb *CalendarBooking) json.RawMessage {
	props := map[string]any{
		"from": map[string]any{"type": "string", "format": "date", "description": "first day, YYYY-MM-DD"},
		"to":   map[string]any{"type": "string", "format": "date", "description": "last day, YYYY-MM-DD"},
	}
	if len(cb.meetings) > 1 {
		props["meeting"] = map[string]any{"type": "string", "enum": cb.meetingNames(), "description": "the booking tool the slots are for"}
	}
	b, _ := json.Marshal(map[string]any{"type": "object", "properties": props, "required": []string{}, "additionalProperties": false})
	return b
}
