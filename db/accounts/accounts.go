// Package accounts is the SQL of who signs in and what they hold: users and
// their memberships of tenants, password resets, the login throttle's
// failures, API tokens, and OAuth (signing keys, clients, codes, grants and
// their tokens). db.DB embeds its store, so its methods are db.DB's; the
// tenant's creation adds its owner and first token in its own transaction
// through AddOwnerInTx and InsertToken.
package accounts

import (
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
)

// Accounts is the store of users, tokens and OAuth.
type Accounts struct {
	pool *pgxpool.Pool
	// jobs inserts the jobs that go with no change of ours (InsertJob: the
	// password-reset email).
	jobs *river.Client[pgx.Tx]
}

// New makes the accounts' store over pool, inserting its jobs with the
// insert-only client jobs.
func New(pool *pgxpool.Pool, jobs *river.Client[pgx.Tx]) *Accounts {
	return &Accounts{pool: pool, jobs: jobs}
}
