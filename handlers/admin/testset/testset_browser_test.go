package testset_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parley/parley/web/webtest"
)

// TestTestsBrowser: on a phone, an owner goes from the test chat to Tests,
// adds a question with a fact, runs the tests and sees it fail; adds the
// knowledge entry that holds the fact, runs again and sees it pass, "Now
// passing". The bot answers with the local provider, which quotes the
// knowledge base, so the answer depends on the entry. The run is River's
// job, working as in production; the page follows it by polling. axe-core
// finds no serious violation on the way, and nothing scrolls sideways.
func TestTestsBrowser(t *testing.T) {
	t.Parallel()
	axe := webtest.AxeScript(t)
	b := webtest.SetupAdmin(t, nil)
	ten := b.OwnedTenant(t, "starter")
	b.WorkTestRuns(t, ten.ID)
	ctx := webtest.BrowserTab(t)
	webtest.WatchCSP(ctx, t)
	webtest.MustStep(t, "phone size", chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)))
	check := func(page string) {
		t.Helper()
		for _, v := range webtest.AxeViolations(ctx, t, axe) {
			t.Errorf("%s: axe: %s", page, v)
		}
		if v := webtest.CSPViolations(ctx, t); len(v) > 0 {
			t.Errorf("%s: policy violations: %s", page, strings.Join(v, "; "))
		}
		if over := webtest.MustRunStep(ctx, t, "width", chromedp.Evaluate[int](`document.documentElement.scrollWidth - innerWidth`)); over > 0 {
			t.Errorf("%s scrolls sideways by %d px", page, over)
		}
		webtest.SaveScreenshot(ctx, t, "tests-"+page+"-phone")
	}
	text := func(sel string) string {
		t.Helper()
		return webtest.MustRunStep(ctx, t, "reading "+sel, chromedp.Evaluate[string](`document.querySelector(`+webtest.JSString(sel)+`)?.innerText || ''`))
	}
	run := func() {
		t.Helper()
		if st := webtest.SubmitForm(ctx, t, `#run-tests-button`); st != http.StatusOK {
			t.Fatalf("running the tests: %d", st)
		}
		// The page polls the run's progress until its summary shows.
		webtest.WaitUntil(ctx, t, "the run's end", `!!document.getElementById('test-summary')`)
	}

	webtest.OpenSignedIn(ctx, t, b, ten, "/admin/test-chat")
	if st := webtest.SubmitForm(ctx, t, `#test-set-link a`); st != http.StatusOK {
		t.Fatalf("following Tests from the test chat: %d", st)
	}
	check("empty")

	// Sent without a fact, the form says so beside its field.
	webtest.MustStep(t, "typing the question", chromedp.Do(ctx, webtest.FillField("test-question", "How long is the warranty?")))
	if st := webtest.SubmitForm(ctx, t, `#add-test-button`); st != http.StatusUnprocessableEntity {
		t.Fatalf("a question without facts: %d", st)
	}
	if e := text("#err-test-must"); !strings.Contains(e, "needs a fact") {
		t.Errorf("the facts' error: %q", e)
	}
	check("errors")
	webtest.MustStep(t, "typing the fact", chromedp.Do(ctx, webtest.FillField("test-must", "two years")))
	if st := webtest.SubmitForm(ctx, t, `#add-test-button`); st != http.StatusOK {
		t.Fatalf("adding the question: %d", st)
	}
	if got := text("#test-list"); !strings.Contains(got, "How long is the warranty?") || !strings.Contains(got, "two years") {
		t.Fatalf("the list after adding: %q", got)
	}

	run()
	if got := text("#test-summary"); got != "0 of 1 passed, 1 failed." {
		t.Errorf("first run's summary: %q", got)
	}
	if got := text("#test-results"); !strings.Contains(got, "Failed") || !strings.Contains(got, "could not find") || strings.Contains(got, "Now passing") {
		t.Errorf("first run's results: %q", got)
	}
	check("failed")

	webtest.MustStep(t, "opening a new entry", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin/corpus/new")))
	webtest.MustStep(t, "writing the entry", chromedp.Do(ctx, webtest.FillField("title", "Warranty"),
		webtest.FillField("content", "Every bike we sell has a warranty of two years, parts and labour.")))
	if st := webtest.SubmitForm(ctx, t, `#save-entry`); st != http.StatusOK {
		t.Fatalf("saving the entry: %d", st)
	}
	webtest.MustStep(t, "back to Tests", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin/tests")))
	run()
	if got := text("#test-summary"); got != "1 of 1 passed. 1 question now passing." {
		t.Errorf("second run's summary: %q", got)
	}
	got := text("#test-results")
	if !strings.Contains(got, "Passed") || !strings.Contains(got, "Now passing") || !strings.Contains(got, "two years") || !strings.Contains(got, "Knowledge used: Warranty") {
		t.Errorf("second run's results: %q", got)
	}
	check("passed")
}
