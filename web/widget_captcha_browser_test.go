package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parley/parley/agent/llmtest"
)

// fakeTurnstile is a challenge provider's script implementing the part of
// Cloudflare Turnstile's explicit-render API the widget uses: render(box,
// {sitekey, callback, ...}) shows a challenge in box and calls callback with
// a token; reset(id) issues a new one. Tokens are unique, and every one
// issued is kept in window.fakeTurnstileIssued for the test to compare with
// what the server verified.
const fakeTurnstile = `(() => {
  let n = 0;
  const widgets = {};
  window.fakeTurnstileIssued = [];
  const issue = (id) => setTimeout(() => {
    const token = "fake-token-" + (++n) + "-" + Math.random().toString(36).slice(2);
    window.fakeTurnstileIssued.push(token);
    widgets[id].callback(token);
  }, 0);
  window.turnstile = {
    render(box, p) {
      const id = "fake-" + Object.keys(widgets).length;
      widgets[id] = p;
      const mark = document.createElement("div");
      mark.className = "fake-challenge";
      mark.textContent = "Fake challenge for " + p.sitekey;
      // As Turnstile's frame, out of reach of the host page's styles.
      mark.style.cssText = "border:1px solid #999 !important;padding:6px !important;font:13px sans-serif !important;color:#111 !important";
      box.append(mark);
      issue(id);
      return id;
    },
    reset(id) { issue(id); },
  };
})();`

// challengeProvider serves fakeTurnstile from its own origin, counting the
// requests; while down it answers 503.
type challengeProvider struct {
	*httptest.Server
	hits atomic.Int64
	down atomic.Bool
}

func newChallengeProvider(t *testing.T) *challengeProvider {
	t.Helper()
	p := &challengeProvider{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.hits.Add(1)
		w.Header().Set("Cache-Control", "no-store")
		if p.down.Load() || r.URL.Path != "/turnstile/v0/api.js" || r.URL.Query().Get("render") != "explicit" {
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprint(w, fakeTurnstile)
	}))
	t.Cleanup(p.Close)
	return p
}

// siteverify speaks the siteverify protocol (form secret, response,
// remoteip; JSON {success, error-codes}): it accepts any token sent with
// the expected secret, unless told to refuse, and keeps each token it was
// asked about.
type siteverify struct {
	*httptest.Server
	refuse atomic.Bool
	mu     sync.Mutex
	tokens []string
}

func newSiteverify(t *testing.T, secret string) *siteverify {
	t.Helper()
	v := &siteverify{}
	v.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil || r.Method != http.MethodPost {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		v.mu.Lock()
		v.tokens = append(v.tokens, r.PostForm.Get("response"))
		v.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.PostForm.Get("secret") != secret:
			fmt.Fprint(w, `{"success": false, "error-codes": ["invalid-input-secret"]}`)
		case v.refuse.Load():
			fmt.Fprint(w, `{"success": false, "error-codes": ["timeout-or-duplicate"]}`)
		default:
			fmt.Fprint(w, `{"success": true, "error-codes": []}`)
		}
	}))
	t.Cleanup(v.Close)
	return v
}

func (v *siteverify) seen() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Clone(v.tokens)
}

