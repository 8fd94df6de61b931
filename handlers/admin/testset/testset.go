// Package testset is the dashboard's Tests page (/admin/tests): the
// tenant's test set, its questions with the facts their answers must and
// must not contain, added, edited and deleted there; "Run tests", which
// starts a run (manage.StartTestRun: jobs' test run worker asks each
// question through the real engine as a test turn); and the latest run,
// whose progress the page asks again every second (htmx) until it ends,
// then each question's result with its answer, the knowledge it used and
// its change since the run before. An admin's page, under Test chat.
package testset

import (
	"errors"
	"net/http"
	"strings"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db/testset"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/handlers/resource"
	"github.com/parley/parley/manage"
	"github.com/parley/parley/views"
)

// Tests is the dashboard's Tests area.
type Tests struct{ *handlers.Base }

// New builds the area over the Base web builds.
func New(b *handlers.Base) *Tests { return &Tests{b} }

// path is the page.
const path = "/admin/tests"

func (h *Tests) page(c echo.Context, title string) views.Page {
	return dash.Page(c, h.Sessions, title, "test-chat")
}

// view loads the page's model: the questions, the segments, the latest run.
func (h *Tests) view(c echo.Context) (views.TestSetView, map[string]string, error) {
	ctx, t := c.Request().Context(), dash.AdminFrom(c).Tenant
	v := views.TestSetView{Max: testset.MaxCases, MaxFacts: testset.MaxFacts, AnswersLocally: h.Engine.AnswersLocally(t)}
	segs, err := h.DB.ListSegments(ctx, t.ID)
	if err != nil {
		return v, nil, err
	}
	names := map[string]string{}
	for _, s := range segs {
		names[s.ID] = s.Name
		opt := views.Option{Value: s.Slug, Label: s.Name}
		if s.IsDefault {
			opt.Label += " (default)"
			v.Segments = append([]views.Option{opt}, v.Segments...)
		} else {
			v.Segments = append(v.Segments, opt)
		}
	}
	cases, err := h.Manage.ListTestCases(ctx, t.ID)
	if err != nil {
		return v, nil, err
	}
	for _, tc := range cases {
		row := views.TestCaseRow{ID: tc.ID, Question: tc.Question, MustContain: tc.MustContain, MustNotContain: tc.MustNotContain}
		if tc.SegmentID != nil && len(segs) > 1 {
			row.Segment = names[*tc.SegmentID]
		}
		v.Cases = append(v.Cases, row)
	}
	run, results, ok, err := h.Manage.LatestTestRun(ctx, t.ID)
	if err != nil {
		return v, nil, err
	}
	if ok {
		rv := RunView(run, results, t)
		v.Run = &rv
	}
	return v, names, nil
}

// ShowTestsPage renders the Tests page.
func (h *Tests) ShowTestsPage(c echo.Context) error {
	v, _, err := h.view(c)
	if err != nil {
		return err
	}
	return handlers.Render(c, http.StatusOK, views.TestSetPage(h.page(c, "Tests"), v))
}

// formInput reads a question's form.
func formInput(c echo.Context) (manage.TestCaseInput, views.TestCaseForm) {
	f := views.TestCaseForm{Question: c.FormValue("question"), MustContain: c.FormValue("mustContain"),
		MustNotContain: c.FormValue("mustNotContain"), Segment: c.FormValue("segmentSlug")}
	seg := f.Segment
	return manage.TestCaseInput{Question: parley.Some(f.Question), MustContain: parley.Some(lines(f.MustContain)),
		MustNotContain: parley.Some(lines(f.MustNotContain)), SegmentSlug: parley.Some(&seg)}, f
}

// lines are a textarea's non-empty lines.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// refusal sorts err: the form's problems by field, or a message for the
// page (the limit); ok is false for any other error.
func refusal(err error, f *views.TestCaseForm) bool {
	var pe *parley.Error
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Kind {
	case parley.KindInvalid:
		if d, ok := pe.Details.(map[string]string); ok {
			f.Errors = d
		} else {
			f.Message = pe.Message
		}
		return true
	case parley.KindRateLimited:
		f.Message = pe.Message
		return true
	}
	return false
}

// SaveNewTest adds a question, or shows the page again with why not.
func (h *Tests) SaveNewTest(c echo.Context) error {
	ctx, t := c.Request().Context(), dash.AdminFrom(c).Tenant
	in, f := formInput(c)
	_, err := h.Manage.CreateTestCase(ctx, t.ID, in)
	return h.saved(c, err, f, "Question added.", func(v views.TestSetView) templ.Component {
		return views.TestSetPage(h.page(c, "Tests"), v)
	})
}

// saved ends a question's save: on success the flash and the list; on a
// refusal the page again (render's), with the form as sent and why.
func (h *Tests) saved(c echo.Context, err error, f views.TestCaseForm, flash string, render func(views.TestSetView) templ.Component) error {
	if err == nil {
		h.Sessions.Put(c.Request().Context(), dash.SessFlash, flash)
		return dash.SeeOther(c, path+"#test-list")
	}
	if !refusal(err, &f) {
		return err
	}
	v, _, verr := h.view(c)
	if verr != nil {
		return verr
	}
	v.Form = f
	return handlers.Render(c, http.StatusUnprocessableEntity, render(v))
}

