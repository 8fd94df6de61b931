package manage

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/parley/parley"
	"github.com/parley/parley/db/testset"
)

// The tenant's test set: questions with the facts their answer must and
// must not contain, run through the real engine (jobs' test run worker) as
// test turns. The dashboard, the REST API and the MCP server share these.

// TestCaseInput is a test question as a surface read it. Every field is
// required on create; on update an unset one keeps its value.
type TestCaseInput struct {
	Question       parley.Opt[string]   `json:"question"`
	MustContain    parley.Opt[[]string] `json:"mustContain"`
	MustNotContain parley.Opt[[]string] `json:"mustNotContain"`
	// SegmentSlug names the bot (segment) asked; "" or null asks the
	// default one.
	SegmentSlug parley.Opt[*string] `json:"segmentSlug"`
	// Problems are those the surface met reading the input (a field of the
	// wrong type), reported first.
	Problems parley.FieldErrors `json:"-"`
}

// TestRunningError is the refusal of a start while a run is going: 409,
// code RUN_IN_PROGRESS, the running run as Details.
func TestRunningError(err error) (testset.Run, bool) {
	pe, ok := err.(*parley.Error)
	if !ok || pe.Code != testset.CodeRunning {
		return testset.Run{}, false
	}
	r, ok := pe.Details.(testset.Run)
	return r, ok
}

// ListTestCases lists the tenant's test questions, oldest first.
func (s *Service) ListTestCases(ctx context.Context, tenantID string) ([]testset.Case, error) {
	list, err := s.DB.TestCases(ctx, tenantID)
	if list == nil && err == nil {
		list = []testset.Case{}
	}
	return list, err
}

// TestCase reads one of the tenant's test questions.
func (s *Service) TestCase(ctx context.Context, tenantID, id string) (testset.Case, error) {
	return s.DB.TestCase(ctx, tenantID, id)
}

// CreateTestCase adds a test question, within testset.MaxCases.
func (s *Service) CreateTestCase(ctx context.Context, tenantID string, in TestCaseInput) (testset.Case, error) {
	w, err := s.testCaseWrite(ctx, tenantID, in, testset.Case{}, true)
	if err != nil {
		return testset.Case{}, err
	}
	return s.DB.CreateTestCase(ctx, tenantID, w)
}

// UpdateTestCase changes one of the tenant's test questions: the fields set.
func (s *Service) UpdateTestCase(ctx context.Context, tenantID, id string, in TestCaseInput) (testset.Case, error) {
	old, err := s.DB.TestCase(ctx, tenantID, id)
	if err != nil {
		return testset.Case{}, err
	}
	w, err := s.testCaseWrite(ctx, tenantID, in, old, false)
	if err != nil {
		return testset.Case{}, err
	}
	return s.DB.UpdateTestCase(ctx, tenantID, id, w)
}

// DeleteTestCase deletes one of the tenant's test questions; past runs
// keep their results.
func (s *Service) DeleteTestCase(ctx context.Context, tenantID, id string) error {
	return s.DB.DeleteTestCase(ctx, tenantID, id)
}

// StartTestRun starts a run of the tenant's whole test set at now, judged
// by the tenant's model too when judge is set: one at a time (409
// RUN_IN_PROGRESS), a set with a question at least, on a plan with chat.
func (s *Service) StartTestRun(ctx context.Context, t parley.Tenant, judge bool, now time.Time) (testset.Run, error) {
	if !t.PlanInfo().Widget {
		return testset.Run{}, &parley.Error{Kind: parley.KindNotActivated, Code: "NOT_ACTIVATED",
			Message: "Tests cannot run: this tenant's plan does not include chat"}
	}
	return s.DB.StartTestRun(ctx, t.ID, judge, now)
}

