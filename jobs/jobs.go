// Package jobs holds Parley's River workers and the client that runs them.
package jobs

import (
	"cmp"
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/parley/parley/agent/outbound"
	"github.com/parley/parley/agent/outbound/fetch"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/deliveryargs"
	"github.com/parley/parley/db/testset"
	"github.com/parley/parley/db/webhooks"
)

// WebhookWorkers is how many deliveries run at once per instance: enough
// that receivers answering slowly (up to the 5 s bound) do not hold up the
// rest. Deliveries keep as many idle connections per host, so that a busy
// receiver's connections are reused rather than dialled per delivery.
const WebhookWorkers = 100

// JobTimeout bounds a job that sets no timeout of its own; no worker sets a
// longer one (a delivery takes at most 15 s, a corpus sync 30 s).
const JobTimeout = 30 * time.Second

// RescueAfter is how long a job may stay running before River takes it for
// the job of a crashed instance and runs it again: just past the longest job
// timeout, so a live job is never run twice, and seconds rather than River's
// default hour, so a crash delays deliveries by well under a minute.
const RescueAfter = JobTimeout + 5*time.Second

// Timing is the client's time limits and delivery retry schedule. The zero
// value is production's; a test that kills a runner shortens them, so that
// the new runner rescues and retries the dead one's jobs in seconds.
type Timing struct {
	// JobTimeout bounds a job that sets no timeout of its own; 0 means
	// JobTimeout.
	JobTimeout time.Duration
	// DeliveryTimeout bounds one delivery attempt (its job gets three times
	// as long); 0 means DeliveryTimeout.
	DeliveryTimeout time.Duration
	// RescueAfter is how long a job may stay running before it is taken
	// for the job of a crashed instance; longer than every job's timeout.
	// 0 means RescueAfter.
	RescueAfter time.Duration
	// RetryDelays are the waits after failed delivery attempts; empty
	// means RetryDelays.
	RetryDelays []time.Duration
}

// Observers are told what the jobs did, for the operator's metrics; a nil
// one observes nothing.
type Observers struct {
	Deliveries DeliveryObserver
}

