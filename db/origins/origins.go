// Package origins is the store of the sites the widget was refused on
// (migration 00051): the origins that the tenant's allowed domains refused,
// which the dashboard's overview lists with "Allow this site". Writes are
// bounded twice: the caller writes an origin at most once a minute
// (handlers/public, which adds up the refusals it saw in between), and each
// write trims the tenant's list to its Kept most recently refused origins.
// Every query filters by tenant. db.DB embeds its store, so that its
// methods are the DB's.
package origins

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// Kept is how many refused origins a tenant keeps: the most recently
// refused.
const Kept = 50

// MaxOrigin is the longest origin recorded (the column's check).
const MaxOrigin = 300

// Refused is a site the widget was refused on.
type Refused struct {
	ID     string
	Origin string
	// FirstSeen and LastSeen are the first and the last refusal recorded.
	FirstSeen time.Time
	LastSeen  time.Time
	// Refusals counts the requests refused, to within the last minute's.
	Refusals int64
}

// Origins is the store of the refused origins.
type Origins struct{ pool *pgxpool.Pool }

// New makes the store over pool.
func New(pool *pgxpool.Pool) *Origins { return &Origins{pool: pool} }

// NoteRefusedOrigin records refusals (one or more) of origin, normalized by
// the caller, for the tenant at now, and forgets the tenant's origins past
// its Kept most recent: one round trip, in one transaction.
func (o *Origins) NoteRefusedOrigin(ctx context.Context, tenantID, origin string, refusals int, now time.Time) error {
	if refusals < 1 || origin == "" || len(origin) > MaxOrigin || !pgbase.Storable(origin) {
		return nil
	}
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO refused_origins (tenant_id, origin, first_seen, last_seen, refusals) VALUES ($1, $2, $3, $3, $4)
		ON CONFLICT (tenant_id, origin) DO UPDATE SET last_seen = GREATEST(refused_origins.last_seen, EXCLUDED.last_seen),
			refusals = refused_origins.refusals + EXCLUDED.refusals`, tenantID, origin, now, refusals)
	b.Queue(`DELETE FROM refused_origins WHERE tenant_id = $1 AND id NOT IN (
		SELECT id FROM refused_origins WHERE tenant_id = $1 ORDER BY last_seen DESC, id LIMIT $2)`, tenantID, Kept)
	if err := o.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("recording a refused origin: %w", err)
	}
	return nil
}

const refusedColumns = `id, origin, first_seen, last_seen, refusals`

// RefusedOrigins lists the tenant's origins refused since since, the most
// recently refused first.
func (o *Origins) RefusedOrigins(ctx context.Context, tenantID string, since time.Time) ([]Refused, error) {
	rows, _ := o.pool.Query(ctx, `SELECT `+refusedColumns+` FROM refused_origins
		WHERE tenant_id = $1 AND last_seen >= $2 ORDER BY last_seen DESC, id`, tenantID, since)
	list, err := pgx.CollectRows(rows, pgx.RowToStructByPos[Refused])
	if err != nil {
		return nil, fmt.Errorf("listing refused origins: %w", err)
	}
	return list, nil
}

// RefusedOrigin returns the tenant's refused origin of that id; another
// tenant's, or none, is not found.
func (o *Origins) RefusedOrigin(ctx context.Context, tenantID, id string) (Refused, error) {
	if !pgbase.LooksLikeUUID(id) {
		return Refused{}, parley.Errorf(parley.KindNotFound, "Refused site not found")
	}
	rows, _ := o.pool.Query(ctx, `SELECT `+refusedColumns+` FROM refused_origins WHERE tenant_id = $1 AND id = $2`, tenantID, id)
	r, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[Refused])
	if err != nil {
		return Refused{}, pgbase.NotFound(err, "Refused site")
	}
	return r, nil
}

// ForgetRefusedOrigin deletes the tenant's refused origin of that id;
// another tenant's, or none, is not found.
func (o *Origins) ForgetRefusedOrigin(ctx context.Context, tenantID, id string) error {
	if !pgbase.LooksLikeUUID(id) {
		return parley.Errorf(parley.KindNotFound, "Refused site not found")
	}
	tag, err := o.pool.Exec(ctx, `DELETE FROM refused_origins WHERE tenant_id = $1 AND id = $2`, tenantID, id)
	if err != nil {
		return fmt.Errorf("forgetting a refused origin: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return parley.Errorf(parley.KindNotFound, "Refused site not found")
	}
	return nil
}
