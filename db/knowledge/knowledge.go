// Package knowledge is the SQL of a tenant's knowledge base: the corpus
// entries (with their bulk writes, CSV import and URL sync), their
// embeddings and the tenant's embedding settings, retrieval (the prompt's
// entries and the corpus search), synonyms and the lexicon. Every query
// filters by tenant. db.DB embeds its store, so its methods are db.DB's.
package knowledge

import (
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
)

// Knowledge is the store of the knowledge base.
type Knowledge struct {
	pool *pgxpool.Pool
	// jobs inserts the embedding jobs inside the transactions of the corpus
	// writes that call for them.
	jobs *river.Client[pgx.Tx]
	// embeddings makes corpus writes enqueue their tenant's embedding job
	// (EnableEmbeddings).
	embeddings bool
}

// New makes the knowledge base's store over pool, inserting its jobs with
// the insert-only client jobs.
func New(pool *pgxpool.Pool, jobs *river.Client[pgx.Tx]) *Knowledge {
	return &Knowledge{pool: pool, jobs: jobs}
}
