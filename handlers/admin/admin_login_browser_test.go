package admin_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parley/parley/web/webtest"
)

// TestAdminLoginChallengeBrowser drives the sign-in page's bot challenge in
// Chromium, with the widget tests' fake provider (on an origin of its own,
// so the page's CSP must let it in) and fake siteverify: after three
// failures from the browser's address the page draws the challenge, its
// token goes with the form, and the right password signs in.
func TestAdminLoginChallengeBrowser(t *testing.T) {
	t.Parallel()
	const secret = "operator-challenge-secret"
	provider := webtest.NewChallengeProvider(t)
	verify := webtest.NewSiteverify(t, secret)
	b := webtest.SetupAdmin(t, map[string]string{"PARLEY_CAPTCHA_VERIFY_URL": verify.URL,
		"PARLEY_CAPTCHA_SCRIPT_URL":       provider.URL + "/turnstile/v0/api.js?render=explicit",
		"PARLEY_ADMIN_CAPTCHA_SITE_KEY":   "0x4AAA-operator-site",
		"PARLEY_ADMIN_CAPTCHA_SECRET_KEY": secret})
	ten := b.OwnedTenant(t, "starter")
	ctx := webtest.BrowserTab(t)
	webtest.OwnAddress(ctx, t)
	signIn := func(t *testing.T, password string) int64 {
		t.Helper()
		webtest.MustStep(t, "filling the sign-in form", chromedp.Do(ctx, webtest.FillField("email", ten.OwnerEmail), webtest.FillField("password", password)))
		return webtest.SubmitForm(ctx, t, `form[action="/admin/login"] button[type=submit]`)
	}

	webtest.MustStep(t, "opening the sign-in page", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin/login")))
	for i := range 3 {
		if st := signIn(t, "wrong-password"); st != http.StatusUnauthorized {
			t.Fatalf("failure %d: status %d", i+1, st)
		}
		if i < 2 && provider.Hits.Load() != 0 {
			t.Fatalf("the challenge's script loaded after %d failures", i+1)
		}
	}
	webtest.WaitUntil(ctx, t, "the challenge's token in the form", `(document.getElementById('challenge-token')?.value || '').startsWith('fake-token-')`)
	drawn := webtest.MustRunStep(ctx, t, "the challenge", chromedp.Evaluate[string](`document.querySelector('#login-challenge .fake-challenge')?.textContent || ''`))
	if drawn != "Fake challenge for 0x4AAA-operator-site" {
		t.Errorf("challenge drawn: %q", drawn)
	}
	token := webtest.MustRunStep(ctx, t, "the token", chromedp.Evaluate[string](`document.getElementById('challenge-token').value`))
	if st := signIn(t, ten.Password); st != http.StatusOK {
		t.Fatalf("signing in with the challenge solved: status %d", st)
	}
	if loc := webtest.MustRunStep(ctx, t, "location", chromedp.Location()); loc != b.TS.URL+"/admin" {
		t.Fatalf("after signing in at %s, want /admin", loc)
	}
	if got := verify.Seen(); !slices.Equal(got, []string{token}) {
		t.Errorf("siteverify asked about %q, want the token the challenge issued, %q", got, token)
	}
}