// NewClient builds the River client with every worker and periodic job;
// outgoing requests go through guard, email through m, the corpus's
// embeddings to embed (none: no embedding jobs), the questions of test
// runs to tests (nil: a run ends at once, failed); obs is told what they did;
// mw is River's middleware around the jobs worked and inserted (the
// traces').
func NewClient(store *db.DB, box *auth.Box, guard *outbound.Guard, m Mail, embed Embeddings, tests TestRunner, logger *slog.Logger, timing Timing, obs Observers, mw ...rivertype.Middleware) (*river.Client[pgx.Tx], error) {
	deliveryTimeout := cmp.Or(timing.DeliveryTimeout, DeliveryTimeout)
	workers := river.NewWorkers()
	river.AddWorker(workers, &CounterCleanupWorker{DB: store})
	river.AddWorker(workers, &CorpusSyncWorker{DB: store, Client: guard.Client(fetch.Timeout)})
	river.AddWorker(workers, &CorpusSyncScanWorker{DB: store})
	river.AddWorker(workers, &CorpusLexiconScanWorker{DB: store})
	river.AddWorker(workers, &DeliveryPruneWorker{DB: store})
	river.AddWorker(workers, &AuditPruneWorker{DB: store, Now: m.Now})
	river.AddWorker(workers, &PasswordResetWorker{DB: store, Mail: m})
	river.AddWorker(workers, &InvitationMailWorker{DB: store, Mail: m})
	river.AddWorker(workers, &SignupMailWorker{DB: store, Mail: m})
	river.AddWorker(workers, &TakeoverWaitWorker{DB: store, Mail: m})
	river.AddWorker(workers, &TakeoverIdleWorker{DB: store, Now: m.Now})
	river.AddWorker(workers, &NobodyCameMailWorker{DB: store, Mail: m})
	river.AddWorker(workers, &WebhookDeliveryWorker{DB: store, Box: box, Client: DeliveryClient(guard, deliveryTimeout),
		Logger: logger, DeliveryTimeout: deliveryTimeout, RetryDelays: timing.RetryDelays, Observer: obs.Deliveries})
	river.AddWorker(workers, &TestRunWorker{DB: store, Runner: tests, Now: m.Now})
	addEmbedWorkers(workers, store, embed)
	client, err := river.NewClient(riverpgxv5.New(store.Pool()), &river.Config{
		Logger: logger,
		Queues: map[string]river.QueueConfig{
			river.QueueDefault: {MaxWorkers: 20},
			deliveryargs.Queue: {MaxWorkers: WebhookWorkers},
			MailQueue:          {MaxWorkers: 5},
			testset.Queue:      {MaxWorkers: TestRunQueueWorkers},
		},
		Workers:              workers,
		Middleware:           mw,
		FetchCooldown:        db.JobFetchCooldown,
		JobTimeout:           cmp.Or(timing.JobTimeout, JobTimeout),
		RescueStuckJobsAfter: cmp.Or(timing.RescueAfter, RescueAfter),
		PeriodicJobs: []*river.PeriodicJob{
			river.NewPeriodicJob(river.PeriodicInterval(10*time.Minute),
				func() (river.JobArgs, *river.InsertOpts) { return CounterCleanupArgs{}, nil },
				&river.PeriodicJobOpts{RunOnStart: true}),
			river.NewPeriodicJob(river.PeriodicInterval(scanInterval),
				func() (river.JobArgs, *river.InsertOpts) { return CorpusSyncScanArgs{}, nil },
				&river.PeriodicJobOpts{RunOnStart: false}),
			river.NewPeriodicJob(river.PeriodicInterval(LexiconInterval),
				func() (river.JobArgs, *river.InsertOpts) { return CorpusLexiconScanArgs{}, nil },
				&river.PeriodicJobOpts{RunOnStart: true}),
			river.NewPeriodicJob(river.PeriodicInterval(6*time.Hour),
				func() (river.JobArgs, *river.InsertOpts) { return DeliveryPruneArgs{}, nil },
				&river.PeriodicJobOpts{RunOnStart: true}),
			river.NewPeriodicJob(river.PeriodicInterval(AuditPruneInterval),
				func() (river.JobArgs, *river.InsertOpts) { return AuditPruneArgs{}, nil },
				&river.PeriodicJobOpts{RunOnStart: true}),
		},
	})
	if err != nil {
		return nil, err
	}
	return client, addEmbedQueue(client, embed)
}

// CounterCleanupArgs asks for expired rate-limit counters (and expired
// OAuth tokens) to be deleted.
type CounterCleanupArgs struct{}

// Kind names the job.
func (CounterCleanupArgs) Kind() string { return "counter_cleanup" }

// CounterCleanupWorker deletes expired rate-limit counters, the sign-in
// failures forgotten and expired OAuth tokens, so that their tables stay
// small.
type CounterCleanupWorker struct {
	river.WorkerDefaults[CounterCleanupArgs]
	DB *db.DB
}

// Work deletes the expired counters, sign-in failures and OAuth tokens.
func (w *CounterCleanupWorker) Work(ctx context.Context, job *river.Job[CounterCleanupArgs]) error {
	now := time.Now()
	if _, err := w.DB.DeleteExpiredCounters(ctx, now); err != nil {
		return err
	}
	if _, err := w.DB.DeleteExpiredLoginFailures(ctx, now); err != nil {
		return err
	}
	_, err := w.DB.DeleteExpiredOAuth(ctx, now)
	return err
}

// DeliveryPruneArgs asks for the deliveries log to be trimmed to
// webhooks.DeliveryRetention.
type DeliveryPruneArgs struct{}

// Kind names the job.
func (DeliveryPruneArgs) Kind() string { return "webhook_delivery_prune" }

// DeliveryPruneWorker deletes settled deliveries, and the events they
// carried, past webhooks.DeliveryRetention.
type DeliveryPruneWorker struct {
	river.WorkerDefaults[DeliveryPruneArgs]
	DB *db.DB
}

// Work prunes.
func (w *DeliveryPruneWorker) Work(ctx context.Context, job *river.Job[DeliveryPruneArgs]) error {
	_, _, err := w.DB.PruneDeliveries(ctx, time.Now().Add(-webhooks.DeliveryRetention))
	return err
}
