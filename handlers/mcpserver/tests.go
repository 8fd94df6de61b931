package mcpserver

import (
	"context"
	"encoding/json"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db/testset"
	"github.com/parley/parley/handlers/jsonbody"
	"github.com/parley/parley/handlers/resource"
)

// The test set's tools: an agent or a CI job checks a knowledge-base
// change by running the tenant's tests and reading the failures.

// MaxTestWait bounds how long run_tests waits for its run (seconds); a run
// still going by then is read on with read_test_run.
const MaxTestWait = 50

// testPoll is how often run_tests reads its run while it waits.
const testPoll = 200 * time.Millisecond

// TestRunToolJSON is run_tests' and read_test_run's result: the run's
// counts, whether it finished, and the questions that failed (with their
// answers, sources and facts' verdicts) or changed since the last run.
type TestRunToolJSON struct {
	Run      resource.TestRunJSON      `json:"run"`
	Finished bool                      `json:"finished"`
	Failures []resource.TestResultJSON `json:"failures"`
	Changes  []resource.TestResultJSON `json:"changes"`
}

func newTestRunToolJSON(run testset.Run, results []testset.Result) TestRunToolJSON {
	full := resource.NewTestRunJSON(run, results)
	out := TestRunToolJSON{Finished: run.Status != testset.RunRunning, Failures: []resource.TestResultJSON{}, Changes: []resource.TestResultJSON{}}
	for _, r := range full.Results {
		if r.Status == testset.ResultFailed || r.Status == testset.ResultError {
			out.Failures = append(out.Failures, r)
		}
		if r.Change != nil {
			out.Changes = append(out.Changes, r)
		}
	}
	full.Results = nil
	out.Run = full
	return out
}

// testTools are the test set's tools.
func (h *Handler) testTools() []ManageTool {
	return []ManageTool{
		{Name: "run_tests", Scope: auth.ScopeMCPCorpusWrite,
			Description: "Run the tenant's test set (its questions with the facts their answers must and must not contain) against the current " +
				"configuration, and wait for the run up to `wait` seconds: the summary, the failures with their answers, and what changed since the last run.",
			Input: object(schema{
				"judge": boolean("Have the tenant's model judge each fact too"),
				"wait":  integer("Seconds to wait for the run to finish (default 30); a run still going is read with read_test_run", 0, MaxTestWait),
			}),
			Run: func(ctx context.Context, t parley.Tenant, _ auth.Principal, args map[string]json.RawMessage) (any, error) {
				a := struct {
					Judge bool `json:"judge"`
					Wait  *int `json:"wait"`
				}{}
				if errs := jsonbody.DecodeFields(args, &a); len(errs) > 0 {
					return nil, errs.Err()
				}
				wait := 30
				if a.Wait != nil {
					if *a.Wait < 0 || *a.Wait > MaxTestWait {
						return nil, resource.FieldError("wait", "must be between 0 and 50")
					}
					wait = *a.Wait
				}
				run, err := h.Manage.StartTestRun(ctx, t, a.Judge, h.Clock())
				if err != nil {
					return nil, resource.TestRunConflict(err)
				}
				return h.awaitTestRun(ctx, t.ID, run.ID, time.Duration(wait)*time.Second)
			}},
		{Name: "read_test_run", Scope: auth.ScopeMCPCorpusRead, ReadOnly: true,
			Description: "Read a run of the test set (the latest without `id`): the summary, the failures and what changed since the run before.",
			Input:       object(schema{"id": str("The run's id; the latest run when omitted", 0)}),
			Run: func(ctx context.Context, t parley.Tenant, _ auth.Principal, args map[string]json.RawMessage) (any, error) {
				var a struct {
					ID string `json:"id"`
				}
				if errs := jsonbody.DecodeFields(args, &a); len(errs) > 0 {
					return nil, errs.Err()
				}
				if a.ID == "" {
					run, results, ok, err := h.Manage.LatestTestRun(ctx, t.ID)
					if err != nil {
						return nil, err
					}
					if !ok {
						return nil, parley.Errorf(parley.KindNotFound, "Test run not found")
					}
					return newTestRunToolJSON(run, results), nil
				}
				run, results, err := h.Manage.TestRun(ctx, t.ID, a.ID)
				if err != nil {
					return nil, err
				}
				return newTestRunToolJSON(run, results), nil
			}},
	}
}

// awaitTestRun reads the run until it finishes or wait passes (or ctx
// ends), and answers it as it is then.
func (h *Handler) awaitTestRun(ctx context.Context, tenantID, runID string, wait time.Duration) (TestRunToolJSON, error) {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(testPoll)
	defer tick.Stop()
	for {
		run, results, err := h.Manage.TestRun(ctx, tenantID, runID)
		if err != nil {
			return TestRunToolJSON{}, err
		}
		if run.Status != testset.RunRunning {
			return newTestRunToolJSON(run, results), nil
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			return newTestRunToolJSON(run, results), nil
		case <-ctx.Done():
			return newTestRunToolJSON(run, results), nil
		}
	}
}
