package parley_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley"
)

// The listings' rules: each parameter at its bounds and one past, the
// messages naming the parameter, and the stats' window.
func TestConversationListingRules(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		edit  func(*parley.ConversationListing)
		field string
		want  string
	}{
		"Defaults":        {nil, "", ""},
		"LimitAtMax":      {func(l *parley.ConversationListing) { l.Limit = parley.MaxConversationsPage }, "", ""},
		"LimitPastMax":    {func(l *parley.ConversationListing) { l.Limit = parley.MaxConversationsPage + 1 }, "limit", "must be an integer between 1 and 100"},
		"PageZero":        {func(l *parley.ConversationListing) { l.Page = 0 }, "page", "must be an integer between 1 and 1000000"},
		"PageNotInteger":  {func(l *parley.ConversationListing) { l.Page = math.MinInt }, "page", "must be an integer between 1 and 1000000"},
		"DateAndTime":     {func(l *parley.ConversationListing) { l.Scope.From, l.Scope.To = "2025-01-01", "2025-01-02T10:00:00Z" }, "", ""},
		"BadFrom":         {func(l *parley.ConversationListing) { l.Scope.From = "yesterday" }, "from", "must be an RFC 3339 date-time or a YYYY-MM-DD date"},
		"ToBeforeFrom":    {func(l *parley.ConversationListing) { l.Scope.From, l.Scope.To = "2025-01-02", "2025-01-01T00:00:00Z" }, "to", "must be after from"},
		"SameDay":         {func(l *parley.ConversationListing) { l.Scope.From, l.Scope.To = "2025-01-02", "2025-01-02" }, "", ""},
		"UnknownChannel":  {func(l *parley.ConversationListing) { l.Scope.Channel = "fax" }, "channel", "must be web, agent, voice or api"},
		"VisitorNotUUID":  {func(l *parley.ConversationListing) { l.VisitorID = "ada" }, "visitorId", "must be a uuid"},
		"ToolTypeAnyCase": {func(l *parley.ConversationListing) { l.ToolType = "submit_form" }, "", ""},
		"UnknownToolType": {func(l *parley.ConversationListing) { l.ToolType = "nope" }, "toolType", "must be one of SUBMIT_FORM"},
		"UnknownStatus":   {func(l *parley.ConversationListing) { l.Status = "bot" }, "status", "must be BOT or ESCALATED"},
		"EmptySearch":     {func(l *parley.ConversationListing) { l.Search = parley.Some(" ") }, "search", "must be 2 to 200 characters"},
		"SearchAtMax":     {func(l *parley.ConversationListing) { l.Search = parley.Some(strings.Repeat("é", 200)) }, "", ""},
		"SearchPastMax":   {func(l *parley.ConversationListing) { l.Search = parley.Some(strings.Repeat("é", 201)) }, "search", "must be 2 to 200 characters"},
		"NullSearch":      {func(l *parley.ConversationListing) { l.Search = parley.Opt[string]{Set: true, Null: true} }, "", ""},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			l := parley.NewConversationListing()
			if c.edit != nil {
				c.edit(&l)
			}
			_, errs := l.Check()
			if c.field == "" {
				if len(errs) > 0 {
					t.Fatalf("problems %v", errs)
				}
				return
			}
			if got := errs[c.field]; !strings.HasPrefix(got, c.want) {
				t.Errorf("%s: %q, want %q", c.field, got, c.want)
			}
			if err := parley.ParamsError(errs); len(errs) == 1 && err.Error() != c.field+" "+errs[c.field] {
				t.Errorf("message %q", err)
			}
		})
	}

	t.Run("Normalised", func(t *testing.T) {
		l := parley.NewConversationListing()
		l.ToolType, l.Search = "submit_form", parley.Some("  Paris ")
		l.Scope.To = "2025-01-02"
		p, errs := l.Check()
		if len(errs) > 0 || l.ToolType != "SUBMIT_FORM" || l.Search.Value != "Paris" || !p.To.Equal(time.Date(2025, 1, 3, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("%v %+v %v", errs, l, p)
		}
	})
}

