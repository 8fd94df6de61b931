package manage

import (
	"context"

	"github.com/parley/parley"
)

// The tenant's synonym groups: words or phrases its visitors use for the
// same thing, read by the search and the prompt's ranking.

// ListSynonyms lists the tenant's groups, oldest first.
func (s *Service) ListSynonyms(ctx context.Context, tenantID string) ([]parley.SynonymGroup, error) {
	groups, err := s.DB.ListSynonyms(ctx, tenantID)
	if groups == nil && err == nil {
		groups = []parley.SynonymGroup{}
	}
	return groups, err
}

// Synonyms reads one of the tenant's groups.
func (s *Service) Synonyms(ctx context.Context, tenantID, id string) (parley.SynonymGroup, error) {
	return s.DB.GetSynonyms(ctx, tenantID, id)
}

// CreateSynonyms adds a group of terms (parley.CleanSynonymTerms cleans
// and checks them), within parley.MaxSynonymGroups.
func (s *Service) CreateSynonyms(ctx context.Context, tenantID string, terms []string) (parley.SynonymGroup, error) {
	terms, err := parley.CleanSynonymTerms(terms)
	if err != nil {
		return parley.SynonymGroup{}, err
	}
	return s.DB.CreateSynonyms(ctx, tenantID, terms)
}

// UpdateSynonyms replaces the terms of one of the tenant's groups.
func (s *Service) UpdateSynonyms(ctx context.Context, tenantID, id string, terms []string) (parley.SynonymGroup, error) {
	terms, err := parley.CleanSynonymTerms(terms)
	if err != nil {
		return parley.SynonymGroup{}, err
	}
	return s.DB.UpdateSynonyms(ctx, tenantID, id, terms)
}

// DeleteSynonyms deletes one of the tenant's groups.
func (s *Service) DeleteSynonyms(ctx context.Context, tenantID, id string) error {
	return s.DB.DeleteSynonyms(ctx, tenantID, id)
}
