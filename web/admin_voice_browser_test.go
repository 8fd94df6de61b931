package web

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserVoice links an assistant on the Voice page at phone size, sees
// the secret once, then finds a call with its transcript and a player
// whose recording loads through the dashboard's route; axe-core and the
// Content-Security-Policy find nothing on the page with a call.
func TestBrowserVoice(t *testing.T) {
	t.Parallel()
	axe, err := os.ReadFile("../widget/testdata/axe.min.js")
	if err != nil {
		t.Fatal(err)
	}
	b := setup(t)
	host, _ := audioHost(t)
	b.withOutbound(t, true, nil) // the recording's host is on the loopback
	ten := b.ownedTenant(t, "scale")
	ctx := browserTab(t)
	watchCSP(ctx, t)
	mustStep(t, "phone size", chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)))
	openSignedIn(ctx, t, b, ten, "/admin/voice")
	mustStep(t, "filling the link form", chromedp.Do(ctx,
		fillField("assistantId", "5b6c1d2e-0f9a-4b8c"),
		fillField("phoneNumber", "+33198765432"),
		fillField("linkLanguage", "fr-FR"),
	))
	if status := submitForm(ctx, t, "#link-voice"); status != http.StatusOK {
		t.Fatalf("linking: status %d", status)
	}
	secret := mustRunStep(ctx, t, "secret", chromedp.Text(chromedp.ID("new-voice-secret")))
	if !strings.HasPrefix(secret, "vs_") || b.openVoiceSecret(t, ten.ID) != secret {
		t.Errorf("secret shown %q", secret)
	}
	if a := mustRunStep(ctx, t, "assistant", chromedp.Text(chromedp.ID("voice-assistant"))); strings.TrimSpace(a) != "5b6c1d2e-0f9a-4b8c" {
		t.Errorf("assistant shown %q", a)
	}

	b.insertVoiceCall(t, ten.ID, "call-1", voiceStr(host.URL+"/wav.wav"))
	mustStep(t, "reloading", chromedp.Do(ctx, chromedp.Navigate(b.ts.URL+"/admin/voice")))
	waitUntil(ctx, t, "the call", `!!document.querySelector('#voice-calls audio')`)
	if n := mustRunStep(ctx, t, "secret again", chromedp.Evaluate[int](`document.querySelectorAll('#new-voice-secret').length`)); n != 0 {
		t.Error("the secret is shown again")
	}
	got := mustRunStep(ctx, t, "the player's recording", chromedp.Evaluate[string](`fetch(document.querySelector('#voice-calls audio').src)
		.then(r => r.status + ' ' + r.headers.get('content-type'))`, chromedp.EvalAwaitPromise))
	if got != "200 audio/wav" {
		t.Errorf("the player's source answers %q", got)
	}
	mustStep(t, "opening the transcript", chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#voice-calls details summary"))))
	if tr := mustRunStep(ctx, t, "transcript", chromedp.Text(chromedp.CSS("#voice-calls details pre"))); !strings.Contains(tr, "Can someone come on Tuesday?") {
		t.Errorf("transcript %q", tr)
	}
	if over := mustRunStep(ctx, t, "width", chromedp.Evaluate[int](`document.documentElement.scrollWidth - innerWidth`)); over > 0 {
		t.Errorf("the page scrolls sideways by %d px", over)
	}
	for _, v := range axeViolations(ctx, t, axe) {
		t.Errorf("axe: %s", v)
	}
	for _, v := range cspViolations(ctx, t) {
		t.Errorf("refused by the Content-Security-Policy: %s", v)
	}
	saveScreenshot(ctx, t, "admin voice with a call")
}
