package admin_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parley/parley/web/webtest"
)

// TestBrowserVoice links an assistant on the Voice page at phone size, sees
// the secret once, then finds a call with its transcript and a player
// whose recording loads through the dashboard's route; axe-core and the
// Content-Security-Policy find nothing on the page with a call.
func TestBrowserVoice(t *testing.T) {
	t.Parallel()
	axe := webtest.AxeScript(t)
	b := webtest.Setup(t)
	host, _ := webtest.AudioHost(t)
	b.WithOutbound(t, true, nil) // the recording's host is on the loopback
	ten := b.OwnedTenant(t, "scale")
	ctx := webtest.BrowserTab(t)
	webtest.WatchCSP(ctx, t)
	webtest.MustStep(t, "phone size", chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)))
	webtest.OpenSignedIn(ctx, t, b, ten, "/admin/voice")
	webtest.MustStep(t, "filling the link form", chromedp.Do(ctx,
		webtest.FillField("assistantId", "5b6c1d2e-0f9a-4b8c"),
		webtest.FillField("phoneNumber", "+33198765432"),
		webtest.FillField("linkLanguage", "fr-FR"),
	))
	if status := webtest.SubmitForm(ctx, t, "#link-voice"); status != http.StatusOK {
		t.Fatalf("linking: status %d", status)
	}
	secret := webtest.MustRunStep(ctx, t, "secret", chromedp.Text(chromedp.ID("new-voice-secret")))
	if !strings.HasPrefix(secret, "vs_") || b.OpenVoiceSecret(t, ten.ID) != secret {
		t.Errorf("secret shown %q", secret)
	}
	if a := webtest.MustRunStep(ctx, t, "assistant", chromedp.Text(chromedp.ID("voice-assistant"))); strings.TrimSpace(a) != "5b6c1d2e-0f9a-4b8c" {
		t.Errorf("assistant shown %q", a)
	}

	b.InsertVoiceCall(t, ten.ID, "call-1", webtest.VoiceStr(host.URL+"/wav.wav"))
	webtest.MustStep(t, "reloading", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin/voice")))
	webtest.WaitUntil(ctx, t, "the call", `!!document.querySelector('#voice-calls audio')`)
	if n := webtest.MustRunStep(ctx, t, "secret again", chromedp.Evaluate[int](`document.querySelectorAll('#new-voice-secret').length`)); n != 0 {
		t.Error("the secret is shown again")
	}
	got := webtest.MustRunStep(ctx, t, "the player's recording", chromedp.Evaluate[string](`fetch(document.querySelector('#voice-calls audio').src)
		.then(r => r.status + ' ' + r.headers.get('content-type'))`, chromedp.EvalAwaitPromise))
	if got != "200 audio/wav" {
		t.Errorf("the player's source answers %q", got)
	}
	webtest.MustStep(t, "opening the transcript", chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#voice-calls details summary"))))
	if tr := webtest.MustRunStep(ctx, t, "transcript", chromedp.Text(chromedp.CSS("#voice-calls details pre"))); !strings.Contains(tr, "Can someone come on Tuesday?") {
		t.Errorf("transcript %q", tr)
	}
	if over := webtest.MustRunStep(ctx, t, "width", chromedp.Evaluate[int](`document.documentElement.scrollWidth - innerWidth`)); over > 0 {
		t.Errorf("the page scrolls sideways by %d px", over)
	}
	for _, v := range webtest.AxeViolations(ctx, t, axe) {
		t.Errorf("axe: %s", v)
	}
	for _, v := range webtest.CSPViolations(ctx, t) {
		t.Errorf("refused by the Content-Security-Policy: %s", v)
	}
	webtest.SaveScreenshot(ctx, t, "admin voice with a call")
}
