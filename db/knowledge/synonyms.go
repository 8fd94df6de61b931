package knowledge

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

const synonymColumns = `id, terms, created_at, updated_at`

// SynonymGroupsSQL is the terms of tenant $1's synonym groups, oldest
// first, as one JSON array of arrays: what a search expands a question
// with (parley.SynonymsOf).
const SynonymGroupsSQL = `coalesce(jsonb_agg(terms ORDER BY created_at, id), '[]') FROM corpus_synonyms WHERE tenant_id = $1`

// ListSynonyms returns the tenant's synonym groups, oldest first.
func (d *Knowledge) ListSynonyms(ctx context.Context, tenantID string) ([]parley.SynonymGroup, error) {
	rows, _ := d.pool.Query(ctx, `SELECT `+synonymColumns+` FROM corpus_synonyms WHERE tenant_id = $1 ORDER BY created_at, id`, tenantID)
	groups, err := pgx.CollectRows(rows, pgx.RowToStructByName[parley.SynonymGroup])
	if err != nil {
		return nil, fmt.Errorf("listing synonyms: %w", err)
	}
	return groups, nil
}

// GetSynonyms returns one of the tenant's synonym groups.
func (d *Knowledge) GetSynonyms(ctx context.Context, tenantID, id string) (parley.SynonymGroup, error) {
	if !pgbase.LooksLikeUUID(id) {
		return parley.SynonymGroup{}, parley.Errorf(parley.KindNotFound, "Synonym group not found")
	}
	rows, _ := d.pool.Query(ctx, `SELECT `+synonymColumns+` FROM corpus_synonyms WHERE tenant_id = $1 AND id = $2`, tenantID, id)
	g, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.SynonymGroup])
	if err != nil {
		return g, pgbase.NotFound(err, "Synonym group")
	}
	return g, nil
}

// CreateSynonyms adds a synonym group of terms, as parley.CleanSynonymTerms
// returns them (manage checks them), to the tenant, within parley.MaxSynonymGroups
// (KindRateLimited, code LIMIT_REACHED, past it), counted under the
// tenant's lock so that two creates cannot both take the last place.
func (d *Knowledge) CreateSynonyms(ctx context.Context, tenantID string, terms []string) (parley.SynonymGroup, error) {
	var g parley.SynonymGroup
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		if err := pgbase.LockTenant(ctx, tx, tenantID); err != nil {
			return fmt.Errorf("locking tenant: %w", err)
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM corpus_synonyms WHERE tenant_id = $1`, tenantID).Scan(&n); err != nil {
			return fmt.Errorf("counting synonyms: %w", err)
		}
		if n >= parley.MaxSynonymGroups {
			return &parley.Error{Kind: parley.KindRateLimited, Code: "LIMIT_REACHED",
				Message: fmt.Sprintf("Synonym limit reached (%d of %d groups): delete a group or merge two", n, parley.MaxSynonymGroups),
				Details: map[string]int{"current": n, "limit": parley.MaxSynonymGroups}}
		}
		rows, _ := tx.Query(ctx, `INSERT INTO corpus_synonyms (tenant_id, terms) VALUES ($1, $2) RETURNING `+synonymColumns, tenantID, terms)
		var err error
		if g, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.SynonymGroup]); err != nil {
			return fmt.Errorf("creating synonyms: %w", err)
		}
		return nil
	})
	return g, err
}

// UpdateSynonyms replaces the terms of one of the tenant's synonym groups
// (terms as parley.CleanSynonymTerms returns them).
func (d *Knowledge) UpdateSynonyms(ctx context.Context, tenantID, id string, terms []string) (parley.SynonymGroup, error) {
	var g parley.SynonymGroup
	if !pgbase.LooksLikeUUID(id) {
		return g, parley.Errorf(parley.KindNotFound, "Synonym group not found")
	}
	rows, _ := d.pool.Query(ctx, `UPDATE corpus_synonyms SET terms = $3, updated_at = now()
		WHERE tenant_id = $1 AND id = $2 RETURNING `+synonymColumns, tenantID, id, terms)
	g, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.SynonymGroup])
	if err != nil {
		return g, pgbase.NotFound(err, "Synonym group")
	}
	return g, nil
}

// DeleteSynonyms deletes one of the tenant's synonym groups.
func (d *Knowledge) DeleteSynonyms(ctx context.Context, tenantID, id string) error {
	if !pgbase.LooksLikeUUID(id) {
		return parley.Errorf(parley.KindNotFound, "Synonym group not found")
	}
	tag, err := d.pool.Exec(ctx, `DELETE FROM corpus_synonyms WHERE tenant_id = $1 AND id = $2`, tenantID, id)
	if err != nil {
		return fmt.Errorf("deleting synonyms: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return parley.Errorf(parley.KindNotFound, "Synonym group not found")
	}
	return nil
}
