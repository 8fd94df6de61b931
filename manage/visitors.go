package manage

import (
	"context"

	"github.com/parley/parley"
	"github.com/parley/parley/db/visitors"
)

// The tenant's known visitors and the facts the assistant remembers of
// them.

// visitorWrite checks in (creating: an email or an externalId required):
// the write to apply, or its problems.
func visitorWrite(in parley.VisitorInput, creating bool) (visitors.VisitorWrite, error) {
	if err := in.Check(creating).Err(); err != nil {
		return visitors.VisitorWrite{}, err
	}
	return visitors.VisitorWrite{Email: in.Email, DisplayName: in.DisplayName, Phone: in.Phone, AuthProvider: in.AuthProvider,
		ExternalID: in.ExternalID, Metadata: in.Metadata}, nil
}

// CreateVisitor creates a visitor; a taken email or externalId is a
// conflict.
func (s *Service) CreateVisitor(ctx context.Context, tenantID string, in parley.VisitorInput) (visitors.VisitorDetail, error) {
	w, err := visitorWrite(in, true)
	if err != nil {
		return visitors.VisitorDetail{}, err
	}
	return s.DB.CreateVisitor(ctx, tenantID, w)
}

// UpdateVisitor changes the fields of in that are set, of the visitor id.
func (s *Service) UpdateVisitor(ctx context.Context, tenantID, id string, in parley.VisitorInput) (visitors.VisitorDetail, error) {
	w, err := visitorWrite(in, false)
	if err != nil {
		return visitors.VisitorDetail{}, err
	}
	return s.DB.UpdateVisitor(ctx, tenantID, id, w)
}

// DeleteVisitor erases a visitor for good, with their memory and
// conversations.
func (s *Service) DeleteVisitor(ctx context.Context, tenantID, id string) error {
	return s.DB.DeleteVisitor(ctx, tenantID, id)
}

// Visitor reads one of the tenant's visitors with their counts.
func (s *Service) Visitor(ctx context.Context, tenantID, id string) (visitors.VisitorDetail, error) {
	return s.DB.VisitorDetail(ctx, tenantID, id)
}

// ListVisitorPage returns the page of the tenant's visitors l asks for,
// newest first, and their total, after l's rules (parley.ParamsError's
// 400 naming the parameter); the search matches email, display name or
// externalId.
func (s *Service) ListVisitorPage(ctx context.Context, tenantID string, l parley.VisitorListing) ([]parley.Visitor, int, error) {
	if err := parley.ParamsError(l.Check()); err != nil {
		return nil, 0, err
	}
	return s.DB.ListVisitors(ctx, tenantID, l.Search, l.Limit, l.Offset)
}

// ListMemory lists the facts remembered of a visitor.
func (s *Service) ListMemory(ctx context.Context, tenantID, visitorID string) ([]parley.MemoryFact, error) {
	return s.DB.ListMemory(ctx, tenantID, visitorID)
}

// Memory reads one fact remembered of a visitor, by its key.
func (s *Service) Memory(ctx context.Context, tenantID, visitorID, key string) (parley.MemoryFact, error) {
	return s.DB.Memory(ctx, tenantID, visitorID, key)
}

// SaveMemory remembers a fact of a visitor, replacing the one of the same
// key; a new key past the most facts kept is a conflict.
func (s *Service) SaveMemory(ctx context.Context, tenantID, visitorID string, in parley.MemoryInput) (parley.MemoryFact, error) {
	if err := in.Check().Err(); err != nil {
		return parley.MemoryFact{}, err
	}
	return s.DB.UpsertMemory(ctx, tenantID, visitorID, in.Key, in.Value)
}

// DeleteMemory forgets a fact remembered of a visitor.
func (s *Service) DeleteMemory(ctx context.Context, tenantID, visitorID, key string) error {
	return s.DB.DeleteMemory(ctx, tenantID, visitorID, key)
}
