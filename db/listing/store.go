// Package listing is the SQL of the dashboard's and the API's listings over
// a tenant's conversations and submissions: the filtered, searched and
// paged lists, one conversation's detail, the exports' walks, the
// conversation stats and the submissions' (with their deletion). Every
// query filters by tenant. db.DB embeds its store, so its methods are
// db.DB's.
package listing

import (
	"github.com/jackc/pgx/v5/pgxpool"
)

// Listings is the store of the listings.
type Listings struct {
	pool *pgxpool.Pool
	// indexFirstMax overrides searchIndexFirstMax when not zero (tests:
	// negative walks every search).
	indexFirstMax int
}

// New makes the listings' store over pool.
func New(pool *pgxpool.Pool) *Listings { return &Listings{pool: pool} }
