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
	if p.To.IsZero() {
		p.To = now.Add(time.Second)
	}
	if p.From.IsZero() {
		p.From = p.To.AddDate(0, 0, -DefaultGapDays)
	}
	segID, err := s.scopeSegment(ctx, tenantID, l.Scope.Segment)
	if err != nil {
		return gaps.Page{}, err
	}
	return s.DB.ListGaps(ctx, tenantID, gaps.Query{From: p.From, To: p.To, SegmentID: segID, Channel: l.Scope.Channel,
		State: l.State, Page: l.Page, Limit: l.Limit})
}

// MarkKnowledgeGap sets what the owner did about the tenant's group of
// key: answered (by the knowledge-base entry of entryID, "" none),
// dismissed, or open again. A state of none of GapMarks is a 400; a key
// of no group of the tenant's a 404.
func (s *Service) MarkKnowledgeGap(ctx context.Context, tenantID, key, state, entryID string) error {
	if !slices.Contains(GapMarks, state) {
		return parley.ParamsError(parley.FieldErrors{"state": "must be open, answered or dismissed"})
	}
	if key == "" {
		return parley.ParamsError(parley.FieldErrors{"key": "is required"})
	}
	if state != gaps.StateAnswered {
		entryID = ""
	}
	return s.DB.SetGapState(ctx, tenantID, key, state, entryID)
}
