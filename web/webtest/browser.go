package webtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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
)

// The test binary's one headless Chromium; every browser test opens a tab in it.
var Chromium struct {
	once sync.Once
	ctx  context.Context
	err  error
}

// TabAddrSeq numbers the browser tabs' client addresses.
var TabAddrSeq atomic.Int64

// OwnAddress gives the tab a client address of its own (Config trusts
// X-Forwarded-For from the loopback), for a test whose failed sign-ins must
// count against it alone, in the test binary's one database. Same-origin
// pages only: the header would make cross-origin requests preflighted.
func OwnAddress(ctx context.Context, t *testing.T) {
	t.Helper()
	n := TabAddrSeq.Add(1)
	_, err := chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{
		Headers: network.Headers{"X-Forwarded-For": fmt.Sprintf("10.88.%d.%d", n/250, n%250+1)}})
	MustStep(t, "giving the tab its own address", err)
}

// BrowserTab opens a new tab of the shared browser, in a browser context of
// its own, closed when the test ends.
// A browser that does not start fails the test: browser tests never skip.
func BrowserTab(t *testing.T) context.Context {
	t.Helper()
	Chromium.once.Do(func() { Chromium.ctx, Chromium.err = StartChromium() })
	if Chromium.err != nil {
		t.Fatalf("headless Chromium: %v (apt-get install chromium-headless-shell, or set PARLEY_TEST_CHROMIUM to a Chromium binary)", Chromium.err)
	}
	// Each test gets its own browser context, so its own cookies: cookies ignore
	// the port, and every test server listens on 127.0.0.1.
	tab, closeTab := chromedp.NewContext(Chromium.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(closeTab)
	// The first action opens the tab and binds the tab's life to the context it
	// gets, so it gets the tab context and the timeout only limits what follows.
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	// A hang's limit, not a wait: a tab of the dashboard tour (ten pages,
	// axe-core, two screenshots each when PARLEY_TEST_ARTIFACTS is set) ran
	// past one minute in a fresh clone's CI, with the dashboard's test binary
	// and its own Chromium running beside it on two cores.
	ctx, cancel := context.WithTimeout(tab, 3*time.Minute)
	t.Cleanup(cancel)
	EmulateMedia(ctx, t)
	return ctx
}

// EmulateMedia sets the tab's CSS media features: the given ones, and
// always prefers-reduced-motion: reduce. No test runs an animation (the
// launcher's pulse is checked in its stylesheet), and the widget's launcher
// pulsed forever before it pulsed three times (a box-shadow animation,
// repainted at 60 frames a second): a tab left on a page that shows the
// widget or its preview burnt about a fifth of a CPU while the test waited
// on its server. (SetEmulatedMedia replaces the whole set, so a test that
// emulates another feature goes through here too.)
func EmulateMedia(ctx context.Context, t *testing.T, features ...*emulation.MediaFeature) {
	t.Helper()
	features = append(features, &emulation.MediaFeature{Name: "prefers-reduced-motion", Value: "reduce"})
	_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: features})
	MustStep(t, "emulating the media features", err)
}

// TypeText puts text into the field with id as one insertion (KeyIn):
// for the sign-in form, which listens to no key, 0.03 s of Chromium's CPU
// instead of 0.3 s for an email and a password.
func TypeText(ctx context.Context, t *testing.T, id, text string) {
	t.Helper()
	MustStep(t, "typing into #"+id, chromedp.Do(ctx, KeyIn(chromedp.ID(id), text)))
}

