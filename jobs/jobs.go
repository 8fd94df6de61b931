// Package jobs holds Parley's River workers and the client that runs them.
package jobs

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/parley/parley/agent"
	"github.com/parley/parley/db"
)

// NewClient builds the River client with every worker and periodic job;
// outgoing requests go through outbound. Jobs stuck running (a crashed
// instance) are rescued after a minute rather than River's default hour.
func NewClient(store *db.DB, outbound *agent.Outbound, logger *slog.Logger) (*river.Client[pgx.Tx], error) {
	workers := river.NewWorkers()
	river.AddWorker(workers, &CounterCleanupWorker{DB: store})
	river.AddWorker(workers, &CorpusSyncWorker{DB: store, Client: outbound.Client(FetchTimeout)})
	river.AddWorker(workers, &CorpusSyncScanWorker{DB: store})
	return river.NewClient(riverpgxv5.New(store.Pool), &river.Config{
		Logger:               logger,
		Queues:               map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 20}},
		Workers:              workers,
		RescueStuckJobsAfter: time.Minute,
		PeriodicJobs: []*river.PeriodicJob{
			river.NewPeriodicJob(river.PeriodicInterval(10*time.Minute),
				func() (river.JobArgs, *river.InsertOpts) { return CounterCleanupArgs{}, nil },
				&river.PeriodicJobOpts{RunOnStart: true}),
			river.NewPeriodicJob(river.PeriodicInterval(scanInterval),
				func() (river.JobArgs, *river.InsertOpts) { return CorpusSyncScanArgs{}, nil },
				&river.PeriodicJobOpts{RunOnStart: false}),
		},
	})
}

// CounterCleanupArgs asks for expired rate-limit counters to be deleted.
type CounterCleanupArgs struct{}

// Kind names the job.
func (CounterCleanupArgs) Kind() string { return "counter_cleanup" }

// CounterCleanupWorker deletes expired rate-limit counters so the table stays small.
type CounterCleanupWorker struct {
	river.WorkerDefaults[CounterCleanupArgs]
	DB *db.DB
}

// Work deletes the expired counters.
func (w *CounterCleanupWorker) Work(ctx context.Context, job *river.Job[CounterCleanupArgs]) error {
	_, err := w.DB.DeleteExpiredCounters(ctx, time.Now())
	return err
}
