package parley

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// The rules of the conversations' listings: the list (the REST API's, the
// MCP tool's, the dashboard's inbox) and the stats, over a scope they
// share.

// A conversations listing's limits: the spec's page, and the search bounds
// chosen here (the submissions list's; documented in the OpenAPI
// document). The stats cover DefaultStatsDays up to today unless asked
// otherwise, and a year at most.
const (
	DefaultConversationsPage = 20
	MaxConversationsPage     = 100
	MinConversationSearch    = 2
	MaxConversationSearch    = 200
	DefaultStatsDays         = 30
)

// The values the filters and the stats' buckets take.
var (
	ConversationChannels = []string{ChannelWeb, ChannelAgent, ChannelVoice, ChannelAPI}
	ConversationStatuses = []string{StatusBot, StatusEscalated, StatusHuman, StatusClosed}
	StatsGranularities   = []string{"day", "week", "month"}
)

var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// ConversationScope is which conversations a listing covers: started from
// From (included) to To (excluded), each an RFC 3339 date-time or a
// YYYY-MM-DD date (To's whole day included), of one channel, in one
// segment (a slug or id, which the management operation resolves). Empty
// texts filter nothing.
type ConversationScope struct {
	From    string `json:"from"`
	To      string `json:"to"`
	Channel string `json:"channel"`
	Segment string `json:"segment"`
	// Location is where a date's midnight is: UTC when nil.
	Location *time.Location `json:"-"`
}

// Period is a span of time, From included, To excluded; a zero bound is
// open.
type Period struct{ From, To time.Time }

// check adds the scope's problems to errs and returns its dates.
func (s ConversationScope) check(errs FieldErrors) Period {
	loc := s.Location
	if loc == nil {
		loc = time.UTC
	}
	p := Period{From: readWhen(errs, "from", s.From, false, loc), To: readWhen(errs, "to", s.To, true, loc)}
	if !p.From.IsZero() && !p.To.IsZero() && !p.To.After(p.From) {
		errs.Add("to", "must be after from")
	}
	if s.Channel != "" && !slices.Contains(ConversationChannels, s.Channel) {
		errs.Add("channel", "must be web, agent, voice or api")
	}
	return p
}

// readWhen reads a bound: an RFC 3339 date-time, or a YYYY-MM-DD date,
// midnight in loc (with endOfDay the midnight after it, so that an
// exclusive bound still takes the whole day in); zero when v is empty.
func readWhen(errs FieldErrors, field, v string, endOfDay bool, loc *time.Location) time.Time {
	if v == "" {
		return time.Time{}
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t
	}
	t, err := time.ParseInLocation(time.DateOnly, v, loc)
	if err != nil {
		errs.Add(field, "must be an RFC 3339 date-time or a YYYY-MM-DD date")
		return time.Time{}
	}
	if endOfDay {
		t = t.AddDate(0, 0, 1)
	}
	return t
}

// Check returns the scope's dates and its problems, the segment aside:
// the management operation's to resolve.
func (s ConversationScope) Check() (Period, FieldErrors) {
	errs := FieldErrors{}
	return s.check(errs), errs
}

// ConversationListing is a page of the tenant's conversations, most
// recent first, as a caller asks for it (its JSON, with the scope's, is
// the MCP tool's arguments). NewConversationListing gives the defaults a
// caller overrides with what it was given. Search, when set (even empty),
// finds words in the messages; the dashboard's check boxes add
// HasFeedback and HasSubmission.
type ConversationListing struct {
	Page      int               `json:"page"`
	Limit     int               `json:"limit"`
	Scope     ConversationScope `json:"-"`
	Status    string            `json:"status"`
	VisitorID string            `json:"visitorId"`
	// ToolType keeps the conversations that ran a tool of this type (any
	// case).
	ToolType                   string      `json:"toolType"`
	Search                     Opt[string] `json:"search"`
	HasFeedback, HasSubmission bool        `json:"-"`
}

// NewConversationListing is the first page of all conversations.
func NewConversationListing() ConversationListing {
	return ConversationListing{Page: 1, Limit: DefaultConversationsPage}
}

// Check normalises l (the tool type in upper case, the search trimmed)
// and returns its dates and problems; the segment is the management
// operation's to resolve.
func (l *ConversationListing) Check() (Period, FieldErrors) {
	errs := FieldErrors{}
	CheckCount(errs, "page", l.Page, 1, MaxPage)
	CheckCount(errs, "limit", l.Limit, 1, MaxConversationsPage)
	p := l.Scope.check(errs)
	if l.VisitorID != "" && !uuidPattern.MatchString(l.VisitorID) {
		errs.Add("visitorId", "must be a uuid")
	}
	if l.ToolType != "" {
		l.ToolType = strings.ToUpper(l.ToolType)
		all := append(slices.Clone(UserToolTypes), SyntheticToolTypes...)
		if !slices.Contains(all, l.ToolType) {
			errs.Add("toolType", "must be one of "+strings.Join(all, ", "))
		}
	}
	if l.Status != "" && !slices.Contains(ConversationStatuses, l.Status) {
		errs.Add("status", "must be BOT or ESCALATED")
	}
	if l.Search.Set && !l.Search.Null {
		l.Search.Value = strings.TrimSpace(l.Search.Value)
		if n := utf8.RuneCountInString(l.Search.Value); n < MinConversationSearch || n > MaxConversationSearch {
			errs.Add("search", fmt.Sprintf("must be %d to %d characters", MinConversationSearch, MaxConversationSearch))
		}
	}
	return p, errs
}

// StatsListing is the conversation stats of a scope as a caller asks for
// them (its JSON, with the scope's, is the MCP tool's arguments):
// timeline buckets of Granularity (day when empty), and with Window "all"
// the all-time totals too.
type StatsListing struct {
	Scope       ConversationScope `json:"-"`
	Granularity string            `json:"granularity"`
	Window      string            `json:"window"`
}

// Check normalises l (the granularity's default) and returns its window
// and problems: dates are in the scope's Location; the window defaults to
// the DefaultStatsDays up to now's day (included) and is cut to the year
// before its end.
func (l *StatsListing) Check(now time.Time) (Period, FieldErrors) {
	errs := FieldErrors{}
	p := l.Scope.check(errs)
	if l.Granularity == "" {
		l.Granularity = "day"
	} else if !slices.Contains(StatsGranularities, l.Granularity) {
		errs.Add("granularity", "must be day, week or month")
	}
	if l.Window != "" && l.Window != "all" {
		errs.Add("window", "must be all")
	}
	if len(errs) > 0 {
		return p, errs
	}
	loc := l.Scope.Location
	if loc == nil {
		loc = time.UTC
	}
	if p.To.IsZero() {
		now = now.In(loc)
		p.To = time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, loc)
	}
	// Days and years back are counted on the wall clock of loc, whatever
	// offset an RFC 3339 bound was written with.
	p.To = p.To.In(loc)
	if p.From.IsZero() {
		p.From = p.To.AddDate(0, 0, -DefaultStatsDays)
	}
	if !p.From.Before(p.To) {
		errs.Add("from", "must be before to")
	}
	if yearBefore := p.To.AddDate(-1, 0, 0); p.From.Before(yearBefore) {
		p.From = yearBefore
	}
	return p, errs
}