func TestStatsListingRules(t *testing.T) {
	t.Parallel()
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip(err)
	}
	now := time.Date(2025, 6, 15, 22, 30, 0, 0, time.UTC) // already the 16th in Paris
	check := func(edit func(*parley.StatsListing)) (parley.StatsListing, parley.Period, parley.FieldErrors) {
		l := parley.StatsListing{Scope: parley.ConversationScope{Location: paris}}
		if edit != nil {
			edit(&l)
		}
		p, errs := l.Check(now)
		return l, p, errs
	}

	t.Run("DefaultWindow", func(t *testing.T) {
		l, p, errs := check(nil)
		end := time.Date(2025, 6, 17, 0, 0, 0, 0, paris)
		if len(errs) > 0 || l.Granularity != "day" || !p.To.Equal(end) || !p.From.Equal(end.AddDate(0, 0, -parley.DefaultStatsDays)) {
			t.Errorf("%v %q %v", errs, l.Granularity, p)
		}
	})
	t.Run("CappedToAYear", func(t *testing.T) {
		_, p, errs := check(func(l *parley.StatsListing) { l.Scope.From, l.Scope.To = "2020-01-01", "2025-01-01" })
		if len(errs) > 0 || !p.From.Equal(time.Date(2024, 1, 2, 0, 0, 0, 0, paris)) {
			t.Errorf("%v %v", errs, p)
		}
	})
	for name, c := range map[string]struct {
		edit        func(*parley.StatsListing)
		field, want string
	}{
		"BadGranularity": {func(l *parley.StatsListing) { l.Granularity = "hour" }, "granularity", "must be day, week or month"},
		"BadWindow":      {func(l *parley.StatsListing) { l.Window = "year" }, "window", "must be all"},
		"FromInFuture":   {func(l *parley.StatsListing) { l.Scope.From = "2025-07-01" }, "from", "must be before to"},
		"BadTo":          {func(l *parley.StatsListing) { l.Scope.To = "June" }, "to", "must be an RFC 3339 date-time or a YYYY-MM-DD date"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, _, errs := check(c.edit); errs[c.field] != c.want {
				t.Errorf("%v, want %s %s", errs, c.field, c.want)
			}
		})
	}
}

func TestVisitorListingRules(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		edit        func(*parley.VisitorListing)
		field, want string
	}{
		"Defaults":       {nil, "", ""},
		"LimitAtMax":     {func(l *parley.VisitorListing) { l.Limit = parley.MaxVisitorsPage }, "", ""},
		"LimitPastMax":   {func(l *parley.VisitorListing) { l.Limit = parley.MaxVisitorsPage + 1 }, "limit", "must be an integer between 1 and 200"},
		"NegativeOffset": {func(l *parley.VisitorListing) { l.Offset = -1 }, "offset", "must be an integer of at least 0"},
		"SearchAtMax":    {func(l *parley.VisitorListing) { l.Search = " " + strings.Repeat("s", parley.MaxVisitorSearch) + " " }, "", ""},
		"SearchPastMax":  {func(l *parley.VisitorListing) { l.Search = strings.Repeat("s", parley.MaxVisitorSearch+1) }, "search", "must be at most 200 characters"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			l := parley.NewVisitorListing()
			if c.edit != nil {
				c.edit(&l)
			}
			if errs := l.Check(); errs[c.field] != c.want || (c.field == "" && len(errs) > 0) {
				t.Errorf("%v, want %s %s", errs, c.field, c.want)
			}
		})
	}
}

// ParamsError names the parameter in its message, each of several.
func TestParamsError(t *testing.T) {
	t.Parallel()
	if err := parley.ParamsError(nil); err != nil {
		t.Errorf("no problem: %v", err)
	}
	err := parley.ParamsError(parley.FieldErrors{"status": "must be BOT or ESCALATED", "limit": "must be an integer between 1 and 100"})
	if parley.ErrorKind(err) != parley.KindInvalid || err.Error() != "limit must be an integer between 1 and 100; status must be BOT or ESCALATED" {
		t.Errorf("%v", err)
	}
}
