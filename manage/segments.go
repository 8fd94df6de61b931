package manage

import (
	"context"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
)

// The tenant's segments: audiences with a prompt, starters and a lead
// form of their own.

// CheckSegment checks in (creating: name and systemPrompt required): the
// write to apply, or its problems.
func CheckSegment(in parley.SegmentInput, creating bool) (db.SegmentWrite, parley.FieldErrors) {
	errs := in.Check(creating)
	return db.SegmentWrite{Slug: in.Slug, Name: in.Name, SystemPrompt: in.SystemPrompt, WelcomeMessage: in.WelcomeMessage,
		ConversationStarters: in.ConversationStarters, FormConfig: in.FormConfig, IsDefault: in.IsDefault,
		IsActive: in.IsActive, AskInChat: in.AskInChat}, errs
}

// CreateSegment creates a segment within the plan's segment limit. A taken
// slug is a conflict when the caller chose it; a made one gets a suffix.
func (s *Service) CreateSegment(ctx context.Context, t parley.Tenant, in parley.SegmentInput) (parley.Segment, error) {
	w, errs := CheckSegment(in, true)
	if err := errs.Err(); err != nil {
		return parley.Segment{}, err
	}
	return s.DB.CreateSegment(ctx, t.ID, t.PlanInfo().SegmentsLimit, w)
}

// UpdateSegment changes the fields of in that are set, of the segment ref
// (its id or slug).
func (s *Service) UpdateSegment(ctx context.Context, tenantID, ref string, in parley.SegmentInput) (parley.Segment, error) {
	w, errs := CheckSegment(in, false)
	if err := errs.Err(); err != nil {
		return parley.Segment{}, err
	}
	return s.DB.UpdateSegment(ctx, tenantID, ref, w)
}

// Segment reads one of the tenant's segments by id or slug.
func (s *Service) Segment(ctx context.Context, tenantID, ref string) (parley.Segment, error) {
	return s.DB.Segment(ctx, tenantID, ref)
}

// ListSegments lists the tenant's segments with their counts.
func (s *Service) ListSegments(ctx context.Context, tenantID string) ([]db.SegmentSummary, error) {
	return s.DB.ListSegments(ctx, tenantID)
}

// DeleteSegment deletes one of the tenant's segments; with cascade its
// entries and tools too, else a segment that still has some is a conflict.
func (s *Service) DeleteSegment(ctx context.Context, tenantID, ref string, cascade bool) (db.SegmentDeletion, error) {
	return s.DB.DeleteSegment(ctx, tenantID, ref, cascade)
}