// ChromiumPath is the browser the tests drive: PARLEY_TEST_CHROMIUM if set,
// else Debian's chromium-headless-shell, else its chromium. The two are one
// build of Chromium (Blink, V8, the network stack); `chromium --headless`
// runs the whole desktop browser off-screen, a window with its tab strip and
// address bar for every browser context, and made `make test` cost the
// machine 279–321 s of CPU against 194–210 s with the shell (BENCHMARKS.md,
// "Test suite", 2026-11-28).
func ChromiumPath() string {
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

// StartChromium starts the browser. Its life is the test binary's: chromedp
// kills it when the binary exits, so the profile directories of earlier
// binaries are removed here instead.
func StartChromium() (context.Context, error) {
	path := ChromiumPath()
	RemoveStaleProfiles()
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

// RemoveStaleProfiles deletes the profile directories of test binaries that have exited.
func RemoveStaleProfiles() {
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

// StrOrEmpty reads an optional column.
func StrOrEmpty(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// MustStep fails the test on a browser error, naming the step.
func MustStep(t *testing.T, step string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
}

// MustRunStep runs one browser action and returns its value.
func MustRunStep[T any](ctx context.Context, t *testing.T, step string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	MustStep(t, step, err)
	return v
}

// Scripts is the shorthand of a browser test that drives a page by
// script: Run evaluates js, Str returns its string value; a failure ends
// the test, named by step.
type Scripts struct {
	ctx context.Context
	t   *testing.T
}

// ScriptsOf is the shorthand over the tab ctx.
func ScriptsOf(ctx context.Context, t *testing.T) Scripts { return Scripts{ctx, t} }

// Run evaluates js.
func (s Scripts) Run(step, js string) {
	s.t.Helper()
	_, err := chromedp.Run(s.ctx, chromedp.Evaluate[any](js))
	MustStep(s.t, step, err)
}

// Str evaluates js and returns its string value.
func (s Scripts) Str(step, js string) string {
	s.t.Helper()
	return MustRunStep(s.ctx, s.t, step, chromedp.Evaluate[string](js))
}

// SubmitForm clicks a submit button and waits for the page it leads to; it returns that page's status.
func SubmitForm(ctx context.Context, t *testing.T, button string) int64 {
	t.Helper()
	resp, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(button)))
	MustStep(t, "submitting with "+button, err)
	return resp.Status
}

// FillField empties an input or textarea and types text into it, as a
// user does: it waits for the field, clears what it holds (chromedp.Clear
// would set the value attribute, not what was typed, and fails on an empty
// textarea), then focuses it and inserts the text (KeyIn). Focusing it
// commits the field left (change), after the clearing.
func FillField(id, text string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.WaitVisible(chromedp.ID(id)),
		chromedp.Evaluate[chromedp.Void](`document.getElementById(`+JSString(id)+`).value = ''`),
		KeyIn(chromedp.ID(id), text),
	)
}

// KeyIn types text into the visible field sel at its caret as one insertion
// from the keyboard (beforeinput and input, as an input method commits
// it), rather than chromedp.SendKeys's three key events for each
// character, each handled by the page and its scripts: the tests that fill
// forms took a third less of the machine's CPU (BENCHMARKS.md). For a field
// whose page listens to input, not to keys; a test of the keys themselves
// sends them (chromedp.KeyEvent).
func KeyIn[S chromedp.Selectable](sel S, text string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(chromedp.Focus(sel, chromedp.NodeVisible), chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, input.InsertText, input.InsertTextParams{Text: text})
		return err
	}))
}

