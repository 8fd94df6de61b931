package web

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/parley/parley/auth"
)

// The test binary's one headless Chromium; every browser test opens a tab in it.
var chromium struct {
	once sync.Once
	ctx  context.Context
	err  error
}

// tabAddrSeq numbers the browser tabs' client addresses.
var tabAddrSeq atomic.Int64

// ownAddress gives the tab a client address of its own (testConfig trusts
// X-Forwarded-For from the loopback), for a test whose failed sign-ins must
// count against it alone, in the test binary's one database. Same-origin
// pages only: the header would make cross-origin requests preflighted.
func ownAddress(ctx context.Context, t *testing.T) {
	t.Helper()
	n := tabAddrSeq.Add(1)
	_, err := chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{
		Headers: network.Headers{"X-Forwarded-For": fmt.Sprintf("10.88.%d.%d", n/250, n%250+1)}})
	mustStep(t, "giving the tab its own address", err)
}

// browserTab opens a new tab of the shared browser, in a browser context of
// its own, closed when the test ends.
// A browser that does not start fails the test: browser tests never skip.
func browserTab(t *testing.T) context.Context {
	t.Helper()
	chromium.once.Do(func() { chromium.ctx, chromium.err = startChromium() })
	if chromium.err != nil {
		t.Fatalf("headless Chromium: %v (apt-get install chromium-headless-shell, or set PARLEY_TEST_CHROMIUM to a Chromium binary)", chromium.err)
	}
	// Each test gets its own browser context, so its own cookies: cookies ignore
	// the port, and every test server listens on 127.0.0.1.
	tab, closeTab := chromedp.NewContext(chromium.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(closeTab)
	// The first action opens the tab and binds the tab's life to the context it
	// gets, so it gets the tab context and the timeout only limits what follows.
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	ctx, cancel := context.WithTimeout(tab, 60*time.Second)
	t.Cleanup(cancel)
	emulateMedia(ctx, t)
	return ctx
}

// emulateMedia sets the tab's CSS media features: the given ones, and
// always prefers-reduced-motion: reduce. No test runs an animation (the
// launcher's pulse is checked in its stylesheet), and the widget's launcher
// pulsed forever before it pulsed three times (a box-shadow animation,
// repainted at 60 frames a second): a tab left on a page that shows the
// widget or its preview burnt about a fifth of a CPU while the test waited
// on its server. (SetEmulatedMedia replaces the whole set, so a test that
// emulates another feature goes through here too.)
func emulateMedia(ctx context.Context, t *testing.T, features ...*emulation.MediaFeature) {
	t.Helper()
	features = append(features, &emulation.MediaFeature{Name: "prefers-reduced-motion", Value: "reduce"})
	_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: features})
	mustStep(t, "emulating the media features", err)
}

// typeText puts text into the field with id as one insertion (keyIn):
// for the sign-in form, which listens to no key, 0.03 s of Chromium's CPU
// instead of 0.3 s for an email and a password.
func typeText(ctx context.Context, t *testing.T, id, text string) {
	t.Helper()
	mustStep(t, "typing into #"+id, chromedp.Do(ctx, keyIn(chromedp.ID(id), text)))
}

// chromiumPath is the browser the tests drive: PARLEY_TEST_CHROMIUM if set,
// else Debian's chromium-headless-shell, else its chromium. The two are one
// build of Chromium (Blink, V8, the network stack); `chromium --headless`
// runs the whole desktop browser off-screen, a window with its tab strip and
// address bar for every browser context, and made `make test` cost the
// machine 279–321 s of CPU against 194–210 s with the shell (BENCHMARKS.md,
// "Test suite", 2026-11-28).
func chromiumPath() string {
	if path := os.Getenv("PARLEY_TEST_CHROMIUM"); path != "" {
		return path
	}
	for _, name := range []string{"chromium-headless-shell", "chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	return "chromium-headless-shell"
}

// startChromium starts the browser. Its life is the test binary's: chromedp
// kills it when the binary exits, so the profile directories of earlier
// binaries are removed here instead.
func startChromium() (context.Context, error) {
	path := chromiumPath()
	removeStaleProfiles()
	dir, err := os.MkdirTemp("", fmt.Sprintf("parley-chromium-%d-", os.Getpid()))
	if err != nil {
		return nil, err
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		// Chromium 156 (`chromium --headless`; the shell has no windows)
		// gives every window, headless too, an address bar
		// whose suggestions are WebUI pages (chrome://omnibox-popup.top-chrome),
		// loaded in a renderer of their own: about 0.3 s of CPU a tab, for
		// an address bar no test types into. (chromedp's own list, and these.)
		chromedp.Flag("disable-features", "Translate,BlinkGenPropertyTrees,"+
			"WebUIOmniboxPopup,WebUIOmniboxAimPopup,WebUIOmniboxFullPopup"),
		chromedp.UserDataDir(dir),
	)
	alloc, _ := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, _ := chromedp.NewContext(alloc)
	// The first action starts the browser and ties it to ctx, which must not
	// time out; a browser that hangs at start is caught here instead.
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(ctx) }()
	select {
	case err := <-started:
		if err != nil {
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("starting %s: %w", path, err)
		}
	case <-time.After(time.Minute):
		return nil, fmt.Errorf("starting %s: no answer after a minute", path)
	}
	return ctx, nil
}

// removeStaleProfiles deletes the profile directories of test binaries that have exited.
func removeStaleProfiles() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "parley-chromium-*"))
	for _, d := range dirs {
		pidText, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(d), "parley-chromium-"), "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() {
			continue
		}
		if p, err := os.FindProcess(pid); err == nil && p.Signal(syscall.Signal(0)) == nil {
			continue // still running
		}
		_ = os.RemoveAll(d)
	}
}

// strOrEmpty reads an optional column.
func strOrEmpty(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// mustStep fails the test on a browser error, naming the step.
func mustStep(t *testing.T, step string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
}

// mustRunStep runs one browser action and returns its value.
func mustRunStep[T any](ctx context.Context, t *testing.T, step string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	mustStep(t, step, err)
	return v
}

// submitForm clicks a submit button and waits for the page it leads to; it returns that page's status.
func submitForm(ctx context.Context, t *testing.T, button string) int64 {
	t.Helper()
	resp, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(button)))
	mustStep(t, "submitting with "+button, err)
	return resp.Status
}

// fillField empties an input or textarea and types text into it, as a
// user does: it waits for the field, clears what it holds (chromedp.Clear
// would set the value attribute, not what was typed, and fails on an empty
// textarea), then focuses it and inserts the text (keyIn). Focusing it
// commits the field left (change), after the clearing.
func fillField(id, text string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.WaitVisible(chromedp.ID(id)),
		chromedp.Evaluate[chromedp.Void](`document.getElementById(`+jsString(id)+`).value = ''`),
		keyIn(chromedp.ID(id), text),
	)
}

// keyIn types text into the visible field sel at its caret as one insertion
// from the keyboard (beforeinput and input, as an input method commits
// it), rather than chromedp.SendKeys's three key events for each
// character, each handled by the page and its scripts: the tests that fill
// forms took a third less of the machine's CPU (BENCHMARKS.md). For a field
// whose page listens to input, not to keys; a test of the keys themselves
// sends them (chromedp.KeyEvent).
func keyIn[S chromedp.Selectable](sel S, text string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(chromedp.Focus(sel, chromedp.NodeVisible), chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, input.InsertText, input.InsertTextParams{Text: text})
		return err
	}))
}

// browserSignIn signs in through the login form, starting from a dashboard
// page: for a test of the form itself. Others sign in with openSignedIn.
func browserSignIn(ctx context.Context, t *testing.T, b *bundle, ten tenant) {
	t.Helper()
	ownAddress(ctx, t) // no other test's failed sign-ins slow this one down
	mustStep(t, "opening /admin", chromedp.Do(ctx, chromedp.Navigate(b.ts.URL+"/admin")))
	loc := mustRunStep(ctx, t, "location", chromedp.Location())
	if loc != b.ts.URL+"/admin/login" {
		t.Fatalf("signed out, /admin went to %s, want the login page", loc)
	}
	typeText(ctx, t, "email", ten.OwnerEmail)
	typeText(ctx, t, "password", ten.Password)
	if status := submitForm(ctx, t, `form[action="/admin/login"] button[type=submit]`); status != http.StatusOK {
		t.Fatalf("after signing in: status %d", status)
	}
	if loc := mustRunStep(ctx, t, "location", chromedp.Location()); loc != b.ts.URL+"/admin" {
		t.Fatalf("after signing in at %s, want /admin", loc)
	}
}

// openSignedIn signs the tab in as the tenant's owner without the sign-in
// form and opens path, a dashboard page. The form is driven in Chromium by
// the tests that are about it (admin_login_browser_test.go, the password
// reset); here the tab signs in as the dashboard's HTTP tests do (an
// adminClient posts the form) and takes the session cookie exactly as the
// server set it: 0.1 s instead of the form's two page loads and a post,
// about 2 s of Chromium's CPU on a loaded machine. path opening where it
// was asked, not on the sign-in page, proves the tab signed in.
func openSignedIn(ctx context.Context, t *testing.T, b *bundle, ten tenant, path string) {
	t.Helper()
	ownAddress(ctx, t) // as browserSignIn: the tab's requests count against an address of its own
	session := b.newAdminClient(t).signIn(ten).cookie(b.srv.Sessions.Cookie.Name)
	if session == nil {
		t.Fatalf("signing in set no %s cookie", b.srv.Sessions.Cookie.Name)
	}
	cookie := network.SetCookieParams{Name: session.Name, Value: session.Value, URL: b.ts.URL, Path: session.Path,
		HTTPOnly: &session.HttpOnly, Secure: &session.Secure}
	switch session.SameSite {
	case http.SameSiteLaxMode:
		cookie.SameSite = network.CookieSameSiteLax
	case http.SameSiteStrictMode:
		cookie.SameSite = network.CookieSameSiteStrict
	case http.SameSiteNoneMode:
		cookie.SameSite = network.CookieSameSiteNone
	}
	if !session.Expires.IsZero() {
		cookie.Expires = cdp.TimeSinceEpoch(session.Expires.Unix())
	}
	_, err := chromedp.Call(ctx, network.SetCookie, cookie)
	mustStep(t, "handing the tab the session cookie", err)
	mustStep(t, "opening "+path, chromedp.Do(ctx, chromedp.Navigate(b.ts.URL+path)))
	if loc := mustRunStep(ctx, t, "location", chromedp.Location()); loc != b.ts.URL+path {
		t.Fatalf("signed in with the session cookie, %s went to %s", path, loc)
	}
}

func TestBrowserSettings(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ten := b.ownedTenant(t, "starter")
	ctx := browserTab(t)
	openSignedIn(ctx, t, b, ten, "/admin")

	t.Run("Overview", func(t *testing.T) {
		if plan := mustRunStep(ctx, t, "plan", chromedp.Text(chromedp.ID("plan"))); plan != "starter" {
			t.Errorf("plan = %q, want starter", plan)
		}
		embed := mustRunStep(ctx, t, "embed code", chromedp.Text(chromedp.ID("embed-code")))
		if want := `<script src="` + b.srv.Config.CDNURL + `/widget.js" data-tenant="` + ten.Slug + `" async></script>`; embed != want {
			t.Errorf("embed code = %q, want %q", embed, want)
		}
	})

	before, err := b.db.TenantBySlug(context.Background(), ten.Slug)
	mustStep(t, "reading the tenant", err)

	t.Run("Save", func(t *testing.T) {
		mustStep(t, "opening settings", chromedp.Do(ctx, chromedp.Navigate(b.ts.URL+"/admin/settings")))
		if h1 := mustRunStep(ctx, t, "title", chromedp.Text(chromedp.CSS("main h1"))); h1 != "Persona" {
			t.Fatalf("heading = %q", h1)
		}
		if before.PrimaryColor == "#0A7E8C" {
			t.Fatal("the new colour is already the tenant's: the test would prove nothing")
		}
		mustStep(t, "editing", chromedp.Do(ctx, fillField("botName", "Ada Lovebot")))
		if status := submitForm(ctx, t, `#settings-form button[type=submit]`); status != http.StatusOK {
			t.Fatalf("after saving: status %d", status)
		}
		if flash := okFlash(ctx, t); flash != "Settings saved." {
			t.Errorf("flash = %q", flash)
		}
		if v := mustRunStep(ctx, t, "bot name", chromedp.Value(chromedp.ID("botName"))); v != "Ada Lovebot" {
			t.Errorf("bot name shown = %q", v)
		}
		// The widget's look is on its own page, reached by its tab.
		tab := mustRunStep(ctx, t, "the widget's tab", chromedp.Evaluate[string](`document.querySelector('nav.tabs a[href="/admin/settings/widget"]')?.href || ''`))
		if tab == "" {
			t.Fatal("no tab to the widget's look")
		}
		mustStep(t, "opening the widget's look", chromedp.Do(ctx, chromedp.Navigate(tab)))
		if h1 := mustRunStep(ctx, t, "title", chromedp.Text(chromedp.CSS("main h1"))); h1 != "Widget look" {
			t.Fatalf("heading = %q", h1)
		}
		mustStep(t, "editing", chromedp.Do(ctx, fillField("primaryColor", "#0A7E8C")))
		if status := submitForm(ctx, t, `#settings-form button[type=submit]`); status != http.StatusOK {
			t.Fatalf("after saving: status %d", status)
		}
		if flash := okFlash(ctx, t); flash != "Settings saved." {
			t.Errorf("flash = %q", flash)
		}
		if v := mustRunStep(ctx, t, "primary colour", chromedp.Value(chromedp.ID("primaryColor"))); v != "#0A7E8C" {
			t.Errorf("primary colour shown = %q", v)
		}
		got, err := b.db.TenantBySlug(context.Background(), ten.Slug)
		mustStep(t, "reading the tenant", err)
		if got.BotName == nil || *got.BotName != "Ada Lovebot" || got.PrimaryColor != "#0A7E8C" {
			t.Errorf("stored botName %v, primaryColor %q", strOrEmpty(got.BotName), got.PrimaryColor)
		}
		// The rest of the form went back unchanged.
		if got.Name != before.Name || got.BotTone != before.BotTone || got.AutoOpenDelay != before.AutoOpenDelay ||
			got.ShowAIBadge != before.ShowAIBadge || got.ContentPolicy != before.ContentPolicy {
			t.Errorf("other fields changed: before %+v, after %+v", before, got)
		}
	})

	t.Run("ColourByNameAndPicker", func(t *testing.T) {
		mustStep(t, "opening settings", chromedp.Do(ctx, chromedp.Navigate(b.ts.URL+"/admin/settings/widget")))
		mustStep(t, "typing a colour name", chromedp.Do(ctx, fillField("primaryColor", "green"), chromedp.Focus(chromedp.ID("teaserText"))))
		const read = `document.getElementById('primaryColor').value + ' ' + document.querySelector('[data-colour-for=primaryColor]').value`
		waitUntil(ctx, t, "the name made a colour", read+` === '#008000 #008000'`)
		mustStep(t, "picking", chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`(() => { const p = document.querySelector('[data-colour-for=primaryColor]');
			p.value = '#aa0011'; p.dispatchEvent(new Event('input', {bubbles: true})); })()`)))
		if got := mustRunStep(ctx, t, "picked", chromedp.Evaluate[string](read)); got != "#AA0011 #aa0011" {
			t.Errorf("after picking: text and picker = %q", got)
		}
		if !leavePage(ctx, t, b.ts.URL+"/admin/settings/widget") {
			t.Error("leaving a picked colour unsaved did not ask")
		}
	})

	t.Run("InvalidColour", func(t *testing.T) {
		mustStep(t, "opening settings", chromedp.Do(ctx, chromedp.Navigate(b.ts.URL+"/admin/settings/widget")))
		mustStep(t, "editing", chromedp.Do(ctx, fillField("teaserText", "Not saved"), fillField("primaryColor", "#12345G")))
		if status := submitForm(ctx, t, `#settings-form button[type=submit]`); status != http.StatusUnprocessableEntity {
			t.Errorf("status %d, want 422", status)
		}
		if msg := mustRunStep(ctx, t, "field error", chromedp.Text(chromedp.ID("err-primaryColor"))); msg != "must be a hex colour #RRGGBB" {
			t.Errorf("primaryColor error = %q", msg)
		}
		if msg := mustRunStep(ctx, t, "form error", chromedp.Text(chromedp.ID("form-errors"))); !strings.Contains(msg, "nothing was saved") {
			t.Errorf("form error = %q", msg)
		}
		if v := mustRunStep(ctx, t, "primary colour", chromedp.Value(chromedp.ID("primaryColor"))); v != "#12345G" {
			t.Errorf("the form lost what was typed: primary colour %q", v)
		}
		invalid := mustRunStep(ctx, t, "aria-invalid", chromedp.AttributeValue(chromedp.ID("primaryColor"), "aria-invalid"))
		if invalid.Value != "true" {
			t.Errorf("primaryColor aria-invalid = %q", invalid.Value)
		}
		// The field in error has the focus and names its message.
		waitUntil(ctx, t, "the focus on the field in error", `document.activeElement?.id === 'primaryColor'`)
		if got := mustRunStep(ctx, t, "described by", chromedp.Evaluate[string](`document.getElementById('primaryColor').getAttribute('aria-describedby') || ''`)); !strings.Contains(got, "err-primaryColor") {
			t.Errorf("primaryColor aria-describedby = %q, want its error", got)
		}
		got, err := b.db.TenantBySlug(context.Background(), ten.Slug)
		mustStep(t, "reading the tenant", err)
		if got.PrimaryColor != "#0A7E8C" || strOrEmpty(got.TeaserText) == "Not saved" {
			t.Errorf("an invalid form was saved: primaryColor %q, teaser %q", got.PrimaryColor, strOrEmpty(got.TeaserText))
		}
	})

	t.Run("WidgetKeyAsksFirst", func(t *testing.T) {
		leavePage(ctx, t, b.ts.URL+"/admin/settings/developer") // the rejected form above was left unsaved
		msg := clickAndConfirm(ctx, t, "#generate-widget-key button")
		if !strings.Contains(msg, "stops working on your site") {
			t.Errorf("confirmation = %q", msg)
		}
		if flash := okFlash(ctx, t); !strings.HasPrefix(flash, "New widget key generated") {
			t.Errorf("flash = %q", flash)
		}
	})
}

func TestBrowserTokens(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ten := b.ownedTenant(t, "builder")
	ctx := browserTab(t)
	openSignedIn(ctx, t, b, ten, "/admin/tokens")

	mustStep(t, "opening tokens", chromedp.Do(ctx,
		fillField("token-name", "CRM sync"),
		chromedp.Click(chromedp.CSS(`input[name=scopes][value="settings:read"]`)),
		chromedp.Click(chromedp.CSS(`input[name=scopes][value="stats:read"]`)),
	))
	if status := submitForm(ctx, t, `#token-form button[type=submit]`); status != http.StatusOK {
		t.Fatalf("after creating: status %d", status)
	}
	token := strings.TrimSpace(mustRunStep(ctx, t, "new token", chromedp.Text(chromedp.ID("new-token"))))
	if !strings.HasPrefix(token, "ak_") {
		t.Fatalf("new token = %q", token)
	}

	t.Run("TokenWorks", func(t *testing.T) {
		if status, body := b.do(t, "GET", "/tenants/"+ten.Slug, token, nil); status != http.StatusOK {
			t.Errorf("GET with the new token: %d %v", status, body)
		}
		// Only the chosen scopes: settings:write was not ticked.
		status, body := b.do(t, "PUT", "/tenants/"+ten.Slug, token, map[string]any{"botName": "x"})
		if status != http.StatusForbidden || body["error"] != "Missing scope: "+auth.ScopeSettingsWrite {
			t.Errorf("PUT with a read-only token: %d %v", status, body)
		}
	})

	ts, err := b.db.ListTokens(context.Background(), ten.ID)
	mustStep(t, "listing tokens", err)
	var id string
	for _, tk := range ts {
		if tk.Name == "CRM sync" {
			id = tk.ID
			if strings.Join(tk.Scopes, ",") != "settings:read,stats:read" {
				t.Errorf("stored scopes = %v", tk.Scopes)
			}
		}
	}
	if id == "" {
		t.Fatalf("no stored token named CRM sync among %+v", ts)
	}
	row := "#token-" + id

	t.Run("ShownOnce", func(t *testing.T) {
		mustStep(t, "reloading", chromedp.Do(ctx, chromedp.Reload()))
		html := mustRunStep(ctx, t, "page", chromedp.OuterHTML(chromedp.CSS("html")))
		if strings.Contains(html, token) || strings.Contains(html, `id="new-token"`) {
			t.Error("the token is still shown after a reload")
		}
		if scopes := mustRunStep(ctx, t, "row", chromedp.Text(chromedp.CSS(row+" td:nth-child(3)"))); !strings.Contains(scopes, "Read settings") || !strings.Contains(scopes, "Read analytics") {
			t.Errorf("row scopes = %q", scopes)
		}
	})

	t.Run("Revoke", func(t *testing.T) {
		dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
		asked := make(chan string, 1)
		go func() {
			for ev, err := range dialogs {
				if err != nil {
					return
				}
				asked <- ev.Message
				_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
				return
			}
		}()
		mustStep(t, "clicking Revoke", chromedp.Do(ctx, chromedp.Click(chromedp.CSS(row+" button"))))
		select {
		case msg := <-asked:
			if !strings.Contains(msg, "Revoke token CRM sync?") {
				t.Errorf("confirmation = %q", msg)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no confirmation dialog")
		}
		mustStep(t, "waiting for the revoked row", chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(row+" .badge.revoked"))))
		if txt := mustRunStep(ctx, t, "badge", chromedp.Text(chromedp.CSS(row+" .badge.revoked"))); txt != "revoked" {
			t.Errorf("badge = %q", txt)
		}
		// htmx swapped the row in place: no navigation happened.
		if loc := mustRunStep(ctx, t, "location", chromedp.Location()); loc != b.ts.URL+"/admin/tokens" {
			t.Errorf("location after revoking = %s", loc)
		}
		if status, body := b.do(t, "GET", "/tenants/"+ten.Slug, token, nil); status != http.StatusUnauthorized {
			t.Errorf("GET with the revoked token: %d %v", status, body)
		}
	})
}
