package signup_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/web/webtest"
)

// testBrowser signs up on a phone-sized screen in Chromium, from the
// sign-in page's link through the confirmation email's link to the
// dashboard, with axe-core on every page (and on the form's errors) and
// the Content-Security-Policy watched.
func testBrowser(t *testing.T, h *harness) {
	b := h.b
	ctx := webtest.BrowserTab(t)
	webtest.OwnAddress(ctx, t)
	webtest.WatchCSP(ctx, t)
	axe := webtest.AxeScript(t)
	webtest.MustStep(t, "phone", chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)))
	check := func(t *testing.T, page string) {
		t.Helper()
		if v := webtest.AxeViolations(ctx, t, axe); len(v) > 0 {
			t.Errorf("%s: axe-core: %s", page, strings.Join(v, "; "))
		}
		if v := webtest.CSPViolations(ctx, t); len(v) > 0 {
			t.Errorf("%s: policy violations: %s", page, strings.Join(v, "; "))
		}
		if w := webtest.MustRunStep(ctx, t, "width", chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); w > 390 {
			t.Errorf("%s: %d px wide on a 390 px screen", page, w)
		}
		webtest.SaveScreenshot(ctx, t, "signup-"+page+"-phone")
	}

	webtest.MustStep(t, "opening the sign-in page", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin/login")))
	if resp, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`#signup-link a`))); err != nil || resp.Status != http.StatusOK {
		t.Fatalf("following the sign-up link: %v", err)
	}
	check(t, "form")

	// Sent empty, the form says what each field needs.
	if st := webtest.SubmitForm(ctx, t, `form[action="/admin/signup"] button[type=submit]`); st != http.StatusUnprocessableEntity {
		t.Fatalf("the empty form: status %d", st)
	}
	if n := webtest.MustRunStep(ctx, t, "errors", chromedp.Evaluate[int](`document.querySelectorAll('.field-error').length`)); n != 3 {
		t.Errorf("%d field errors, want 3 (email, password, workspace)", n)
	}
	check(t, "errors")

	email := unique("phone") + "@example.com"
	webtest.MustStep(t, "filling the form", chromedp.Do(ctx, webtest.FillField("email", email),
		webtest.FillField("password", "a long password"), webtest.FillField("workspace", "Café du Coin")))
	if st := webtest.SubmitForm(ctx, t, `form[action="/admin/signup"] button[type=submit]`); st != http.StatusOK {
		t.Fatalf("signing up: status %d", st)
	}
	if sent := webtest.MustRunStep(ctx, t, "sent", chromedp.Evaluate[string](`document.getElementById('signup-sent')?.textContent || ''`)); !strings.Contains(sent, email) {
		t.Fatalf("the page after signing up says %q", sent)
	}
	check(t, "sent")

	path, _ := h.confirmMail(t, email, 1)
	webtest.MustStep(t, "opening the email's link", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+path)))
	check(t, "confirm")
	if st := webtest.SubmitForm(ctx, t, `form[action="/admin/signup/confirm"] button[type=submit]`); st != http.StatusOK {
		t.Fatalf("creating the workspace: status %d", st)
	}
	if loc := webtest.MustRunStep(ctx, t, "location", chromedp.Location()); loc != b.TS.URL+"/admin" {
		t.Fatalf("after creating the workspace at %s, want /admin", loc)
	}
	got := webtest.MustRunStep(ctx, t, "dashboard", chromedp.Evaluate[string](`document.body.innerText`))
	if !strings.Contains(got, "Welcome to Parley: your workspace Café du Coin is ready.") || !strings.Contains(got, "Café du Coin") {
		t.Errorf("the dashboard after signing up:\n%s", got)
	}
	check(t, "dashboard")
}

// TestSignUpInviteBrowser opens an invitation on a phone-sized screen in
// Chromium, with axe-core on the page without an invitation and on the
// invitation's form, and creates the workspace through to the dashboard.
func TestSignUpInviteBrowser(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, map[string]string{"PARLEY_SIGNUP": "invite"})
	email := unique("phone-invitee") + "@example.com"
	tok, hash := auth.NewResetToken()
	if _, err := b.DB.CreateSignupInvitation(context.Background(), email, hash, time.Now()); err != nil {
		t.Fatal(err)
	}
	ctx := webtest.BrowserTab(t)
	webtest.OwnAddress(ctx, t)
	webtest.WatchCSP(ctx, t)
	axe := webtest.AxeScript(t)
	webtest.MustStep(t, "phone", chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)))
	check := func(page string) {
		t.Helper()
		if v := webtest.AxeViolations(ctx, t, axe); len(v) > 0 {
			t.Errorf("%s: axe-core: %s", page, strings.Join(v, "; "))
		}
		if v := webtest.CSPViolations(ctx, t); len(v) > 0 {
			t.Errorf("%s: policy violations: %s", page, strings.Join(v, "; "))
		}
		webtest.SaveScreenshot(ctx, t, "signup-"+page+"-phone")
	}

	webtest.MustStep(t, "opening the sign-up page", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin/signup")))
	check("by-invitation")
	webtest.MustStep(t, "opening the invitation", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin/signup?invitation="+tok)))
	check("invitation")
	webtest.MustStep(t, "filling the form", chromedp.Do(ctx, webtest.FillField("password", "a long password"),
		webtest.FillField("workspace", "Invited on a phone")))
	if st := webtest.SubmitForm(ctx, t, `form[action="/admin/signup"] button[type=submit]`); st != http.StatusOK {
		t.Fatalf("creating the workspace: status %d", st)
	}
	if loc := webtest.MustRunStep(ctx, t, "location", chromedp.Location()); loc != b.TS.URL+"/admin" {
		t.Fatalf("after creating the workspace at %s, want /admin", loc)
	}
	if got := webtest.MustRunStep(ctx, t, "dashboard", chromedp.Evaluate[string](`document.body.innerText`)); !strings.Contains(got, "your workspace Invited on a phone is ready") {
		t.Errorf("the dashboard after accepting the invitation:\n%s", got)
	}
}
