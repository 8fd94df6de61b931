package jobs

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/db/testset"
)

// fakeRunner answers every question as passed, noting the questions it was
// asked; cancel, when set, is called on the first question.
type fakeRunner struct {
	mu     sync.Mutex
	asked  []string
	segs   []string
	cancel context.CancelFunc
}

func (f *fakeRunner) Answer(ctx context.Context, t parley.Tenant, seg parley.Segment, runID string, q testset.Result, judge bool) testset.Outcome {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, q.Question)
	f.segs = append(f.segs, seg.Slug)
	if f.cancel != nil {
		f.cancel()
	}
	return testset.Outcome{Status: testset.ResultPassed, Answer: "yes: " + q.Question, Duration: time.Millisecond}
}

// newRun makes a running run of tenantID with n questions, the first
// answered already when answered is set (its River job is not inserted:
// the test works it itself).
func newRun(t *testing.T, store *db.DB, tenantID string, n int, answered bool) string {
	t.Helper()
	var id string
	if err := store.Pool().QueryRow(t.Context(), `INSERT INTO test_runs (tenant_id, status, total, started_at)
		VALUES ($1, 'running', $2, now()) RETURNING id::text`, tenantID, n).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Pool().Exec(t.Context(), `INSERT INTO test_results (run_id, position, tenant_id, case_id, question, must_contain, must_not_contain, status)
		SELECT $2, g, $1, gen_random_uuid(), 'Q' || g, '{}', '{}', CASE WHEN g = 1 AND $4 THEN 'passed' ELSE 'pending' END
		FROM generate_series(1, $3) g`, tenantID, id, n, answered); err != nil {
		t.Fatal(err)
	}
	return id
}

func runJob(tenantID, runID string, attempt int) *river.Job[testset.RunArgs] {
	return &river.Job[testset.RunArgs]{JobRow: &rivertype.JobRow{Attempt: attempt, MaxAttempts: 5},
		Args: testset.RunArgs{TenantID: tenantID, RunID: runID}}
}

func TestTestRunWorker(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)

	t.Run("AsksThePendingQuestionsThenEnds", func(t *testing.T) {
		t.Parallel()
		ten := dbtest.NewTenant(t, store)
		run := newRun(t, store, ten.ID, 3, true)
		f := &fakeRunner{}
		w := &TestRunWorker{DB: store, Runner: f}
		if err := w.Work(t.Context(), runJob(ten.ID, run, 1)); err != nil {
			t.Fatal(err)
		}
		if len(f.asked) != 2 || f.segs[0] != "default" {
			t.Errorf("asked %v of segments %v, want Q2 and Q3 of the default segment", f.asked, f.segs)
		}
		r, err := store.TestRun(t.Context(), ten.ID, run)
		if err != nil {
			t.Fatal(err)
		}
		results, _ := store.TestResults(t.Context(), ten.ID, run)
		if r.Status != testset.RunDone || r.Done != 3 || r.Passed != 3 || r.FinishedAt == nil || *results[2].Answer != "yes: Q3" {
			t.Errorf("run %+v, results %+v", r, results)
		}
		// Worked again (River's retry of a finished run): nothing asked.
		if err := w.Work(t.Context(), runJob(ten.ID, run, 2)); err != nil || len(f.asked) != 2 {
			t.Errorf("worked again: %v, asked %v", err, f.asked)
		}
	})

	t.Run("SnoozesPastItsBudget", func(t *testing.T) {
		t.Parallel()
		ten := dbtest.NewTenant(t, store)
		run := newRun(t, store, ten.ID, 30, false)
		f := &fakeRunner{}
		w := &TestRunWorker{DB: store, Runner: f, Budget: time.Nanosecond}
		err := w.Work(t.Context(), runJob(ten.ID, run, 1))
		var snooze *river.JobSnoozeError
		if !errors.As(err, &snooze) {
			t.Fatalf("past the budget: %v, want a snooze", err)
		}
		r, _ := store.TestRun(t.Context(), ten.ID, run)
		if r.Status != testset.RunRunning || r.Done == 0 || r.Done == 30 {
			t.Errorf("after the first working: %+v, want some questions answered and the run going", r)
		}
		w.Budget = time.Minute
		if err := w.Work(t.Context(), runJob(ten.ID, run, 1)); err != nil {
			t.Fatal(err)
		}
		if r, _ := store.TestRun(t.Context(), ten.ID, run); r.Status != testset.RunDone || r.Done != 30 || len(f.asked) != 30 {
			t.Errorf("after the second: %+v, %d asked", r, len(f.asked))
		}
	})

	t.Run("LastAttemptEndsTheRunFailed", func(t *testing.T) {
		t.Parallel()
		ten := dbtest.NewTenant(t, store)
		run := newRun(t, store, ten.ID, 2, false)
		ctx, cancel := context.WithCancel(t.Context())
		w := &TestRunWorker{DB: store, Runner: &fakeRunner{cancel: cancel}}
		if err := w.Work(ctx, runJob(ten.ID, run, 5)); err == nil {
			t.Fatal("a cut-short working returned no error")
		}
		r, _ := store.TestRun(t.Context(), ten.ID, run)
		if r.Status != testset.RunFailed || r.Error == nil {
			t.Errorf("run %+v, want failed with its reason", r)
		}
		// A new run may start now.
		if _, err := store.Pool().Exec(t.Context(), `INSERT INTO test_cases (tenant_id, question, must_contain) VALUES ($1, 'Q', '{a}')`, ten.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := store.StartTestRun(t.Context(), ten.ID, false, time.Now()); err != nil {
			t.Errorf("starting after a failed run: %v", err)
		}
	})
}
