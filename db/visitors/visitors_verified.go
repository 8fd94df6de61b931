package visitors

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// ResolveVisitorByExternalID finds the tenant's visitor with this externalId,
// creating it when there is none. Unlike ResolveChatVisitor it never matches
// a visitor's own id: a verified visitor token names the tenant's user.
func (d *Visitors) ResolveVisitorByExternalID(ctx context.Context, tenantID, externalID string) (parley.Visitor, error) {
	if externalID == "" || !pgbase.Storable(externalID) || len(externalID) > 255 {
		return parley.Visitor{}, &parley.Error{Kind: parley.KindInvalid, Message: "externalId must be 1 to 255 characters"}
	}
	// A concurrent first message may create the same visitor: the unique
	// index decides, and both read the winner's row.
	if _, err := d.pool.Exec(ctx, `INSERT INTO visitors (tenant_id, external_id) VALUES ($1, $2)
		ON CONFLICT (tenant_id, external_id) WHERE external_id IS NOT NULL DO NOTHING`, tenantID, externalID); err != nil {
		return parley.Visitor{}, fmt.Errorf("creating chat visitor: %w", err)
	}
	rows, _ := d.pool.Query(ctx, `SELECT `+visitorColumns+` FROM visitors WHERE tenant_id = $1 AND external_id = $2`, tenantID, externalID)
	v, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.Visitor])
	if err != nil {
		return parley.Visitor{}, pgbase.NotFound(err, "Visitor")
	}
	return v, nil
}
