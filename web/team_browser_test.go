package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parley/parley/web/webtest"
)

// TestTeamBrowser is issue 37's proof in Chromium: an owner invites an
// agent on the Team page; the agent opens the link on a phone-sized
// screen, chooses a password and lands in the inbox; their navigation holds
// only what an agent uses, and the settings refuse them in words; the
// owner finds it all in the activity log. The agent's pages pass axe-core
// at phone size.
func TestTeamBrowser(t *testing.T) {
	t.Parallel()
	axe := webtest.AxeScript(t)
	b := webtest.Setup(t)
	ten := b.OwnedTenant(t, "starter")
	email := "sam-" + ten.Slug + "@example.test"

	owner := webtest.BrowserTab(t)
	webtest.OpenSignedIn(owner, t, b, ten, "/admin/members")
	webtest.MustStep(t, "inviting an agent", chromedp.Do(owner, webtest.FillField("invite-email", email),
		chromedp.Click(chromedp.ID("invite-role-agent"))))
	if st := webtest.SubmitForm(owner, t, `#invite-form button[type=submit]`); st != http.StatusOK {
		t.Fatalf("after inviting: status %d", st)
	}
	link := webtest.MustRunStep(owner, t, "the invitation's link", chromedp.Evaluate[string](`document.getElementById('invitation-link')?.textContent || ''`))
	if !strings.HasPrefix(link, b.Srv.Config.BaseURL+"/admin/invitation?token=") {
		t.Fatalf("invitation link %q", link)
	}
	waiting := webtest.MustRunStep(owner, t, "the waiting invitation", chromedp.Evaluate[string](`document.querySelector('#invitations td')?.textContent || ''`))
	if waiting != email {
		t.Errorf("waiting invitation %q, want %s", waiting, email)
	}
	webtest.SaveScreenshot(owner, t, "team-owner-invited")

	agent := webtest.BrowserTab(t)
	webtest.OwnAddress(agent, t)
	webtest.MustStep(t, "a phone's screen", chromedp.Do(agent, chromedp.EmulateViewport(390, 844, chromedp.EmulatePortrait, chromedp.EmulateMobile, chromedp.EmulateTouch)))
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	webtest.MustStep(t, "opening the invitation", chromedp.Do(agent, chromedp.Navigate(b.TS.URL+u.RequestURI())))
	intro := webtest.MustRunStep(agent, t, "the invitation's words", chromedp.Evaluate[string](`document.getElementById('invitation-intro')?.textContent || ''`))
	if !strings.Contains(intro, ten.OwnerEmail) || !strings.Contains(intro, "Agent") {
		t.Errorf("invitation page says %q", intro)
	}
	checkPhone := func(name string) {
		t.Helper()
		if v := webtest.AxeViolations(agent, t, axe); len(v) > 0 {
			t.Errorf("%s: axe-core: %v", name, v)
		}
		if over := webtest.MustRunStep(agent, t, "width", chromedp.Evaluate[int](`document.documentElement.scrollWidth - innerWidth`)); over > 0 {
			t.Errorf("%s scrolls sideways by %d px", name, over)
		}
	}
	checkPhone("the invitation page")
	webtest.SaveScreenshot(agent, t, "team-invitation-phone")
	webtest.MustStep(t, "choosing a password", chromedp.Do(agent, webtest.FillField("password", "sam's own password"),
		webtest.FillField("confirm", "sam's own password")))
	if st := webtest.SubmitForm(agent, t, `#invitation-form button[type=submit]`); st != http.StatusOK {
		t.Fatalf("after joining: status %d", st)
	}
	if loc := webtest.MustRunStep(agent, t, "location", chromedp.Location()); loc != b.TS.URL+"/admin/conversations" {
		t.Fatalf("after joining at %s, want the inbox", loc)
	}
	nav := webtest.MustRunStep(agent, t, "the navigation", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('nav[aria-label="Main"] a')].map(a => a.getAttribute('href'))`))
	if got := fmt.Sprint(nav); got != "[/admin/conversations /admin/submissions /admin/visitors /admin/account]" {
		t.Errorf("an agent's navigation: %s", got)
	}
	checkPhone("the agent's inbox")
	webtest.SaveScreenshot(agent, t, "team-agent-inbox-phone")

	webtest.MustStep(t, "opening the settings", chromedp.Do(agent, chromedp.Navigate(b.TS.URL+"/admin/settings")))
	refusal := webtest.MustRunStep(agent, t, "the refusal", chromedp.Evaluate[string](`document.querySelector('main')?.textContent || ''`))
	if !strings.Contains(refusal, "needs the Admin role") || !strings.Contains(refusal, "Ask an owner") {
		t.Errorf("the settings refuse an agent with %q", strings.TrimSpace(refusal))
	}
	checkPhone("the refusal")
	webtest.SaveScreenshot(agent, t, "team-agent-refused-phone")

	// The owner sees the agent on the team.
	webtest.MustStep(t, "the Team page again", chromedp.Do(owner, chromedp.Navigate(b.TS.URL+"/admin/members")))
	members := webtest.MustRunStep(owner, t, "the members", chromedp.Evaluate[string](`document.getElementById('members')?.textContent || ''`))
	if !strings.Contains(members, email) {
		t.Errorf("the agent is not on the Team page: %q", members)
	}

	// The owner finds it all in the activity log: the invitation, the
	// agent joining, and the agent refused the settings.
	webtest.MustStep(t, "the activity log", chromedp.Do(owner, chromedp.Navigate(b.TS.URL+"/admin/audit")))
	rows := webtest.MustRunStep(owner, t, "the log's entries", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('#audit-entries tbody tr')].map(r => r.textContent.replace(/\s+/g, ' ').trim())`))
	for _, want := range []struct{ who, what string }{
		{ten.OwnerEmail, "Invited a member"},
		{email, "Joined the team"},
		{email, "Was refused access"},
	} {
		found := false
		for _, r := range rows {
			found = found || strings.Contains(r, want.who) && strings.Contains(r, want.what)
		}
		if !found {
			t.Errorf("the activity log has no %q by %s: %q", want.what, want.who, rows)
		}
	}
	webtest.SaveScreenshot(owner, t, "team-owner-activity-log")
}
