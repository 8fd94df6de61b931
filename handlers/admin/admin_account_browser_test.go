package admin_test

import (
	"encoding/base32"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/web/webtest"
)

// TestAccountTwoFactorBrowser sets up two-step sign-in on a phone-sized
// screen, from the account page to the recovery codes, then signs in with
// the password and a code of the app; axe-core finds no serious violation
// on any page of the way.
func TestAccountTwoFactorBrowser(t *testing.T) {
	t.Parallel()
	axe := webtest.AxeScript(t)
	b := webtest.SetupAdmin(t, nil)
	advance := webtest.ManualClock(b)
	ten := b.OwnedTenant(t, "starter")
	ctx := webtest.BrowserTab(t)
	webtest.MustStep(t, "phone size", chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)))
	checkAxe := func(page string) {
		t.Helper()
		for _, v := range webtest.AxeViolations(ctx, t, axe) {
			t.Errorf("%s: axe: %s", page, v)
		}
		if over := webtest.MustRunStep(ctx, t, "width", chromedp.Evaluate[int](`document.documentElement.scrollWidth - innerWidth`)); over > 0 {
			t.Errorf("%s scrolls sideways by %d px", page, over)
		}
	}

	webtest.OpenSignedIn(ctx, t, b, ten, "/admin/account")
	checkAxe("account")
	if st := webtest.SubmitForm(ctx, t, `a[href="/admin/account/two-factor"]`); st != http.StatusOK {
		t.Fatalf("the setup page: %d", st)
	}
	checkAxe("setup")
	key := webtest.MustRunStep(ctx, t, "the key", chromedp.Evaluate[string](`document.getElementById('two-factor-key').textContent`))
	secret, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.ReplaceAll(strings.TrimSpace(key), " ", ""))
	if err != nil {
		t.Fatalf("the key %q: %v", key, err)
	}
	webtest.MustStep(t, "typing the code", chromedp.Do(ctx, webtest.FillField("code", auth.TOTPCode(secret, auth.TOTPStepAt(b.Srv.Base.Now())))))
	if st := webtest.SubmitForm(ctx, t, `form[action="/admin/account/two-factor"] button[type=submit]`); st != http.StatusOK {
		t.Fatalf("confirming the setup: %d", st)
	}
	codes := webtest.MustRunStep(ctx, t, "the codes", chromedp.Evaluate[string](`document.getElementById('recovery-codes')?.textContent || ''`))
	if n := len(strings.Fields(codes)); n != auth.RecoveryCodes {
		t.Fatalf("%d recovery codes shown: %q", n, codes)
	}
	checkAxe("recovery codes")

	// Signed out (a new browser context's cookies), signing in asks for a code.
	ctx = webtest.BrowserTab(t)
	webtest.MustStep(t, "phone size", chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)))
	webtest.OwnAddress(ctx, t)
	webtest.MustStep(t, "opening the sign-in page", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin/login")))
	webtest.TypeText(ctx, t, "email", ten.OwnerEmail)
	webtest.TypeText(ctx, t, "password", ten.Password)
	if st := webtest.SubmitForm(ctx, t, `form[action="/admin/login"] button[type=submit]`); st != http.StatusOK {
		t.Fatalf("the password: %d", st)
	}
	if loc := webtest.MustRunStep(ctx, t, "location", chromedp.Location()); loc != b.TS.URL+"/admin/login/code" {
		t.Fatalf("after the password at %s, want the code's page", loc)
	}
	checkAxe("code")
	advance(auth.TOTPStep)
	webtest.TypeText(ctx, t, "code", auth.TOTPCode(secret, auth.TOTPStepAt(b.Srv.Base.Now())))
	if st := webtest.SubmitForm(ctx, t, `form[action="/admin/login/code"] button[type=submit]`); st != http.StatusOK {
		t.Fatalf("the code: %d", st)
	}
	if loc := webtest.MustRunStep(ctx, t, "location", chromedp.Location()); loc != b.TS.URL+"/admin" {
		t.Fatalf("after the code at %s, want /admin", loc)
	}
}
