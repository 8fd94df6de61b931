// Package visitors is the SQL of a tenant's visitors: their rows and
// memory, the anonymous and verified visitors of the conversations, and the
// verification codes and challenges that make a conversation's visitor a
// verified one. Every query filters by tenant. db.DB embeds its store, so
// its methods are db.DB's.
package visitors

import (
	"github.com/jackc/pgx/v5/pgxpool"
)

// Visitors is the store of the visitors.
type Visitors struct {
	pool *pgxpool.Pool
}

// New makes the visitors' store over pool.
func New(pool *pgxpool.Pool) *Visitors { return &Visitors{pool: pool} }
