package db

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// JobCount is how many River jobs of a queue are in a state.
type JobCount struct {
	Queue, State string
	Count        int64
}

// Backlog is the work waiting across every instance: the River jobs not
// finished, by queue and state, and the age of the oldest webhook delivery
// still pending (0 when none is).
type Backlog struct {
	Jobs                  []JobCount
	OldestPendingDelivery time.Duration
}

// JobStates are the states Backlog counts: the jobs not finished.
var JobStates = []string{"available", "running", "retryable", "scheduled"}

// Backlog reads the backlog in one round trip, for the operator's metrics
// (at each scrape). It reads every tenant's rows, and only counts: River's
// fetching index (state, queue, ...) serves the counts, the partial index
// of pending deliveries the oldest one.
func (d *DB) Backlog(ctx context.Context) (Backlog, error) {
	rows, _ := d.pool.Query(ctx, `SELECT queue, state::text, count(*), 0::float8 FROM river_job
		WHERE state IN ('available', 'running', 'retryable', 'scheduled') GROUP BY queue, state
		UNION ALL
		SELECT '', '', 0, coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8
		FROM webhook_deliveries WHERE status = 'pending'`)
	var b Backlog
	var queue, state string
	var count int64
	var age float64
	_, err := pgx.ForEachRow(rows, []any{&queue, &state, &count, &age}, func() error {
		if state == "" {
			b.OldestPendingDelivery = time.Duration(age * float64(time.Second))
		} else {
			b.Jobs = append(b.Jobs, JobCount{Queue: queue, State: state, Count: count})
		}
		return nil
	})
	if err != nil {
		return Backlog{}, fmt.Errorf("reading the backlog: %w", err)
	}
	return b, nil
}
