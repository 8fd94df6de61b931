package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley/db/testset"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/jsonbody"
	"github.com/parley/parley/handlers/resource"
)

// Tests is the tenant's test set: its questions with the facts their
// answers must and must not contain, and its runs, which a CI job starts
// and polls to fail on regressions.
type Tests struct{ core }

// runsListed is how many runs GET /tenants/{slug}/tests/runs lists.
const runsListed = 20

// ListTests answers GET /tenants/{slug}/tests: the questions, oldest first.
func (h *Tests) ListTests(c echo.Context) error {
	ctx, t := c.Request().Context(), handlers.TenantFrom(c)
	list, err := h.Manage.ListTestCases(ctx, t.ID)
	if err != nil {
		return err
	}
	segs, err := resource.NewTestSegments(ctx, h.DB, t.ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, resource.NewTestCaseListJSON(list, segs))
}

// ShowTest answers GET /tenants/{slug}/tests/{id}.
func (h *Tests) ShowTest(c echo.Context) error {
	ctx, t := c.Request().Context(), handlers.TenantFrom(c)
	tc, err := h.Manage.TestCase(ctx, t.ID, c.Param("id"))
	if err != nil {
		return err
	}
	return h.testJSON(c, http.StatusOK, tc)
}

// CreateTest answers POST /tenants/{slug}/tests: 201 with the question;
// 429 LIMIT_REACHED past testset.MaxCases.
func (h *Tests) CreateTest(c echo.Context) error {
	raw, err := jsonbody.DecodeObject(c, jsonbody.MaxJSONBody)
	if err != nil {
		return err
	}
	tc, err := h.Manage.CreateTestCase(c.Request().Context(), handlers.TenantFrom(c).ID, resource.TestCaseInputOf(raw))
	if err != nil {
		return err
	}
	return h.testJSON(c, http.StatusCreated, tc)
}

// UpdateTest answers PUT and PATCH /tenants/{slug}/tests/{id}: the fields
// the body sets change.
func (h *Tests) UpdateTest(c echo.Context) error {
	raw, err := jsonbody.DecodeObject(c, jsonbody.MaxJSONBody)
	if err != nil {
		return err
	}
	tc, err := h.Manage.UpdateTestCase(c.Request().Context(), handlers.TenantFrom(c).ID, c.Param("id"), resource.TestCaseInputOf(raw))
	if err != nil {
		return err
	}
	return h.testJSON(c, http.StatusOK, tc)
}

// DeleteTest answers DELETE /tenants/{slug}/tests/{id}: {deleted: true, id}.
func (h *Tests) DeleteTest(c echo.Context) error {
	return handlers.DeleteOne(c, "id", h.Manage.DeleteTestCase)
}

func (h *Tests) testJSON(c echo.Context, status int, tc testset.Case) error {
	segs, err := resource.NewTestSegments(c.Request().Context(), h.DB, handlers.TenantFrom(c).ID)
	if err != nil {
		return err
	}
	return c.JSON(status, resource.NewTestCaseJSON(tc, segs))
}

// startRunBody is the body of POST /tenants/{slug}/tests/runs, which may
// be empty.
type startRunBody struct {
	Judge bool `json:"judge"`
}

// StartTestRun answers POST /tenants/{slug}/tests/runs: 202 with the run
// started (its results pending); 409 RUN_IN_PROGRESS with the running run
// as details.run while one goes.
func (h *Tests) StartTestRun(c echo.Context) error {
	var body startRunBody
	if c.Request().ContentLength != 0 {
		raw, err := jsonbody.DecodeObject(c, jsonbody.MaxJSONBody)
		if err != nil {
			return err
		}
		if errs := jsonbody.DecodeFields(raw, &body); len(errs) > 0 {
			return errs.Err()
		}
	}
	ctx, t := c.Request().Context(), handlers.TenantFrom(c)
	run, err := h.Manage.StartTestRun(ctx, t, body.Judge, h.Clock())
	if err != nil {
		return resource.TestRunConflict(err)
	}
	_, results, err := h.Manage.TestRun(ctx, t.ID, run.ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, resource.NewTestRunJSON(run, results))
}

// testRunListJSON is what GET /tenants/{slug}/tests/runs answers.
type testRunListJSON struct {
	Runs []resource.TestRunJSON `json:"runs"`
}

// ListTestRuns answers GET /tenants/{slug}/tests/runs: the latest runs,
// the latest first, without their results.
func (h *Tests) ListTestRuns(c echo.Context) error {
	ctx, t := c.Request().Context(), handlers.TenantFrom(c)
	runs, err := h.DB.TestRuns(ctx, t.ID, runsListed)
	if err != nil {
		return err
	}
	out := testRunListJSON{Runs: make([]resource.TestRunJSON, len(runs))}
	for i, r := range runs {
		out.Runs[i] = resource.NewTestRunJSON(r, nil)
	}
	return c.JSON(http.StatusOK, out)
}

// ShowTestRun answers GET /tenants/{slug}/tests/runs/{id}: the run with
// its results, and the change of each since the previous run.
func (h *Tests) ShowTestRun(c echo.Context) error {
	run, results, err := h.Manage.TestRun(c.Request().Context(), handlers.TenantFrom(c).ID, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, resource.NewTestRunJSON(run, results))
}
