package testset_test

import (
	"sync"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/db/testset"
)

// Starts racing for one tenant: exactly one runs, the others are refused
// with the running run; the results wait, each with its question; the
// change since the previous run is read per case; another tenant reaches
// none of it.
func TestStartRunsAndChanges(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	ctx := t.Context()
	ten, other := dbtest.NewTenant(t, store), dbtest.NewTenant(t, store)
	a, err := store.CreateTestCase(ctx, ten.ID, testset.CaseWrite{Question: "A?", MustContain: []string{"a"}, MustNotContain: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := store.CreateTestCase(ctx, ten.ID, testset.CaseWrite{Question: "B?", MustContain: []string{"b"}, MustNotContain: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.TestCase(ctx, other.ID, a.ID); parley.ErrorKind(err) != parley.KindNotFound {
		t.Errorf("another tenant's case: %v", err)
	}
	if err := store.DeleteTestCase(ctx, other.ID, a.ID); parley.ErrorKind(err) != parley.KindNotFound {
		t.Errorf("deleting another tenant's case: %v", err)
	}

	var wg sync.WaitGroup
	var mu sync.Mutex
	var started []testset.Run
	var refused []error
	for range 5 {
		wg.Go(func() {
			r, err := store.StartTestRun(ctx, ten.ID, false, time.Now())
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				refused = append(refused, err)
			} else {
				started = append(started, r)
			}
		})
	}
	wg.Wait()
	if len(started) != 1 || len(refused) != 4 {
		t.Fatalf("%d started, %d refused; want 1 and 4", len(started), len(refused))
	}
	first := started[0]
	for _, err := range refused {
		pe, _ := err.(*parley.Error)
		if pe == nil || pe.Kind != parley.KindConflict || pe.Code != testset.CodeRunning {
			t.Errorf("refusal %v", err)
		}
		if r, ok := pe.Details.(testset.Run); ok && r.ID != first.ID {
			t.Errorf("refusal names run %s, want %s", r.ID, first.ID)
		}
	}
	if first.Total != 2 || first.Status != testset.RunRunning || first.PreviousRunID != nil {
		t.Errorf("first run %+v", first)
	}
	if _, err := store.TestRun(ctx, other.ID, first.ID); parley.ErrorKind(err) != parley.KindNotFound {
		t.Errorf("another tenant's run: %v", err)
	}
	if res, err := store.TestResults(ctx, other.ID, first.ID); err != nil || len(res) != 0 {
		t.Errorf("another tenant's results: %v %v", res, err)
	}
	save := func(run string, pos int, status string) {
		t.Helper()
		if err := store.SaveTestResult(ctx, ten.ID, run, pos, testset.Outcome{Status: status, Answer: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	save(first.ID, 1, testset.ResultFailed)
	save(first.ID, 2, testset.ResultPassed)
	if err := store.FinishTestRun(ctx, ten.ID, first.ID, "", time.Now()); err != nil {
		t.Fatal(err)
	}
	// A third case after the first run: new in the second, no change.
	if _, err := store.CreateTestCase(ctx, ten.ID, testset.CaseWrite{Question: "C?", MustContain: []string{"c"}, MustNotContain: []string{}}); err != nil {
		t.Fatal(err)
	}
	second, err := store.StartTestRun(ctx, ten.ID, true, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if second.PreviousRunID == nil || *second.PreviousRunID != first.ID || second.Total != 3 || !second.Judge {
		t.Fatalf("second run %+v", second)
	}
	save(second.ID, 1, testset.ResultPassed)
	save(second.ID, 2, testset.ResultError)
	save(second.ID, 3, testset.ResultPassed)
	res, err := store.TestResults(ctx, ten.ID, second.ID)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].CaseID != a.ID || res[0].Change() != "now passing" || res[1].CaseID != b.ID || res[1].Change() != "now failing" || res[2].Change() != "" || res[2].Previous != nil {
		t.Errorf("changes: %q %q %q", res[0].Change(), res[1].Change(), res[2].Change())
	}
	// A deleted case keeps its results.
	if err := store.DeleteTestCase(ctx, ten.ID, a.ID); err != nil {
		t.Fatal(err)
	}
	if res, _ := store.TestResults(ctx, ten.ID, first.ID); len(res) != 2 || res[0].Question != "A?" {
		t.Errorf("after deleting a case: %+v", res)
	}
}
