// Package webhooks is the SQL of a tenant's webhooks: the endpoints, the
// events they are sent (Event) and the deliveries with their River jobs,
// their attempts and their pruning. Every query on a tenant's rows filters
// by tenant. db.DB embeds its store, so its methods are db.DB's; the stores
// that record an event call EnqueueDeliveries in the event's transaction.
package webhooks

import (
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
)

// Webhooks is the store of the webhook endpoints and their deliveries.
type Webhooks struct {
	pool *pgxpool.Pool
	// jobs inserts and cancels the deliveries' River jobs inside the
	// transactions that change the deliveries.
	jobs *river.Client[pgx.Tx]
}

// New makes the webhooks' store over pool, inserting its jobs with the
// insert-only client jobs.
func New(pool *pgxpool.Pool, jobs *river.Client[pgx.Tx]) *Webhooks {
	return &Webhooks{pool: pool, jobs: jobs}
}
