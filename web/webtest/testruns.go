package webtest

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/testrun"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/testset"
	"github.com/parley/parley/jobs"
)

// testRuns is the test binary's one River client of the test runs' queue:
// two clients on one database would work each other's runs. Its worker is
// production's, with a runner that asks each tenant's questions of the
// engine of the test server that registered the tenant (WorkTestRuns).
var testRuns struct {
	once    sync.Once
	err     error
	runners sync.Map // tenant id -> *testrun.Runner
}

// tenantRunners routes each question to its tenant's runner.
type tenantRunners struct{}

func (tenantRunners) Answer(ctx context.Context, t parley.Tenant, seg parley.Segment, runID string, q testset.Result, judge bool) testset.Outcome {
	r, ok := testRuns.runners.Load(t.ID)
	if !ok {
		return testset.Outcome{Status: testset.ResultError, Error: "no test server works this tenant's runs"}
	}
	return r.(*testrun.Runner).Answer(ctx, t, seg, runID, q, judge)
}

// WorkTestRuns has the runs of tenantID's test set worked by River, as
// production does, with b's engine, until t ends.
func (b *Bundle) WorkTestRuns(t *testing.T, tenantID string) {
	t.Helper()
	testRuns.runners.Store(tenantID, &testrun.Runner{Engine: b.Srv.Base.Engine})
	t.Cleanup(func() { testRuns.runners.Delete(tenantID) })
	testRuns.once.Do(func() { testRuns.err = startTestRuns(b.DB) })
	if testRuns.err != nil {
		t.Fatal(testRuns.err)
	}
}

func startTestRuns(store *db.DB) error {
	workers := river.NewWorkers()
	river.AddWorker(workers, &jobs.TestRunWorker{DB: store, Runner: tenantRunners{}})
	client, err := river.NewClient(riverpgxv5.New(store.Pool()), &river.Config{
		Logger:            slog.New(slog.NewTextHandler(io.Discard, nil)),
		Queues:            map[string]river.QueueConfig{testset.Queue: {MaxWorkers: jobs.TestRunQueueWorkers}},
		Workers:           workers,
		FetchCooldown:     db.JobFetchCooldown,
		FetchPollInterval: 50 * time.Millisecond,
		JobTimeout:        jobs.JobTimeout,
	})
	if err != nil {
		return err
	}
	return client.Start(context.Background())
}