// TestWidgetBrowserCaptcha drives the bot challenge in Chromium, with a fake
// provider on an origin of its own and a fake siteverify wired into the
// server: nothing is loaded from the provider for a tenant without the
// gate; with it, a challenge that fails to load says so and can be retried,
// every chat message and form post carries a fresh token the server
// verifies, and a refused token says so plainly, with a retry that works.
func TestWidgetBrowserCaptcha(t *testing.T) {
	t.Parallel()
	const secret = "captcha-secret-of-the-shop"
	provider := newChallengeProvider(t)
	verify := newSiteverify(t, secret)
	b, llm := setupChat(t, map[string]string{"PARLEY_CAPTCHA_VERIFY_URL": verify.URL,
		"PARLEY_CAPTCHA_SCRIPT_URL": provider.URL + "/turnstile/v0/api.js?render=explicit"},
		llmtest.Turn{Text: []string{"No challenge here."}},
		llmtest.Turn{Text: []string{"First answer."}},
		llmtest.Turn{Text: []string{"Second answer."}},
		llmtest.Turn{Text: []string{"Third answer."}})
	b.atItsAddress()
	ctx := browserTab(t)
	const sr = widgetShadow
	str := func(t *testing.T, step, js string) string {
		t.Helper()
		return mustRunStep(ctx, t, step, chromedp.Evaluate[string](js))
	}
	run := func(t *testing.T, step, js string) {
		t.Helper()
		_, err := chromedp.Run(ctx, chromedp.Evaluate[any](js))
		mustStep(t, step, err)
	}
	// The last bot message's text, without its votes.
	lastBot := `[...` + sr + `.querySelectorAll('.msg.bot')].pop()?.firstChild?.textContent`
	say := func(t *testing.T, text string) {
		t.Helper()
		// The send button is a plain click away only once a token is ready.
		waitUntil(ctx, t, "the send button", `!`+sr+`.querySelector('form.compose button').disabled`)
		run(t, "sending "+text, `(() => { const i = `+sr+`.querySelector('textarea'); i.value = `+jsString(text)+`;
			`+sr+`.querySelector('form.compose button').click(); })()`)
	}

	t.Run("OffLoadsNothing", func(t *testing.T) {
		plain := b.newTenant(t, "starter")
		openWidgetPage(ctx, t, tenantSite(t, b, plain.Slug, "default").URL)
		run(t, "opening the chat", sr+`.querySelector('.launcher').click()`)
		say(t, "Hello")
		waitUntil(ctx, t, "the answer", lastBot+` === 'No challenge here.'`)
		if got := str(t, "the page", `String(document.querySelectorAll('script').length) + ' ' + String(!!window.turnstile) + ' ' +
			String(document.querySelector('parley-widget').children.length) + ' ' + String(!`+sr+`.querySelector('.captcha').hidden)`); got != "1 false 0 false" {
			t.Errorf("scripts, turnstile, light-DOM children of the widget, challenge row = %q, want the page's one script and nothing else", got)
		}
		if n := provider.hits.Load(); n != 0 {
			t.Errorf("%d requests to the challenge provider from a tenant without the gate", n)
		}
		if n := len(verify.seen()); n != 0 {
			t.Errorf("%d siteverify calls for a tenant without the gate", n)
		}
	})
	if t.Failed() {
		return
	}

	ten := b.newTenant(t, "starter")
	seg := map[string]any{"name": "Shop", "slug": "shop", "systemPrompt": "Help.", "welcomeMessage": "Hi!",
		"formConfig": map[string]any{"enabled": true, "intent": "lead", "confirmationMessage": "We will call you.",
			"fields": []any{map[string]any{"name": "email", "label": "Email", "type": "email", "required": true}}}}
	if st, body := b.do(t, "POST", "/tenants/"+ten.Slug+"/segments", ten.Token, seg); st != 201 {
		t.Fatalf("segment: %d %v", st, body)
	}
	if st, body := b.do(t, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{
		"captchaEnabled": true, "captchaSiteKey": "0x4AAA-shop-site", "captchaSecretKey": secret}); st != 200 {
		t.Fatalf("captcha settings: %d %v", st, body)
	}
	site := tenantSite(t, b, ten.Slug, "shop")
	issued := func(t *testing.T) []string {
		t.Helper()
		return mustRunStep(ctx, t, "issued tokens", chromedp.Evaluate[[]string](`window.fakeTurnstileIssued || []`))
	}

	t.Run("LoadFailureAndRetry", func(t *testing.T) {
		provider.down.Store(true)
		openWidgetPage(ctx, t, site.URL)
		if n := provider.hits.Load(); n != 0 {
			t.Errorf("%d requests to the provider before the chat was opened", n)
		}
		run(t, "opening the chat", sr+`.querySelector('.launcher').click()`)
		waitUntil(ctx, t, "the load failure", sr+`.querySelector('.captcha [role=status]').innerText.startsWith('The check that you are not a robot could not load.')`)
		if got := str(t, "send", `String(`+sr+`.querySelector('form.compose button').disabled)`); got != "true" {
			t.Error("the send button is enabled without a token")
		}
		provider.down.Store(false)
		run(t, "retrying", sr+`.querySelector('.captcha button').click()`)
		waitUntil(ctx, t, "a token", `!`+sr+`.querySelector('form.compose button').disabled`)
		if got := str(t, "challenge", `document.querySelector('parley-widget > [slot=captcha] .fake-challenge')?.innerText || ''`); got != "Fake challenge for 0x4AAA-shop-site" {
			t.Errorf("challenge rendered as %q, want it in the widget's light-DOM slot with the tenant's site key", got)
		}
		if got := str(t, "scripts", `String(document.querySelectorAll('script[src*="/turnstile/v0/api.js"]').length) + ' ' + `+sr+`.querySelector('.captcha [role=status]').innerText`); got != "1 " {
			t.Errorf("provider scripts and note after the retry = %q, want one script and no note", got)
		}
		saveScreenshot(ctx, t, "widget-captcha")
	})
	if t.Failed() {
		return
	}

	t.Run("FreshTokenEachMessage", func(t *testing.T) {
		say(t, "When are you open?")
		waitUntil(ctx, t, "the first answer", lastBot+` === 'First answer.'`)
		say(t, "And on Sunday?")
		waitUntil(ctx, t, "the second answer", lastBot+` === 'Second answer.'`)
		got, all := verify.seen(), issued(t)
		if len(got) != 2 || got[0] == got[1] {
			t.Fatalf("siteverify saw %q, want two different tokens", got)
		}
		for _, tok := range got {
			if !slices.Contains(all, tok) {
				t.Errorf("verified token %q is not one the provider issued (%q)", tok, all)
			}
		}
		if n := len(llm.Requests()); n != 3 {
			t.Errorf("%d model calls, want 3", n)
		}
	})

	t.Run("LeadForm", func(t *testing.T) {
		run(t, "filling the form", `(() => { const f = `+sr+`.querySelector('form.lead');
			f.elements.email.value = 'ada@example.com'; f.querySelector('button').click(); })()`)
		waitUntil(ctx, t, "the confirmation", `!`+sr+`.querySelector('form.lead') && [...`+sr+`.querySelectorAll('.msg.bot')].some(m => m.innerText === 'We will call you.')`)
		got := verify.seen()
		if len(got) != 3 || slices.Contains(got[:2], got[2]) || !slices.Contains(issued(t), got[2]) {
			t.Errorf("siteverify saw %q, want a third, fresh token from the provider", got)
		}
		if n := b.count(t, `SELECT count(*) FROM submissions WHERE tenant_id = $1 AND channel = 'form'`, ten.ID); n != 1 {
			t.Errorf("%d form submissions, want 1", n)
		}
	})

	t.Run("Refused", func(t *testing.T) {
		verify.refuse.Store(true)
		say(t, "Do you rent bikes?")
		waitUntil(ctx, t, "the refusal", sr+`.querySelector('.msg.error')?.innerText.startsWith('We could not confirm that you are not a robot. Please try again.')`)
		if n := len(llm.Requests()); n != 3 {
			t.Errorf("%d model calls, want none for the refused message", n)
		}
		saveScreenshot(ctx, t, "widget-captcha-refused")
		verify.refuse.Store(false)
		run(t, "retrying", sr+`.querySelector('.msg.error button').click()`)
		waitUntil(ctx, t, "the answer after the retry", lastBot+` === 'Third answer.' && !`+sr+`.querySelector('.msg.error')`)
		got := verify.seen()
		if len(got) != 5 || got[3] == got[4] || slices.Contains(got[:3], got[4]) {
			t.Errorf("siteverify saw %q, want the refused token and then a fresh one", got)
		}
		if n := len(llm.Requests()); n != 4 {
			t.Errorf("%d model calls, want 4", n)
		}
	})
}