// ShowTestPage renders a question's edit page.
func (h *Tests) ShowTestPage(c echo.Context) error {
	ctx, t := c.Request().Context(), dash.AdminFrom(c).Tenant
	tc, err := h.Manage.TestCase(ctx, t.ID, c.Param("id"))
	if err != nil {
		return err
	}
	v, _, err := h.view(c)
	if err != nil {
		return err
	}
	v.Form = views.TestCaseForm{ID: tc.ID, Question: tc.Question, MustContain: strings.Join(tc.MustContain, "\n"),
		MustNotContain: strings.Join(tc.MustNotContain, "\n")}
	if tc.SegmentID != nil {
		if s, err := h.DB.Segment(ctx, t.ID, *tc.SegmentID); err == nil {
			v.Form.Segment = s.Slug
		}
	}
	return handlers.Render(c, http.StatusOK, views.TestCasePage(h.page(c, "Edit a test question"), v))
}

// SaveTest saves a question's edit page.
func (h *Tests) SaveTest(c echo.Context) error {
	ctx, t := c.Request().Context(), dash.AdminFrom(c).Tenant
	in, f := formInput(c)
	f.ID = c.Param("id")
	_, err := h.Manage.UpdateTestCase(ctx, t.ID, f.ID, in)
	return h.saved(c, err, f, "Question saved.", func(v views.TestSetView) templ.Component {
		return views.TestCasePage(h.page(c, "Edit a test question"), v)
	})
}

// RemoveTest deletes a question; past runs keep its results.
func (h *Tests) RemoveTest(c echo.Context) error {
	ctx, t := c.Request().Context(), dash.AdminFrom(c).Tenant
	if err := h.Manage.DeleteTestCase(ctx, t.ID, c.Param("id")); err != nil {
		return err
	}
	h.Sessions.Put(ctx, dash.SessFlash, "Question deleted.")
	return dash.SeeOther(c, path+"#test-list")
}

// StartTestRun starts a run of every question and comes back to the page,
// which shows its progress; a run going already, a set without questions
// or a plan without chat come back as the page's error.
func (h *Tests) StartTestRun(c echo.Context) error {
	ctx, t := c.Request().Context(), dash.AdminFrom(c).Tenant
	_, err := h.Manage.StartTestRun(ctx, t, c.FormValue("judge") == "on" && !h.Engine.AnswersLocally(t), h.Clock())
	var pe *parley.Error
	switch {
	case err == nil:
		return dash.SeeOther(c, path+"#test-run")
	case errors.As(err, &pe) && pe.Kind != parley.KindInternal:
		h.Sessions.Put(ctx, dash.SessFlashError, pe.Message)
		return dash.SeeOther(c, path)
	}
	return err
}

// ShowTestRun answers the page's poll of a run (htmx): the run's section,
// which polls again while the run goes.
func (h *Tests) ShowTestRun(c echo.Context) error {
	ctx, t := c.Request().Context(), dash.AdminFrom(c).Tenant
	run, results, err := h.Manage.TestRun(ctx, t.ID, c.Param("id"))
	if err != nil {
		return err
	}
	return handlers.Render(c, http.StatusOK, views.TestRunSection(RunView(run, results, t)))
}

// RunView is run with its results in the owner's words, its start in t's
// time zone.
func RunView(run testset.Run, results []testset.Result, t parley.Tenant) views.TestRunView {
	v := views.TestRunView{ID: run.ID, Running: run.Status == testset.RunRunning, Failed: run.Status == testset.RunFailed,
		Done: run.Done, Total: run.Total, Passed: run.Passed, FailedCount: run.Failed, Judge: run.Judge,
		Started: run.StartedAt.In(resource.TenantLocation(t)).Format("2 Jan 2006, 15:04")}
	if run.Error != nil {
		v.Error = *run.Error
	}
	for _, r := range results {
		x := views.TestResultView{Question: r.Question, Status: r.Status}
		if r.Answer != nil {
			x.Answer = *r.Answer
		}
		if r.Error != nil {
			x.Error = *r.Error
		}
		switch r.Change() {
		case "now passing":
			x.Change = "Now passing"
			v.NowPassing++
		case "now failing":
			x.Change = "Now failing"
			v.NowFailing++
		}
		for _, s := range r.Sources {
			x.Sources = append(x.Sources, views.TestSourceView{ID: s.ID, Title: s.Title, Cited: s.Cited})
		}
		for _, ch := range r.Checks {
			x.Facts = append(x.Facts, views.TestFactView{Text: ch.Fact, Must: ch.Must, Passed: ch.Passed, Verdict: verdict(ch)})
		}
		v.Results = append(v.Results, x)
	}
	return v
}

// verdict says what was found of a fact.
func verdict(ch testset.Check) string {
	s := "not in the answer"
	if ch.Found {
		s = "in the answer"
	}
	switch {
	case ch.Judged != nil && *ch.Judged:
		s += "; your model says the answer states it"
	case ch.Judged != nil:
		s += "; your model says the answer does not state it"
	case ch.JudgeError != "":
		s += "; your model could not judge (" + ch.JudgeError + ")"
	}
	return s
}