// BrowserSignIn signs in through the login form, starting from a dashboard
// page: for a test of the form itself. Others sign in with OpenSignedIn.
func BrowserSignIn(ctx context.Context, t *testing.T, b *Bundle, ten Tenant) {
	t.Helper()
	OwnAddress(ctx, t) // no other test's failed sign-ins slow this one down
	MustStep(t, "opening /admin", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin")))
	loc := MustRunStep(ctx, t, "location", chromedp.Location())
	if loc != b.TS.URL+"/admin/login" {
		t.Fatalf("signed out, /admin went to %s, want the login page", loc)
	}
	TypeText(ctx, t, "email", ten.OwnerEmail)
	TypeText(ctx, t, "password", ten.Password)
	if status := SubmitForm(ctx, t, `form[action="/admin/login"] button[type=submit]`); status != http.StatusOK {
		t.Fatalf("after signing in: status %d", status)
	}
	if loc := MustRunStep(ctx, t, "location", chromedp.Location()); loc != b.TS.URL+"/admin" {
		t.Fatalf("after signing in at %s, want /admin", loc)
	}
}

// OpenSignedIn signs the tab in as the tenant's owner without the sign-in
// form and opens path, a dashboard page. The form is driven in Chromium by
// the tests that are about it (handlers/admin/admin_login_browser_test.go, the password
// reset); here the tab signs in as the dashboard's HTTP tests do (an
// AdminClient posts the form) and takes the session cookie exactly as the
// server set it: 0.1 s instead of the form's two page loads and a post,
// about 2 s of Chromium's CPU on a loaded machine. path opening where it
// was asked, not on the sign-in page, proves the tab signed in.
func OpenSignedIn(ctx context.Context, t *testing.T, b *Bundle, ten Tenant, path string) {
	t.Helper()
	OwnAddress(ctx, t) // as browserSignIn: the tab's requests count against an address of its own
	session := b.NewAdminClient(t).SignIn(ten).Cookie(b.Srv.Sessions.Cookie.Name)
	if session == nil {
		t.Fatalf("signing in set no %s cookie", b.Srv.Sessions.Cookie.Name)
	}
	cookie := network.SetCookieParams{Name: session.Name, Value: session.Value, URL: b.TS.URL, Path: session.Path,
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
	MustStep(t, "handing the tab the session cookie", err)
	MustStep(t, "opening "+path, chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+path)))
	if loc := MustRunStep(ctx, t, "location", chromedp.Location()); loc != b.TS.URL+path {
		t.Fatalf("signed in with the session cookie, %s went to %s", path, loc)
	}
}

// ScreenshotDir is where browser tests keep their screenshots: the
// directory PARLEY_TEST_ARTIFACTS names (a relative one from the module
// root, such as artifacts/screenshots, which git ignores). .ci/run sets it
// and prints it after the tests.
func ScreenshotDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("PARLEY_TEST_ARTIFACTS")
	if filepath.IsAbs(dir) {
		return dir
	}
	if dir == "" {
		dir = filepath.Join("artifacts", "screenshots")
	}
	return filepath.Join(ModuleRoot(t), dir)
}

// ModuleRoot is the nearest directory above the test's holding go.mod.
func ModuleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

var UnsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// SaveScreenshot keeps a full-page PNG of the tab as name.png in
// ScreenshotDir, for a person to look at: the test asserts behaviour, the
// picture shows how it looks. Other tests of the same name overwrite it.
//
// Pictures are taken only when PARLEY_TEST_ARTIFACTS is set (.ci/run sets
// it): a full-page PNG costs Chromium a few hundred milliseconds of CPU, and
// the suite takes about sixty of them, which a developer's make test is
// spared.
func SaveScreenshot(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	if os.Getenv("PARLEY_TEST_ARTIFACTS") == "" {
		return
	}
	png := MustRunStep(ctx, t, "screenshot "+name, chromedp.FullScreenshot(100))
	dir := ScreenshotDir(t)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, UnsafeName.ReplaceAllString(name, "-")+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// AxeScript is axe-core's script (widget/testdata/axe.min.js), which the
// browser tests inject to check a page's accessibility.
func AxeScript(t *testing.T) []byte {
	t.Helper()
	axe, err := os.ReadFile(filepath.Join(ModuleRoot(t), "widget", "testdata", "axe.min.js"))
	if err != nil {
		t.Fatal(err)
	}
	return axe
}

// Viewport is a screen size a browser test emulates.
type Viewport struct {
	Name          string
	Width, Height int64
}

// AdminViewports are the screens every dashboard page must work on: a
// laptop and a phone.
var AdminViewports = []Viewport{{"laptop", 1366, 900}, {"phone", 390, 844}}

// WatchCSP records, in every page the tab opens from now on, what the
// Content-Security-Policy refuses (an inline script or event attribute, a
// script from elsewhere): the recorder runs before the page's own scripts.
func WatchCSP(ctx context.Context, t *testing.T) {
	t.Helper()
	_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: `window.__csp = []; document.addEventListener('securitypolicyviolation', e =>
			window.__csp.push(e.effectiveDirective + ' refused ' + (e.blockedURI || 'inline') + ' at ' + e.sourceFile + ':' + e.lineNumber + ' ' + (e.sample || '')));`})
	MustStep(t, "watching the Content-Security-Policy", err)
}

// CSPViolations lists what the policy refused on the tab's page so far.
func CSPViolations(ctx context.Context, t *testing.T) []string {
	t.Helper()
	return MustRunStep(ctx, t, "policy violations", chromedp.Evaluate[[]string](`window.__csp || []`))
}

// AxeViolations runs axe-core (its source in axe, loaded into the page
// once) over the tab's page and lists its serious and critical violations.
func AxeViolations(ctx context.Context, t *testing.T, axe []byte) []string {
	return AxeRuleViolations(ctx, t, axe, nil)
}

// AxeRuleViolations is AxeViolations with axe-core's rules limited to rules
// (nil: every rule).
func AxeRuleViolations(ctx context.Context, t *testing.T, axe []byte, rules []string) []string {
	t.Helper()
	if !MustRunStep(ctx, t, "axe loaded", chromedp.Evaluate[bool](`typeof axe !== 'undefined'`)) {
		_, err := chromedp.Run(ctx, chromedp.Evaluate[any](string(axe)))
		MustStep(t, "loading axe-core", err)
	}
	options := map[string]any{"resultTypes": []string{"violations"}}
	if rules != nil {
		options["runOnly"] = map[string]any{"type": "rule", "values": rules}
	}
	opts, err := json.Marshal(options)
	MustStep(t, "axe options", err)
	return MustRunStep(ctx, t, "axe", chromedp.Evaluate[[]string](`axe.run(document, `+string(opts)+`)
		.then(r => r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
		.map(v => v.id + ': ' + v.help + ' (' + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(', ') + ')'))`,
		chromedp.EvalAwaitPromise))
}

// FakeTurnstile is a challenge provider's script implementing the part of
// Cloudflare Turnstile's explicit-render API the widget uses: render(box,
// {sitekey, callback, ...}) shows a challenge in box and calls callback with
// a token; reset(id) issues a new one. Tokens are unique, and every one
// issued is kept in window.fakeTurnstileIssued for the test to compare with
// what the server verified.
const FakeTurnstile = `(() => {
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

// ChallengeProvider serves FakeTurnstile from its own origin, counting the
// requests; while down it answers 503.
type ChallengeProvider struct {
	*httptest.Server
	Hits atomic.Int64
	Down atomic.Bool
}

func NewChallengeProvider(t *testing.T) *ChallengeProvider {
	t.Helper()
	p := &ChallengeProvider{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.Hits.Add(1)
		w.Header().Set("Cache-Control", "no-store")
		if p.Down.Load() || r.URL.Path != "/turnstile/v0/api.js" || r.URL.Query().Get("render") != "explicit" {
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprint(w, FakeTurnstile)
	}))
	t.Cleanup(p.Close)
	return p
}

// Siteverify speaks the siteverify protocol (form secret, response,
// remoteip; JSON {success, error-codes}): it accepts any token sent with
// the expected secret, unless told to refuse, and keeps each token it was
// asked about.
type Siteverify struct {
	*httptest.Server
	Refuse atomic.Bool
	mu     sync.Mutex
	tokens []string
}

func NewSiteverify(t *testing.T, secret string) *Siteverify {
	t.Helper()
	v := &Siteverify{}
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
		case v.Refuse.Load():
			fmt.Fprint(w, `{"success": false, "error-codes": ["timeout-or-duplicate"]}`)
		default:
			fmt.Fprint(w, `{"success": true, "error-codes": []}`)
		}
	}))
	t.Cleanup(v.Close)
	return v
}

func (v *Siteverify) Seen() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Clone(v.tokens)
}
