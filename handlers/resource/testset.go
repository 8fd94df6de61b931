package resource

import (
	"context"
	"encoding/json"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/testset"
	"github.com/parley/parley/handlers/jsonbody"
	"github.com/parley/parley/manage"
)

// TestCaseJSON is a question of the tenant's test set.
type TestCaseJSON struct {
	ID             string      `json:"id"`
	Question       string      `json:"question"`
	MustContain    []string    `json:"mustContain"`
	MustNotContain []string    `json:"mustNotContain"`
	Segment        *segmentRef `json:"segment"`
	CreatedAt      time.Time   `json:"createdAt"`
	UpdatedAt      time.Time   `json:"updatedAt"`
}

// TestCaseListJSON is what GET /tenants/{slug}/tests answers.
type TestCaseListJSON struct {
	Tests []TestCaseJSON `json:"tests"`
	// Limit is how many questions a tenant may have.
	Limit int `json:"limit"`
}

// TestSegments maps the tenant's segments' ids to their slug and name, to
// name the segment of each question.
type TestSegments map[string]segmentRef

// NewTestSegments reads the tenant's segments.
func NewTestSegments(ctx context.Context, store *db.DB, tenantID string) (TestSegments, error) {
	segs, err := store.ListSegments(ctx, tenantID)
	if err != nil {
		return nil, err
	}
	out := make(TestSegments, len(segs))
	for _, s := range segs {
		out[s.ID] = segmentRef{Slug: s.Slug, Name: s.Name}
	}
	return out, nil
}

func (m TestSegments) ref(id *string) *segmentRef {
	if id == nil {
		return nil
	}
	if r, ok := m[*id]; ok {
		return &r
	}
	return nil
}

// NewTestCaseJSON is c's representation.
func NewTestCaseJSON(c testset.Case, segs TestSegments) TestCaseJSON {
	return TestCaseJSON{ID: c.ID, Question: c.Question, MustContain: nonNil(c.MustContain), MustNotContain: nonNil(c.MustNotContain),
		Segment: segs.ref(c.SegmentID), CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC()}
}

// NewTestCaseListJSON is the tenant's list of questions.
func NewTestCaseListJSON(list []testset.Case, segs TestSegments) TestCaseListJSON {
	out := TestCaseListJSON{Tests: make([]TestCaseJSON, len(list)), Limit: testset.MaxCases}
	for i, c := range list {
		out.Tests[i] = NewTestCaseJSON(c, segs)
	}
	return out
}

// TestCaseInputOf decodes the fields of a test question's write: the REST
// body or an MCP tool's arguments.
func TestCaseInputOf(raw map[string]json.RawMessage) manage.TestCaseInput {
	var in manage.TestCaseInput
	in.Problems = jsonbody.DecodeFields(raw, &in)
	return in
}

// TestRunJSON is a run of the test set with its results so far.
type TestRunJSON struct {
	ID string `json:"id"`
	// Status is running, done or failed (the run stopped: Error says why).
	Status     string     `json:"status"`
	Judge      bool       `json:"judge"`
	Total      int        `json:"total"`
	Done       int        `json:"done"`
	Passed     int        `json:"passed"`
	Failed     int        `json:"failed"`
	Error      *string    `json:"error"`
	StartedAt  time.Time  `json:"startedAt"`
	FinishedAt *time.Time `json:"finishedAt"`
	// PreviousRunID is the run the changes are measured against.
	PreviousRunID *string `json:"previousRunId"`
	NowPassing    int     `json:"nowPassing"`
	NowFailing    int     `json:"nowFailing"`
	// Results are in the set's order; absent from the listing of runs.
	Results []TestResultJSON `json:"results,omitempty"`
}

// TestResultJSON is one question of a run.
type TestResultJSON struct {
	CaseID   string `json:"caseId"`
	Question string `json:"question"`
	// Status is pending, passed, failed or error.
	Status  string                `json:"status"`
	Answer  *string               `json:"answer"`
	Sources []parley.KnowledgeRef `json:"sources"`
	Checks  []testset.Check       `json:"checks"`
	Error   *string               `json:"error"`
	// Change is "now passing" or "now failing" against the previous run,
	// null when unchanged, new, or pending.
	Change         *string `json:"change"`
	PreviousStatus *string `json:"previousStatus"`
	DurationMS     *int    `json:"durationMs"`
	// ConversationID is the test conversation the question was asked in.
	ConversationID *string `json:"conversationId"`
}

// NewTestRunJSON is run's representation with its results (none: nil).
func NewTestRunJSON(run testset.Run, results []testset.Result) TestRunJSON {
	j := TestRunJSON{ID: run.ID, Status: run.Status, Judge: run.Judge, Total: run.Total, Done: run.Done, Passed: run.Passed,
		Failed: run.Failed, Error: run.Error, StartedAt: run.StartedAt.UTC(), PreviousRunID: run.PreviousRunID}
	if run.FinishedAt != nil {
		f := run.FinishedAt.UTC()
		j.FinishedAt = &f
	}
	if results != nil {
		j.Results = make([]TestResultJSON, len(results))
	}
	for i, r := range results {
		rj := TestResultJSON{CaseID: r.CaseID, Question: r.Question, Status: r.Status, Answer: r.Answer, Checks: r.Checks,
			Error: r.Error, PreviousStatus: r.Previous, DurationMS: r.DurationMS, Sources: r.Sources, ConversationID: r.ConversationID}
		if rj.Checks == nil {
			rj.Checks = []testset.Check{}
		}
		if rj.Sources == nil {
			rj.Sources = []parley.KnowledgeRef{}
		}
		switch ch := r.Change(); ch {
		case "now passing":
			j.NowPassing++
			rj.Change = &ch
		case "now failing":
			j.NowFailing++
			rj.Change = &ch
		}
		j.Results[i] = rj
	}
	return j
}

// TestRunConflict is the refusal of a start while a run is going, its
// details the running run: {run}.
func TestRunConflict(err error) error {
	run, ok := manage.TestRunningError(err)
	if !ok {
		return err
	}
	pe := *err.(*parley.Error)
	pe.Details = map[string]any{"run": NewTestRunJSON(run, nil)}
	return &pe
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
