package jobs

import (
	"cmp"
	"context"
	"errors"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/testset"
)

// TestRunner answers one question of a test run and checks its facts
// (agent/testrun's Runner, which web builds over the engine).
type TestRunner interface {
	Answer(ctx context.Context, t parley.Tenant, seg parley.Segment, runID string, q testset.Result, judge bool) testset.Outcome
}

// TestRunQueueWorkers is how many runs (of different tenants) an instance
// works at once.
const TestRunQueueWorkers = 4

// TestRunParallel is how many questions of a run are asked at once.
const TestRunParallel = 4

// TestRunBudget is how long one working of a run starts new questions: it
// then lets those asked finish and snoozes, to continue at once with the
// rest, so that a run of slow answers never outlives the job's timeout (and
// River's rescue of stuck jobs never runs it twice).
const TestRunBudget = 15 * time.Second

// TestRunWorker works a run of a tenant's test set: it asks the run's
// pending questions through Runner, a few at a time, writing each result as
// it comes (the page's progress), and ends the run when none is left.
type TestRunWorker struct {
	river.WorkerDefaults[testset.RunArgs]
	DB     *db.DB
	Runner TestRunner
	// Now is the clock of the run's end; nil means time.Now.
	Now func() time.Time
	// Budget is how long one working starts new questions; 0 means
	// TestRunBudget.
	Budget time.Duration
}

func (w *TestRunWorker) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

// Work asks the pending questions, then ends the run; a run whose tenant
// cannot be read ends failed, and so does one whose last attempt fails, so
// that a run never stays "running" (which would refuse every later start).
func (w *TestRunWorker) Work(ctx context.Context, job *river.Job[testset.RunArgs]) error {
	err := w.work(ctx, job.Args)
	var snooze *river.JobSnoozeError
	if err != nil && !errors.As(err, &snooze) && job.Attempt >= job.MaxAttempts {
		ctx := context.WithoutCancel(ctx)
		if ferr := w.DB.FinishTestRun(ctx, job.Args.TenantID, job.Args.RunID, "The run stopped before its end: run the tests again", w.now()); ferr != nil {
			return ferr
		}
	}
	return err
}

func (w *TestRunWorker) work(ctx context.Context, a testset.RunArgs) error {
	run, err := w.DB.TestRun(ctx, a.TenantID, a.RunID)
	if parley.ErrorKind(err) == parley.KindNotFound {
		return nil // the tenant, and its runs, are gone
	}
	if err != nil || run.Status != testset.RunRunning {
		return err
	}
	t, err := w.DB.TenantByID(ctx, a.TenantID)
	if err != nil {
		return w.fail(ctx, a, err)
	}
	pending, err := w.DB.PendingTestResults(ctx, a.TenantID, a.RunID)
	if err != nil {
		return err
	}
	if w.Runner == nil {
		return w.DB.FinishTestRun(ctx, a.TenantID, a.RunID, "Test runs are not available on this server", w.now())
	}
	segments := map[string]parley.Segment{}
	var segMu sync.Mutex
	segment := func(id *string) (parley.Segment, error) {
		key := ""
		if id != nil {
			key = *id
		}
		segMu.Lock()
		defer segMu.Unlock()
		if s, ok := segments[key]; ok {
			return s, nil
		}
		var s parley.Segment
		var err error
		if id == nil {
			s, err = w.DB.DefaultSegment(ctx, a.TenantID)
		} else if s, err = w.DB.Segment(ctx, a.TenantID, *id); parley.ErrorKind(err) == parley.KindNotFound {
			s, err = w.DB.DefaultSegment(ctx, a.TenantID)
		}
		if err == nil {
			segments[key] = s
		}
		return s, err
	}
	deadline := time.Now().Add(cmp.Or(w.Budget, TestRunBudget))
	next := make(chan testset.Result)
	var wg sync.WaitGroup
	var errMu sync.Mutex
	var firstErr error
	for range TestRunParallel {
		wg.Go(func() {
			for q := range next {
				err := w.ask(ctx, t, segment, a.RunID, q, run.Judge)
				if err != nil {
					errMu.Lock()
					firstErr = cmp.Or(firstErr, err)
					errMu.Unlock()
				}
			}
		})
	}
	left := 0
	for i, q := range pending {
		// The first question is always asked, so that a run moves on
		// however slow its answers.
		if ctx.Err() != nil || (i > 0 && time.Now().After(deadline)) {
			left = len(pending) - i
			break
		}
		next <- q
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	if left > 0 {
		return river.JobSnooze(0)
	}
	return w.DB.FinishTestRun(ctx, a.TenantID, a.RunID, "", w.now())
}

// ask answers one question and writes its result; an error is the store's
// (the question stays pending for the next attempt).
func (w *TestRunWorker) ask(ctx context.Context, t parley.Tenant, segment func(*string) (parley.Segment, error), runID string, q testset.Result, judge bool) error {
	seg, err := segment(q.SegmentID)
	var o testset.Outcome
	if err != nil {
		if parley.ErrorKind(err) == parley.KindInternal {
			return err
		}
		o = testset.Outcome{Status: testset.ResultError, Error: "The question's bot could not be read: " + err.Error()}
	} else {
		o = w.Runner.Answer(ctx, t, seg, runID, q, judge)
	}
	if ctx.Err() != nil {
		return ctx.Err() // cut short: asked again on the next attempt
	}
	return w.DB.SaveTestResult(ctx, t.ID, runID, q.Position, o)
}

// fail ends the run failed with err's message when it is ours to show,
// else returns err for River to retry.
func (w *TestRunWorker) fail(ctx context.Context, a testset.RunArgs, err error) error {
	var pe *parley.Error
	if !errors.As(err, &pe) {
		return err
	}
	return w.DB.FinishTestRun(ctx, a.TenantID, a.RunID, pe.Message, w.now())
}
