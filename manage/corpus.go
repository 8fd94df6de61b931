package manage

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/parley/parley"
	"github.com/parley/parley/db/knowledge"
)

// The knowledge base's entries: one at a time (create, update, delete,
// read, list) and many at once (bulk, import: CheckCorpus with a
// SegmentTable, then the batch write).

// Listing limits (spec): a page of 20 entries by default, 100 at most; a
// search of 200 characters at most.
const (
	DefaultCorpusPage = 20
	MaxCorpusPage     = 100
	MaxCorpusSearch   = 200
)

// SegmentResolver finds one of the tenant's segments by slug or id: its
// id, or false when the tenant has no such segment.
type SegmentResolver func(ref string) (string, bool)

// SegmentTable resolves segments from one read of the tenant's segments,
// for the writes of many entries at once.
func (s *Service) SegmentTable(ctx context.Context, tenantID string) (SegmentResolver, error) {
	segs, err := s.DB.ListSegments(ctx, tenantID)
	if err != nil {
		return nil, err
	}
	ids := make(map[string]string, 2*len(segs))
	for _, seg := range segs {
		ids[seg.Slug], ids[seg.ID] = seg.ID, seg.ID
	}
	return func(ref string) (string, bool) {
		id, ok := ids[ref]
		return id, ok
	}, nil
}

// segmentLookup resolves one segment with one read, for a single write.
func (s *Service) segmentLookup(ctx context.Context, tenantID string) SegmentResolver {
	return func(ref string) (string, bool) {
		seg, err := s.DB.Segment(ctx, tenantID, ref)
		return seg.ID, err == nil
	}
}

// CheckCorpus checks in (creating: title and content required) and
// resolves its segment with segment: the write to apply, or its problems.
func CheckCorpus(in parley.CorpusInput, creating bool, segment SegmentResolver) (knowledge.CorpusWrite, parley.FieldErrors) {
	errs := in.Check(creating)
	w := knowledge.CorpusWrite{Title: in.Title, Content: in.Content, Summary: in.Summary, Priority: in.Priority,
		IsActive: in.IsActive, ExternalID: in.ExternalID, Source: in.Source, SourceURL: in.SourceURL,
		Locale: in.Locale, Tags: in.Tags}
	if in.Segment.Set {
		if in.Segment.Null || in.Segment.Value == "" {
			w.SegmentID = parley.Opt[string]{Set: true, Null: true}
		} else if id, ok := segment(in.Segment.Value); !ok {
			in.SegmentProblem(errs)
		} else {
			w.SegmentID = parley.Some(id)
		}
	}
	return w, errs
}

// CheckCorpusOne is CheckCorpus of a single write of the tenant's.
func (s *Service) CheckCorpusOne(ctx context.Context, tenantID string, in parley.CorpusInput, creating bool) (knowledge.CorpusWrite, parley.FieldErrors) {
	return CheckCorpus(in, creating, s.segmentLookup(ctx, tenantID))
}

// CreateCorpus adds an entry within the plan's corpus limit; with an
// externalId already used it updates that entry instead. created says
// which.
func (s *Service) CreateCorpus(ctx context.Context, t parley.Tenant, in parley.CorpusInput) (parley.CorpusEntry, bool, error) {
	w, errs := s.CheckCorpusOne(ctx, t.ID, in, true)
	if err := errs.Err(); err != nil {
		return parley.CorpusEntry{}, false, err
	}
	e, res, err := s.DB.UpsertCorpus(ctx, t.ID, t.PlanInfo().CorpusLimit, w)
	return e, res == knowledge.Created, err
}

// UpdateCorpus changes the fields of in that are set.
func (s *Service) UpdateCorpus(ctx context.Context, tenantID, id string, in parley.CorpusInput) (parley.CorpusEntry, error) {
	w, errs := s.CheckCorpusOne(ctx, tenantID, in, false)
	if err := errs.Err(); err != nil {
		return parley.CorpusEntry{}, err
	}
	return s.DB.UpdateCorpus(ctx, tenantID, id, w)
}

// CorpusEntry reads one of the tenant's entries.
func (s *Service) CorpusEntry(ctx context.Context, tenantID, id string) (parley.CorpusEntry, error) {
	return s.DB.CorpusEntry(ctx, tenantID, id)
}

// DeleteCorpus deletes one of the tenant's entries for good.
func (s *Service) DeleteCorpus(ctx context.Context, tenantID, id string) error {
	return s.DB.DeleteCorpus(ctx, tenantID, id)
}

// CorpusListing is a page of the knowledge base as a caller asks for it
// (its JSON is the MCP tools' arguments): Search words in titles and
// contents, Segment a segment's slug or id ("" for all). NewCorpusListing
// gives the defaults a caller overrides with what it was given.
type CorpusListing struct {
	Page    int    `json:"page"`
	Limit   int    `json:"limit"`
	Search  string `json:"search"`
	Segment string `json:"segmentSlug"`
}

// NewCorpusListing is the first page of all entries.
func NewCorpusListing() CorpusListing { return CorpusListing{Page: 1, Limit: DefaultCorpusPage} }

// ListCorpus reads one page of the tenant's entries. A page or limit out
// of bounds, a search longer than MaxCorpusSearch characters
// (parley.ParamsError's 400 naming the parameter), or a segment the tenant
// has not, is a 400.
func (s *Service) ListCorpus(ctx context.Context, tenantID string, l CorpusListing) (knowledge.CorpusPage, error) {
	errs := parley.FieldErrors{}
	parley.CheckCount(errs, "page", l.Page, 1, parley.MaxPage)
	parley.CheckCount(errs, "limit", l.Limit, 1, MaxCorpusPage)
	q := knowledge.CorpusQuery{Page: l.Page, Limit: l.Limit, Search: strings.TrimSpace(l.Search)}
	if utf8.RuneCountInString(q.Search) > MaxCorpusSearch {
		errs.Add("search", parley.TooLong(MaxCorpusSearch))
	}
	if err := parley.ParamsError(errs); err != nil {
		return knowledge.CorpusPage{}, err
	}
	if l.Segment != "" {
		seg, err := s.DB.Segment(ctx, tenantID, l.Segment)
		if parley.ErrorKind(err) == parley.KindNotFound {
			return knowledge.CorpusPage{}, &parley.Error{Kind: parley.KindInvalid, Message: fmt.Sprintf("No segment with slug %q", l.Segment),
				Details: map[string]string{"segmentSlug": "unknown segment"}}
		}
		if err != nil {
			return knowledge.CorpusPage{}, err
		}
		q.SegmentID = seg.ID
	}
	return s.DB.ListCorpus(ctx, tenantID, q)
}

// UpsertCorpusBatch writes checked entries (CheckCorpus) in one
// transaction, within the plan's corpus limit: each created, updated by
// its externalId, or left as it was.
func (s *Service) UpsertCorpusBatch(ctx context.Context, t parley.Tenant, writes []knowledge.CorpusWrite) ([]knowledge.UpsertResultOf, error) {
	return s.DB.UpsertCorpusBatch(ctx, t.ID, t.PlanInfo().CorpusLimit, writes)
}

// ImportCorpus writes the checked lines of an import in one transaction,
// within the plan's corpus limit.
func (s *Service) ImportCorpus(ctx context.Context, t parley.Tenant, imp knowledge.CorpusImport) (knowledge.CorpusImportResult, error) {
	return s.DB.ImportCorpus(ctx, t.ID, t.PlanInfo().CorpusLimit, imp)
}