// TestRun reads one of the tenant's runs with its results.
func (s *Service) TestRun(ctx context.Context, tenantID, id string) (testset.Run, []testset.Result, error) {
	run, err := s.DB.TestRun(ctx, tenantID, id)
	if err != nil {
		return run, nil, err
	}
	results, err := s.DB.TestResults(ctx, tenantID, id)
	return run, results, err
}

// LatestTestRun reads the tenant's latest run with its results; ok is
// false when it has none.
func (s *Service) LatestTestRun(ctx context.Context, tenantID string) (testset.Run, []testset.Result, bool, error) {
	runs, err := s.DB.TestRuns(ctx, tenantID, 1)
	if err != nil || len(runs) == 0 {
		return testset.Run{}, nil, false, err
	}
	results, err := s.DB.TestResults(ctx, tenantID, runs[0].ID)
	return runs[0], results, true, err
}

// testCaseWrite checks in over old (the case updated; zero on create) and
// resolves its segment.
func (s *Service) testCaseWrite(ctx context.Context, tenantID string, in TestCaseInput, old testset.Case, creating bool) (testset.CaseWrite, error) {
	w := testset.CaseWrite{Question: old.Question, MustContain: old.MustContain, MustNotContain: old.MustNotContain, SegmentID: old.SegmentID}
	errs := in.Problems.Copy()
	if _, bad := errs["question"]; !bad && (in.Question.Set || creating) {
		w.Question = strings.TrimSpace(in.Question.Value)
		switch n := utf8.RuneCountInString(w.Question); {
		case n == 0:
			errs["question"] = "is required"
		case n > testset.MaxQuestion:
			errs["question"] = fmt.Sprintf("must be at most %d characters", testset.MaxQuestion)
		case !storable(w.Question):
			errs["question"] = "must be text without NUL characters"
		}
	}
	if _, bad := errs["mustContain"]; !bad && (in.MustContain.Set || creating) {
		w.MustContain = cleanFacts(in.MustContain.Value, "mustContain", errs)
	}
	if _, bad := errs["mustNotContain"]; !bad && (in.MustNotContain.Set || creating) {
		w.MustNotContain = cleanFacts(in.MustNotContain.Value, "mustNotContain", errs)
	}
	if errs["mustContain"] == "" && errs["mustNotContain"] == "" {
		switch n := len(w.MustContain) + len(w.MustNotContain); {
		case n == 0:
			errs["mustContain"] = "needs a fact at least (or mustNotContain one)"
		case n > testset.MaxFacts:
			errs["mustContain"] = fmt.Sprintf("and mustNotContain hold at most %d facts together", testset.MaxFacts)
		}
	}
	if _, bad := errs["segmentSlug"]; !bad && in.SegmentSlug.Set {
		w.SegmentID = nil
		if ref := in.SegmentSlug.Value; ref != nil && strings.TrimSpace(*ref) != "" {
			seg, err := s.DB.Segment(ctx, tenantID, strings.TrimSpace(*ref))
			switch {
			case parley.ErrorKind(err) == parley.KindNotFound:
				errs["segmentSlug"] = "names no segment of this tenant"
			case err != nil:
				return w, err
			default:
				w.SegmentID = &seg.ID
			}
		}
	}
	if len(errs) > 0 {
		return w, errs.Err()
	}
	return w, nil
}

// cleanFacts trims facts and drops the empty ones, noting in errs under
// field one too long.
func cleanFacts(facts []string, field string, errs parley.FieldErrors) []string {
	out := make([]string, 0, len(facts))
	for _, f := range facts {
		f = strings.Join(strings.Fields(f), " ")
		switch {
		case f == "":
			continue
		case utf8.RuneCountInString(f) > testset.MaxFact:
			errs[field] = fmt.Sprintf("holds a fact longer than %d characters", testset.MaxFact)
		case !storable(f):
			errs[field] = "must be text without NUL characters"
		}
		out = append(out, f)
	}
	return out
}

// storable reports whether s can be stored as text: valid UTF-8 without NUL.
func storable(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }
