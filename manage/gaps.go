package manage

import (
	"context"
	"slices"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db/gaps"
)

// Knowledge gaps (issue 40): the visitors' questions the assistant could
// not answer well, grouped by wording (db/gaps), and what the owner did
// about each group.

// Knowledge gaps' listing bounds: the default window (days up to now),
// the default and largest page.
const (
	DefaultGapDays = 30
	DefaultGapPage = 20
	MaxGapPage     = 100
)

// noEnd is the end of a window left open.
var noEnd = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// GapStates are the states a listing filters by; GapMarks those a group
// can be set to (open: its state forgotten).
var (
	GapStates = []string{gaps.StateOpen, gaps.StateAnswered, gaps.StateDismissed, gaps.StateAll}
	GapMarks  = []string{gaps.StateOpen, gaps.StateAnswered, gaps.StateDismissed}
)

// GapListing is a page of knowledge gaps as a caller asks for it: the
// scope's dates (default: the DefaultGapDays up to now), channel and
// segment (a slug or id), the groups' State (open when empty), one page.
type GapListing struct {
	Scope parley.ConversationScope
	State string
	Page  int
	Limit int
}

// NewGapListing is the first page of the open groups.
func NewGapListing() GapListing {
	return GapListing{State: gaps.StateOpen, Page: 1, Limit: DefaultGapPage}
}

// ListKnowledgeGaps reads one page of the tenant's knowledge gaps at now.
// A bad parameter is a 400 naming it (parley.ParamsError), a segment the
// tenant has not a 400 too.
func (s *Service) ListKnowledgeGaps(ctx context.Context, tenantID string, l GapListing, now time.Time) (gaps.Page, error) {
	p, errs := l.Scope.Check()
	parley.CheckCount(errs, "page", l.Page, 1, parley.MaxPage)
	parley.CheckCount(errs, "limit", l.Limit, 1, MaxGapPage)
	if l.State == "" {
		l.State = gaps.StateOpen
	}
	if !slices.Contains(GapStates, l.State) {
		errs.Add("state", "must be open, answered, dismissed or all")
	}
	if err := parley.ParamsError(errs); err != nil {
		return gaps.Page{}, err
	}
	// Without an end, up to now and whatever the clocks of the database
	// (which stamps the answers) and of this instance say: no end.
	switch {
	case p.From.IsZero() && p.To.IsZero():
		p.From = now.AddDate(0, 0, -DefaultGapDays)
	case p.From.IsZero():
		p.From = p.To.AddDate(0, 0, -DefaultGapDays)
	}
	if p.To.IsZero() {
		p.To = noEnd
	}
	segID, err := s.scopeSegment(ctx, tenantID, l.Scope.Segment)
	if err != nil {
		return gaps.Page{}, err
	}
	return s.DB.ListGaps(ctx, tenantID, gaps.Query{From: p.From, To: p.To, SegmentID: segID, Channel: l.Scope.Channel,
		State: l.State, Page: l.Page, Limit: l.Limit})
}

// GapAnswered is the state of a group answered (GapMarks).
const GapAnswered = gaps.StateAnswered

// GapMark is what the owner did about a group of knowledge gaps: its Key
// (gaps.Group.Key), the State it moves to (one of GapMarks), and with
// answered, the knowledge-base entry that answers it (optional).
type GapMark struct {
	Key      string             `json:"key"`
	State    string             `json:"state"`
	EntryID  string             `json:"entryId"`
	Problems parley.FieldErrors `json:"-"` // what the surface could not read, reported first
}

// MarkKnowledgeGap sets what the owner did about the tenant's group of
// m.Key: answered (by the entry of m.EntryID, "" none), dismissed, or open
// again. A bad field is a 400; a key of no group of the tenant's, or an
// entry of none of its entries, a 404.
func (s *Service) MarkKnowledgeGap(ctx context.Context, tenantID string, m GapMark) error {
	errs := m.Problems.Copy()
	if _, bad := errs["state"]; !bad && !slices.Contains(GapMarks, m.State) {
		errs.Add("state", "must be open, answered or dismissed")
	}
	if _, bad := errs["key"]; !bad && m.Key == "" {
		errs.Add("key", "is required")
	}
	if _, bad := errs["entryId"]; !bad && m.EntryID != "" && m.State != gaps.StateAnswered {
		errs.Add("entryId", "goes only with state answered")
	}
	if err := errs.Err(); err != nil {
		return err
	}
	return s.DB.SetGapState(ctx, tenantID, m.Key, m.State, m.EntryID)
}
