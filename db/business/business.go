// Package business is the store of what the tenant sells and books through
// its assistant: its product catalog (RECOMMEND_PRODUCT), its payment
// connector (COLLECT_PAYMENT) and its calendar connector (BOOK_MEETING).
// db.DB embeds its store, so that its methods are the DB's.
package business

import "github.com/jackc/pgx/v5/pgxpool"

// Business is the store of the catalog and the connectors.
type Business struct {
	pool *pgxpool.Pool
}

// New is the store over pool.
func New(pool *pgxpool.Pool) *Business { return &Business{pool: pool} }
