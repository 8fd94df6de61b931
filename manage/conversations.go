package manage

import (
	"context"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db/listing"
)

// The tenant's conversations as listings read them: a page of them, the
// scope of an export, and the stats.

// ListConversations reads one page of the tenant's conversations, most
// recent first, after l's rules (parley.ParamsError's 400 naming the
// parameter). A segment the tenant has not is a 400 too.
func (s *Service) ListConversations(ctx context.Context, tenantID string, l parley.ConversationListing) (listing.ConversationPage, error) {
	p, errs := l.Check()
	if err := parley.ParamsError(errs); err != nil {
		return listing.ConversationPage{}, err
	}
	f := listing.ConversationFilter{From: p.From, To: p.To, Channel: l.Scope.Channel, VisitorID: l.VisitorID, ToolType: l.ToolType,
		Status: l.Status, Search: l.Search.Value, HasFeedback: l.HasFeedback, HasSubmission: l.HasSubmission, Page: l.Page, Limit: l.Limit}
	var err error
	if f.SegmentID, err = s.scopeSegment(ctx, tenantID, l.Scope.Segment); err != nil {
		return listing.ConversationPage{}, err
	}
	return s.DB.ListConversations(ctx, tenantID, f)
}

// ConversationFilter is the filter of the conversations in sc (dates,
// channel, segment), for an export, which adds its own window and limit.
func (s *Service) ConversationFilter(ctx context.Context, tenantID string, sc parley.ConversationScope) (listing.ConversationFilter, error) {
	p, errs := sc.Check()
	if err := parley.ParamsError(errs); err != nil {
		return listing.ConversationFilter{}, err
	}
	f := listing.ConversationFilter{From: p.From, To: p.To, Channel: sc.Channel}
	var err error
	f.SegmentID, err = s.scopeSegment(ctx, tenantID, sc.Segment)
	return f, err
}

// StatsQuery is the query of the stats l asks for, now being the end of
// today's window: its dates in l's Location, its window after the
// defaults and the year's cap.
func (s *Service) StatsQuery(ctx context.Context, tenantID string, l parley.StatsListing, now time.Time) (listing.StatsQuery, error) {
	p, errs := l.Check(now)
	if err := parley.ParamsError(errs); err != nil {
		return listing.StatsQuery{}, err
	}
	loc := l.Scope.Location
	if loc == nil {
		loc = time.UTC
	}
	q := listing.StatsQuery{Filter: listing.ConversationFilter{From: p.From, To: p.To, Channel: l.Scope.Channel},
		Granularity: l.Granularity, Location: loc.String(), AllTime: l.Window == "all"}
	var err error
	q.Filter.SegmentID, err = s.scopeSegment(ctx, tenantID, l.Scope.Segment)
	return q, err
}

// ConversationStats computes the stats l asks for (StatsQuery), returned
// with the query they were computed by.
func (s *Service) ConversationStats(ctx context.Context, tenantID string, l parley.StatsListing, now time.Time) (listing.StatsQuery, listing.ConversationStats, error) {
	q, err := s.StatsQuery(ctx, tenantID, l, now)
	if err != nil {
		return q, listing.ConversationStats{}, err
	}
	st, err := s.DB.ConversationStats(ctx, tenantID, q)
	return q, st, err
}

// scopeSegment is the id of the tenant's segment ref (a slug or id), ""
// for none; one the tenant has not is a 400.
func (s *Service) scopeSegment(ctx context.Context, tenantID, ref string) (string, error) {
	if ref == "" {
		return "", nil
	}
	seg, err := s.DB.Segment(ctx, tenantID, ref)
	if parley.ErrorKind(err) == parley.KindNotFound {
		return "", parley.ParamsError(parley.FieldErrors{"segment": "must be the slug of one of the tenant's segments"})
	}
	return seg.ID, err
}
