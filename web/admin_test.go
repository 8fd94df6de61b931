package web

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/static"
)

const (
	msgWrongLogin = "Wrong email or password."
	msgCSRF       = "Your form expired or came from another site; reload the page and try again."
)

// setupAdmin is setup for dashboard tests: the server believes X-Forwarded-For
// from the loopback test client, so each adminClient has an address of its own
// and the sign-in throttle of one test's failures does not slow down the
// others, which all connect from 127.0.0.1. env adds configuration.
func setupAdmin(t *testing.T, env map[string]string) *bundle {
	t.Helper()
	store := dbtest.New(t)
	cfg := testConfig(t, env, map[string]string{"PARLEY_TRUSTED_PROXIES": "127.0.0.1/32"})
	srv, err := NewServer(cfg, store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	// Rate limits (the password reset's) count in fixed windows: a clock that
	// starts in the middle of one keeps a test's requests and its limited one
	// in the same window.
	start := time.Now()
	mid := start.Truncate(15 * time.Minute).Add(7*time.Minute + 30*time.Second)
	srv.Base.Now = func() time.Time { return mid.Add(time.Since(start)) }
	return newBundle(t, srv, store)
}

var clientSeq atomic.Int64

// adminClient stands in for a browser on the dashboard: a cookie jar, a client
// address of its own, redirects not followed (tests look at them), and the
// CSRF token of the last page read.
type adminClient struct {
	t    *testing.T
	b    *bundle
	http *http.Client
	ip   string
	csrf string
}

// newAdminClient returns a signed-out client with an address no other client has.
func (b *bundle) newAdminClient(t *testing.T) *adminClient {
	jar, _ := cookiejar.New(nil)
	n := clientSeq.Add(1)
	return &adminClient{t: t, b: b, ip: fmt.Sprintf("198.18.%d.%d", n/250%250, n%250+1), http: &http.Client{
		Transport:     b.ts.Client().Transport,
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// as returns the client reporting to t: a subtest that goes on with its
// parent's session must not fail the parent.
func (c *adminClient) as(t *testing.T) *adminClient {
	cc := *c
	cc.t = t
	return &cc
}

// adminPage is one answer of the dashboard.
type adminPage struct {
	status int
	header http.Header
	body   string
	doc    *goquery.Document
}

func (p adminPage) location() string { return p.header.Get("Location") }

// text is the trimmed text of the first element matching sel.
func (p adminPage) text(sel string) string { return strings.TrimSpace(p.doc.Find(sel).First().Text()) }

// cookie returns the cookie the answer set, or nil.
func (p adminPage) cookie(name string) *http.Cookie {
	for _, c := range (&http.Response{Header: p.header}).Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func (c *adminClient) do(method, path string, form url.Values, header map[string]string) adminPage {
	c.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, c.b.ts.URL+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("X-Forwarded-For", c.ip)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(string(raw)))
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	if tok, ok := doc.Find(`input[name="_csrf"]`).Attr("value"); ok && tok != "" {
		c.csrf = tok
	}
	// Every error a dashboard page shows is in the owner's words, never the
	// API's (every dashboard test checks it, on every page it reads).
	doc.Find(".field-error, .flash.error").Each(func(_ int, s *goquery.Selection) {
		if leak := leakInMessage(s.Text()); leak != "" {
			c.t.Errorf("%s %s shows %q: %q is the API's word, not the owner's", method, path, strings.TrimSpace(s.Text()), leak)
		}
	})
	return adminPage{status: resp.StatusCode, header: resp.Header, body: string(raw), doc: doc}
}

// apiWord is a camelCase word: a field name as the API spells it.
var apiWord = regexp.MustCompile(`\b[a-z]+(?:[A-Z][a-z0-9]*)+\b`)

// leakInMessage reports what of the API's own language an owner-facing
// message still holds ("" when none): a camelCase field name, snake_case, a
// query parameter (the rules views' tests hold OwnerWords to).
func leakInMessage(msg string) string {
	if w := apiWord.FindString(msg); w != "" {
		return w
	}
	for _, s := range []string{"snake_case", "?cascade", "cascade=true"} {
		if strings.Contains(msg, s) {
			return s
		}
	}
	return ""
}

func TestLeakInMessage(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`segmentSlug no segment with slug "x"`: "segmentSlug",
		"name must be snake_case":              "snake_case",
		"or delete with ?cascade=true":         "?cascade",
		"must be at most 50 characters":        "",
	} {
		if got := leakInMessage(in); got != want {
			t.Errorf("leakInMessage(%q) = %q, want %q", in, got, want)
		}
	}
}

func (c *adminClient) get(path string) adminPage {
	c.t.Helper()
	return c.do("GET", path, nil, nil)
}

// post sends the form exactly as given, without a CSRF token unless it has one.
func (c *adminClient) post(path string, form url.Values) adminPage {
	c.t.Helper()
	return c.do("POST", path, form, nil)
}

// submit sends the form with the CSRF token of the last page, as a browser does.
func (c *adminClient) submit(path string, form url.Values) adminPage {
	c.t.Helper()
	if c.csrf == "" {
		c.t.Fatalf("POST %s: no CSRF token read yet", path)
	}
	f := url.Values{"_csrf": {c.csrf}}
	for k, v := range form {
		f[k] = v
	}
	return c.do("POST", path, f, nil)
}

// login opens the sign-in page and submits it.
func (c *adminClient) login(email, password, next string) adminPage {
	c.t.Helper()
	c.get("/admin/login")
	return c.submit("/admin/login", url.Values{"email": {email}, "password": {password}, "next": {next}})
}

// signIn logs in as the tenant's owner and fails the test otherwise; it
// returns the sign-in's answer (its session cookie).
func (c *adminClient) signIn(ten tenant) adminPage {
	c.t.Helper()
	if ten.Password == "" {
		c.t.Fatalf("tenant %s has no owner login: make it with ownedTenant", ten.Slug)
	}
	p := c.login(ten.OwnerEmail, ten.Password, "")
	if p.status != http.StatusSeeOther || p.location() != "/admin" {
		c.t.Fatalf("signing in as %s: %d to %q: %s", ten.OwnerEmail, p.status, p.location(), p.text("#login-error"))
	}
	return p
}

// signedIn reports whether the client's session reaches the dashboard.
func (c *adminClient) signedIn() bool {
	c.t.Helper()
	p := c.get("/admin")
	if p.status != http.StatusOK && (p.status != http.StatusSeeOther || p.location() != "/admin/login") {
		c.t.Fatalf("GET /admin: %d to %q", p.status, p.location())
	}
	return p.status == http.StatusOK
}

// formValues reads what a browser would submit from the form selected by sel.
func formValues(form *goquery.Selection) url.Values {
	v := url.Values{}
	form.Find("input[name], select[name], textarea[name]").Each(func(_ int, s *goquery.Selection) {
		name := s.AttrOr("name", "")
		switch goquery.NodeName(s) {
		case "select":
			opt := s.Find("option[selected]").First()
			if opt.Length() == 0 {
				opt = s.Find("option").First()
			}
			v.Add(name, opt.AttrOr("value", opt.Text()))
		case "textarea":
			v.Add(name, s.Text())
		default:
			switch s.AttrOr("type", "text") {
			case "checkbox", "radio":
				if _, checked := s.Attr("checked"); checked {
					v.Add(name, s.AttrOr("value", "on"))
				}
			default:
				v.Add(name, s.AttrOr("value", ""))
			}
		}
	})
	return v
}

// settingsForm reads the settings page's form as a browser would submit it.
func (c *adminClient) settingsForm() url.Values {
	c.t.Helper()
	return c.settingsFormAt("/admin/settings")
}

// settingsFormAt reads the form of one of the settings pages as shown.
func (c *adminClient) settingsFormAt(path string) url.Values {
	c.t.Helper()
	p := c.get(path)
	if p.status != http.StatusOK {
		c.t.Fatalf("GET %s: %d", path, p.status)
	}
	return formValues(p.doc.Find("#settings-form"))
}

// settingsPages are the settings pages, each saving its own fields.
var settingsPages = []string{"/admin/settings", "/admin/settings/widget", "/admin/settings/developer"}

func (b *bundle) tenantNow(t *testing.T, slug string) parley.Tenant {
	t.Helper()
	got, err := b.db.TenantBySlug(context.Background(), slug)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestAdminLogin(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t, nil)
	ten := b.ownedTenant(t, "starter")

	for _, tc := range []struct{ name, email, password string }{
		{"WrongPassword", ten.OwnerEmail, "not-" + ten.Password},
		{"UnknownEmail", "nobody-" + ten.Slug + "@example.test", ten.Password},
		{"EmptyPassword", ten.OwnerEmail, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := b.newAdminClient(t)
			p := c.login(tc.email, tc.password, "")
			if p.status != http.StatusUnauthorized || p.text("#login-error") != msgWrongLogin {
				t.Errorf("status %d, error %q", p.status, p.text("#login-error"))
			}
			if got := p.doc.Find("#email").AttrOr("value", ""); got != tc.email {
				t.Errorf("email field = %q, want what was typed", got)
			}
			if got := p.doc.Find("#password").AttrOr("value", ""); got != "" {
				t.Errorf("the password is sent back: %q", got)
			}
			if c.signedIn() {
				t.Error("signed in with wrong credentials")
			}
		})
	}

	t.Run("Success", func(t *testing.T) {
		t.Parallel()
		c := b.newAdminClient(t)
		c.signIn(ten)
		p := c.get("/admin")
		if p.status != http.StatusOK || p.text(".logout .muted") != ten.OwnerEmail {
			t.Errorf("GET /admin: %d, user %q", p.status, p.text(".logout .muted"))
		}
		if p := c.get("/admin/login"); p.status != http.StatusSeeOther || p.location() != "/admin" {
			t.Errorf("login page when signed in: %d to %q", p.status, p.location())
		}
	})

	t.Run("EmailIgnoresCase", func(t *testing.T) {
		t.Parallel()
		c := b.newAdminClient(t)
		if p := c.login("  "+strings.ToUpper(ten.OwnerEmail)+" ", ten.Password, ""); p.status != http.StatusSeeOther {
			t.Errorf("status %d: %s", p.status, p.text("#login-error"))
		}
	})

	t.Run("NextFromRedirect", func(t *testing.T) {
		t.Parallel()
		c := b.newAdminClient(t)
		p := c.get("/admin/tokens?page=2")
		if p.status != http.StatusSeeOther || p.location() != "/admin/login?next=%2Fadmin%2Ftokens%3Fpage%3D2" {
			t.Fatalf("signed out GET /admin/tokens: %d to %q", p.status, p.location())
		}
		p = c.get(p.location())
		next := p.doc.Find(`input[name="next"]`).AttrOr("value", "")
		if next != "/admin/tokens?page=2" {
			t.Fatalf("login form next = %q", next)
		}
		// A failed attempt keeps where the user was going.
		p = c.submit("/admin/login", url.Values{"email": {ten.OwnerEmail}, "password": {"typo"}, "next": {next}})
		if got := p.doc.Find(`input[name="next"]`).AttrOr("value", ""); p.status != http.StatusUnauthorized || got != next {
			t.Fatalf("failed login: %d, next %q", p.status, got)
		}
		p = c.submit("/admin/login", url.Values{"email": {ten.OwnerEmail}, "password": {ten.Password}, "next": {next}})
		if p.status != http.StatusSeeOther || p.location() != "/admin/tokens?page=2" {
			t.Errorf("after login: %d to %q", p.status, p.location())
		}
	})

	// Only dashboard paths are followed after login: anything else is an open redirect.
	for _, tc := range []struct{ name, next, want string }{
		{"NextAdminPath", "/admin/settings", "/admin/settings"},
		{"NextEmpty", "", "/admin"},
		{"NextAbsoluteURL", "https://evil.example/admin", "/admin"},
		{"NextSchemeRelative", "//evil.example/admin", "/admin"},
		{"NextBackslash", "/\\evil.example/admin", "/admin"},
		{"NextAdminBackslash", "/admin\\..\\\\evil.example", "/admin"},
		{"NextJavaScript", "javascript:alert(1)", "/admin"},
		{"NextOtherPath", "/tenants/" + ten.Slug, "/admin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := b.newAdminClient(t)
			p := c.login(ten.OwnerEmail, ten.Password, tc.next)
			if p.status != http.StatusSeeOther || p.location() != tc.want {
				t.Errorf("next %q: %d to %q, want %q", tc.next, p.status, p.location(), tc.want)
			}
		})
	}
}

// manualClock stops b's clock at a fixed instant and returns what moves it on.
func manualClock(b *bundle) (advance func(time.Duration)) {
	var mu sync.Mutex
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	b.srv.Base.Now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	return func(d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(d)
	}
}

// TestAdminLoginThrottle: failed sign-ins slow down their address, and
// their address with the account, never the account itself (issue 14,
// finding 2: ten wrong passwords locked the owner out from everywhere).
func TestAdminLoginThrottle(t *testing.T) {
	t.Parallel()

	fail := func(t *testing.T, c *adminClient, email string) {
		t.Helper()
		if p := c.login(email, "wrong-password", ""); p.status != http.StatusUnauthorized || p.text("#login-error") != msgWrongLogin {
			t.Fatalf("failure: status %d: %s", p.status, p.text("#login-error"))
		}
	}
	// throttled checks a 429 that says, in words and in Retry-After, to wait wait.
	throttled := func(t *testing.T, p adminPage, wait string, retryAfter int) {
		t.Helper()
		want := "Too many failed sign-in attempts. Try again in " + wait + "."
		if p.status != http.StatusTooManyRequests || p.text("#login-error") != want || p.header.Get("Retry-After") != strconv.Itoa(retryAfter) {
			t.Errorf("status %d, error %q, Retry-After %q; want 429, %q, %d", p.status, p.text("#login-error"),
				p.header.Get("Retry-After"), want, retryAfter)
		}
	}
	signsIn := func(t *testing.T, c *adminClient, ten tenant) {
		t.Helper()
		if p := c.login(ten.OwnerEmail, ten.Password, ""); p.status != http.StatusSeeOther || p.location() != "/admin" {
			t.Fatalf("right password: %d to %q: %s", p.status, p.location(), p.text("#login-error"))
		}
		if !c.signedIn() {
			t.Fatal("not signed in after the right password")
		}
	}

	t.Run("NoAccountLockout", func(t *testing.T) {
		t.Parallel()
		b := setupAdmin(t, nil)
		advance := manualClock(b)
		ten := b.ownedTenant(t, "starter")
		// Ten wrong passwords from ten addresses, then ten from one, waiting
		// out each of its delays.
		for range 10 {
			fail(t, b.newAdminClient(t), ten.OwnerEmail)
		}
		a := b.newAdminClient(t)
		for i := range 10 {
			p := a.login(ten.OwnerEmail, "wrong-password", "")
			for p.status == http.StatusTooManyRequests {
				secs, _ := strconv.Atoi(p.header.Get("Retry-After"))
				if secs <= 0 || secs > 60 {
					t.Fatalf("failure %d from one address: 429 with Retry-After %q: %s", i+1, p.header.Get("Retry-After"), p.text("#login-error"))
				}
				advance(time.Duration(secs) * time.Second)
				p = a.login(ten.OwnerEmail, "wrong-password", "")
			}
			if p.status != http.StatusUnauthorized {
				t.Fatalf("failure: status %d: %s", p.status, p.text("#login-error"))
			}
		}
		// The owner, from an address that has not failed, signs in at once.
		signsIn(t, b.newAdminClient(t), ten)
	})

	t.Run("PerAddressAndAccount", func(t *testing.T) {
		t.Parallel()
		b := setupAdmin(t, nil)
		advance := manualClock(b)
		ten, other := b.ownedTenant(t, "starter"), b.ownedTenant(t, "starter")
		a := b.newAdminClient(t)
		// Three failures are free; the fourth makes the next attempt of the
		// address on this account wait a second, even with the right password.
		for range 4 {
			fail(t, a, ten.OwnerEmail)
		}
		throttled(t, a.login(ten.OwnerEmail, ten.Password, ""), "1 second", 1)
		throttled(t, a.login(strings.ToUpper(ten.OwnerEmail), ten.Password, ""), "1 second", 1)
		// Another address on this account, and this address on another, are not kept waiting.
		signsIn(t, b.newAdminClient(t), ten)
		sameAddress := b.newAdminClient(t)
		sameAddress.ip = a.ip
		signsIn(t, sameAddress, other)
		// Each further failure doubles the wait.
		advance(time.Second)
		fail(t, a, ten.OwnerEmail)
		throttled(t, a.login(ten.OwnerEmail, ten.Password, ""), "2 seconds", 2)
		for _, wait := range []int{2, 4, 8, 16, 32, 64} {
			advance(time.Duration(wait) * time.Second)
			fail(t, a, ten.OwnerEmail)
		}
		throttled(t, a.login(ten.OwnerEmail, ten.Password, ""), "3 minutes", 128)
		// Once waited out, the right password signs in, and the failures
		// of the address on the account are forgotten.
		advance(128 * time.Second)
		signsIn(t, a, ten)
		if p := a.submit("/admin/logout", nil); p.status != http.StatusSeeOther {
			t.Fatalf("logout: %d", p.status)
		}
		// One more failure: the pair has one, free, but the address, with
		// twelve, waits 2 s (kept waiting 128 s, had the pair kept its eleven).
		fail(t, a, ten.OwnerEmail)
		throttled(t, a.login(ten.OwnerEmail, ten.Password, ""), "2 seconds", 2)
		advance(2 * time.Second)
		signsIn(t, a, ten)
	})

	t.Run("PerAddress", func(t *testing.T) {
		t.Parallel()
		b := setupAdmin(t, nil)
		advance := manualClock(b)
		ten := b.ownedTenant(t, "starter")
		a := b.newAdminClient(t)
		// Ten failures on as many accounts are free; the eleventh makes the
		// address wait a second, whatever account it names.
		for i := range 11 {
			fail(t, a, fmt.Sprintf("guess%d-%s@example.test", i, ten.Slug))
		}
		throttled(t, a.login(ten.OwnerEmail, ten.Password, ""), "1 second", 1)
		// The same account from another address is fine.
		signsIn(t, b.newAdminClient(t), ten)
		advance(time.Second)
		signsIn(t, a, ten)
	})
}

func TestAdminCSRF(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t, nil)
	ten := b.ownedTenant(t, "starter")

	refused := func(t *testing.T, p adminPage) {
		t.Helper()
		if p.status != http.StatusForbidden || !strings.Contains(p.text("body"), msgCSRF) {
			t.Errorf("status %d, body %q; want 403 with %q", p.status, p.text("body"), msgCSRF)
		}
		if ct := p.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
			t.Errorf("Content-Type %q, want an HTML page", ct)
		}
	}

	t.Run("LoginWithoutToken", func(t *testing.T) {
		t.Parallel()
		c := b.newAdminClient(t)
		c.get("/admin/login")
		refused(t, c.post("/admin/login", url.Values{"email": {ten.OwnerEmail}, "password": {ten.Password}}))
		if c.signedIn() {
			t.Error("signed in without a CSRF token")
		}
	})

	t.Run("LoginWithForgedToken", func(t *testing.T) {
		t.Parallel()
		c := b.newAdminClient(t)
		c.get("/admin/login")
		refused(t, c.post("/admin/login", url.Values{"_csrf": {"forged"}, "email": {ten.OwnerEmail}, "password": {ten.Password}}))
	})

	t.Run("LoginWithoutCookie", func(t *testing.T) {
		t.Parallel()
		// A token read from a page, sent from a client that never got its cookie.
		token := b.newAdminClient(t).get("/admin/login").doc.Find(`input[name="_csrf"]`).AttrOr("value", "")
		refused(t, b.newAdminClient(t).post("/admin/login", url.Values{"_csrf": {token}, "email": {ten.OwnerEmail}, "password": {ten.Password}}))
	})

	t.Run("SettingsWithoutToken", func(t *testing.T) {
		t.Parallel()
		c := b.newAdminClient(t)
		c.signIn(ten)
		form := c.settingsForm()
		form.Del("_csrf")
		form.Set("botTitle", "Forged title")
		refused(t, c.post("/admin/settings", form))
		if got := b.tenantNow(t, ten.Slug); strOrEmpty(got.BotTitle) == "Forged title" {
			t.Error("saved without a CSRF token")
		}
	})

	t.Run("CrossSiteRequest", func(t *testing.T) {
		t.Parallel()
		c := b.newAdminClient(t)
		c.signIn(ten)
		form := c.settingsForm() // with a valid token: the browser says the request is cross-site
		form.Set("botTitle", "Cross-site title")
		refused(t, c.do("POST", "/admin/settings", form, map[string]string{"Sec-Fetch-Site": "cross-site"}))
		if got := b.tenantNow(t, ten.Slug); strOrEmpty(got.BotTitle) == "Cross-site title" {
			t.Error("saved from another site")
		}
	})
}

func TestAdminSession(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t, nil)
	ten := b.ownedTenant(t, "starter")

	for _, tc := range []struct{ name, method, path, want string }{
		{"Overview", "GET", "/admin", "/admin/login"},
		{"Settings", "GET", "/admin/settings", "/admin/login?next=%2Fadmin%2Fsettings"},
		{"SaveSettings", "POST", "/admin/settings", "/admin/login"},
		{"RevokeToken", "POST", "/admin/tokens/x/revoke", "/admin/login"},
	} {
		t.Run("SignedOut"+tc.name, func(t *testing.T) {
			t.Parallel()
			c := b.newAdminClient(t)
			c.get("/admin/login")
			var p adminPage
			if tc.method == "GET" {
				p = c.get(tc.path)
			} else {
				p = c.submit(tc.path, url.Values{})
			}
			if p.status != http.StatusSeeOther || p.location() != tc.want {
				t.Errorf("%s %s: %d to %q, want 303 to %q", tc.method, tc.path, p.status, p.location(), tc.want)
			}
		})
	}

	t.Run("SignedOutHTMX", func(t *testing.T) {
		t.Parallel()
		c := b.newAdminClient(t)
		p := c.do("GET", "/admin/tokens", nil, map[string]string{"HX-Request": "true"})
		if p.status != http.StatusUnauthorized || p.header.Get("HX-Redirect") != "/admin/login?next=%2Fadmin%2Ftokens" {
			t.Errorf("htmx request: %d, HX-Redirect %q", p.status, p.header.Get("HX-Redirect"))
		}
	})

	t.Run("Logout", func(t *testing.T) {
		t.Parallel()
		c := b.newAdminClient(t)
		c.signIn(ten)
		var old *http.Cookie
		u, _ := url.Parse(b.ts.URL + "/admin")
		for _, ck := range c.http.Jar.Cookies(u) {
			if ck.Name == "parley_session" {
				old = ck
			}
		}
		if old == nil {
			t.Fatal("no session cookie after signing in")
		}
		c.get("/admin")
		if p := c.submit("/admin/logout", nil); p.status != http.StatusSeeOther || p.location() != "/admin/login" {
			t.Fatalf("logout: %d to %q", p.status, p.location())
		}
		if c.signedIn() {
			t.Error("still signed in after logout")
		}
		// The session is gone on the server, not only from the cookie jar.
		replay := b.newAdminClient(t)
		replay.http.Jar.SetCookies(u, []*http.Cookie{{Name: old.Name, Value: old.Value, Path: "/admin"}})
		if replay.signedIn() {
			t.Error("the session cookie of a signed-out session still works")
		}
	})

	// Issue 14, finding 7: the sessions table held the cookies' values.
	t.Run("StoredHashed", func(t *testing.T) {
		t.Parallel()
		c := b.newAdminClient(t)
		sess := c.login(ten.OwnerEmail, ten.Password, "").cookie("parley_session")
		if sess == nil || sess.Value == "" {
			t.Fatal("no session cookie after signing in")
		}
		if !c.signedIn() {
			t.Fatal("the session does not reach the dashboard")
		}
		var plain, hashed int
		if err := b.db.Pool().QueryRow(t.Context(), `SELECT count(*) FILTER (WHERE token = $1), count(*) FILTER (WHERE token = $2) FROM sessions`,
			sess.Value, auth.SessionKey(sess.Value)).Scan(&plain, &hashed); err != nil {
			t.Fatal(err)
		}
		if plain != 0 || hashed != 1 {
			t.Fatalf("sessions stored under the cookie's value: %d, under its SHA-256: %d; want 0 and 1", plain, hashed)
		}
		if want := fmt.Sprintf("%x", sha256.Sum256([]byte(sess.Value))); auth.SessionKey(sess.Value) != want {
			t.Fatalf("SessionKey = %q, want the hex SHA-256 %q", auth.SessionKey(sess.Value), want)
		}
		// Every token the table holds, as a cookie, signs nobody in.
		rows, err := b.db.Pool().Query(t.Context(), `SELECT token FROM sessions`)
		if err != nil {
			t.Fatal(err)
		}
		var tokens []string
		for rows.Next() {
			var tok string
			if err := rows.Scan(&tok); err != nil {
				t.Fatal(err)
			}
			tokens = append(tokens, tok)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(b.ts.URL + "/admin")
		for _, tok := range tokens {
			thief := b.newAdminClient(t)
			thief.http.Jar.SetCookies(u, []*http.Cookie{{Name: "parley_session", Value: tok, Path: "/admin"}})
			if thief.signedIn() {
				t.Fatalf("a token read from the sessions table signs in as a cookie")
			}
		}
	})

	t.Run("CookieFlags", func(t *testing.T) {
		t.Parallel()
		c := b.newAdminClient(t)
		csrf := c.get("/admin/login").cookie("parley_csrf")
		if csrf == nil || !csrf.HttpOnly || csrf.SameSite != http.SameSiteStrictMode || csrf.Path != "/admin" || csrf.Secure {
			t.Errorf("CSRF cookie = %+v; want HttpOnly, SameSite=Strict, Path=/admin, not Secure over http", csrf)
		}
		sess := c.login(ten.OwnerEmail, ten.Password, "").cookie("parley_session")
		if sess == nil || !sess.HttpOnly || sess.SameSite != http.SameSiteLaxMode || sess.Path != "/admin" || sess.Secure {
			t.Errorf("session cookie = %+v; want HttpOnly, SameSite=Lax, Path=/admin, not Secure over http", sess)
		}
	})

	t.Run("SecureCookiesBehindHTTPS", func(t *testing.T) {
		t.Parallel()
		bs := setupAdmin(t, map[string]string{"PARLEY_BASE_URL": "https://parley.example"})
		tn := bs.ownedTenant(t, "starter")
		// The jar keeps Secure cookies from plain http, so they are sent by hand.
		c := bs.newAdminClient(t)
		c.http.Jar = nil
		p := c.get("/admin/login")
		csrf := p.cookie("parley_csrf")
		if csrf == nil || !csrf.Secure || !csrf.HttpOnly {
			t.Fatalf("CSRF cookie = %+v; want Secure and HttpOnly", csrf)
		}
		p = c.do("POST", "/admin/login", url.Values{"_csrf": {c.csrf}, "email": {tn.OwnerEmail}, "password": {tn.Password}},
			map[string]string{"Cookie": csrf.Name + "=" + csrf.Value})
		sess := p.cookie("parley_session")
		if p.status != http.StatusSeeOther || sess == nil || !sess.Secure || !sess.HttpOnly || sess.SameSite != http.SameSiteLaxMode {
			t.Errorf("login %d, session cookie = %+v; want Secure, HttpOnly, SameSite=Lax", p.status, sess)
		}
	})
}

func TestAdminSwitchTenant(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t, nil)
	a, second, stranger := b.ownedTenant(t, "starter"), b.newTenant(t, "builder"), b.ownedTenant(t, "starter")
	if err := b.db.AddOwner(context.Background(), second.ID, a.OwnerEmail, "", false); err != nil {
		t.Fatal(err)
	}
	c := b.newAdminClient(t)
	c.signIn(a)

	current := func(c *adminClient) string {
		t := c.t
		t.Helper()
		p := c.get("/admin/settings")
		opts := p.doc.Find("#tenant-switch option")
		if opts.Length() != 2 {
			t.Fatalf("tenant switcher has %d options, want 2", opts.Length())
		}
		sel := p.doc.Find("#tenant-switch option[selected]")
		if sel.Length() != 1 {
			t.Fatalf("%d tenants selected in the switcher", sel.Length())
		}
		if name := p.doc.Find("#name").AttrOr("value", ""); name != "Tenant "+sel.AttrOr("value", "") {
			t.Fatalf("settings show tenant %q while the switcher says %q", name, sel.AttrOr("value", ""))
		}
		return sel.AttrOr("value", "")
	}
	switchTo := func(c *adminClient, slug string) adminPage {
		c.t.Helper()
		c.get("/admin")
		return c.submit("/admin/tenant", url.Values{"tenant": {slug}})
	}

	for _, slug := range []string{second.Slug, a.Slug, second.Slug} {
		if p := switchTo(c, slug); p.status != http.StatusSeeOther || p.location() != "/admin" {
			t.Fatalf("switching to %s: %d to %q", slug, p.status, p.location())
		}
		if got := current(c); got != slug {
			t.Fatalf("after switching to %s the dashboard shows %s", slug, got)
		}
	}

	t.Run("SaveGoesToCurrentTenant", func(t *testing.T) {
		c := c.as(t)
		form := c.settingsForm()
		form.Set("botName", "Bot of the second")
		if p := c.submit("/admin/settings", form); p.status != http.StatusSeeOther {
			t.Fatalf("save: %d", p.status)
		}
		if got := strOrEmpty(b.tenantNow(t, second.Slug).BotName); got != "Bot of the second" {
			t.Errorf("second tenant's botName = %q", got)
		}
		if got := strOrEmpty(b.tenantNow(t, a.Slug).BotName); got == "Bot of the second" {
			t.Error("the save reached the other tenant too")
		}
	})

	t.Run("NotOwned", func(t *testing.T) {
		c := c.as(t)
		p := switchTo(c, stranger.Slug)
		if p.status != http.StatusNotFound || !strings.Contains(p.text("body"), "You do not administer that tenant.") {
			t.Errorf("switching to a stranger's tenant: %d %q", p.status, p.text("body"))
		}
		if got := current(c); got != second.Slug {
			t.Errorf("after a refused switch the dashboard shows %s", got)
		}
	})

	t.Run("OneTenantNoSwitcher", func(t *testing.T) {
		c := b.newAdminClient(t)
		c.signIn(stranger)
		p := c.get("/admin")
		if p.doc.Find("#tenant-switch").Length() != 0 || p.text(".tenant code") != stranger.Slug {
			t.Errorf("single-tenant sidebar: %q", p.text(".tenant"))
		}
	})
}

func TestAdminTokens(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t, nil)
	mine, theirs := b.ownedTenant(t, "starter"), b.newTenant(t, "starter")
	c := b.newAdminClient(t)
	c.signIn(mine)

	tokenID := func(t *testing.T, tenantID string) string {
		t.Helper()
		ts, err := b.db.ListTokens(context.Background(), tenantID)
		if err != nil || len(ts) == 0 {
			t.Fatalf("tokens: %v %v", ts, err)
		}
		return ts[0].ID
	}
	tokenCount := func(t *testing.T) int {
		t.Helper()
		ts, err := b.db.ListTokens(context.Background(), mine.ID)
		if err != nil {
			t.Fatal(err)
		}
		return len(ts)
	}

	t.Run("RevokeOtherTenantsToken", func(t *testing.T) {
		c := c.as(t)
		id := tokenID(t, theirs.ID)
		c.get("/admin/tokens")
		if p := c.submit("/admin/tokens/"+id+"/revoke", nil); p.status != http.StatusNotFound {
			t.Errorf("revoking another tenant's token: %d", p.status)
		}
		p := c.do("POST", "/admin/tokens/"+id+"/revoke", url.Values{"_csrf": {c.csrf}}, map[string]string{"HX-Request": "true"})
		if p.status != http.StatusNotFound {
			t.Errorf("revoking another tenant's token with htmx: %d", p.status)
		}
		if status, body := b.do(t, "GET", "/tenants/"+theirs.Slug, theirs.Token, nil); status != http.StatusOK {
			t.Errorf("their token after the attempts: %d %v", status, body)
		}
	})

	t.Run("RevokeUnknownID", func(t *testing.T) {
		c := c.as(t)
		c.get("/admin/tokens")
		for _, id := range []string{"not-a-uuid", "00000000-0000-0000-0000-000000000000"} {
			if p := c.submit("/admin/tokens/"+id+"/revoke", nil); p.status != http.StatusNotFound {
				t.Errorf("revoking %q: %d", id, p.status)
			}
		}
	})

	t.Run("RevokeWithoutJavaScript", func(t *testing.T) {
		c := c.as(t)
		tok := b.token(t, mine.ID, auth.ScopeSettingsRead)
		ts, _ := b.db.ListTokens(context.Background(), mine.ID)
		id := ts[0].ID // newest first
		c.get("/admin/tokens")
		if p := c.submit("/admin/tokens/"+id+"/revoke", nil); p.status != http.StatusSeeOther || p.location() != "/admin/tokens" {
			t.Fatalf("revoke: %d to %q", p.status, p.location())
		}
		p := c.get("/admin/tokens")
		if p.text(".flash.ok") != "Token revoked." || p.text("#token-"+id+" .badge.revoked") != "revoked" {
			t.Errorf("flash %q, row %q", p.text(".flash.ok"), p.text("#token-"+id))
		}
		if status, _ := b.do(t, "GET", "/tenants/"+mine.Slug, tok, nil); status != http.StatusUnauthorized {
			t.Errorf("revoked token: %d", status)
		}
		if status, _ := b.do(t, "GET", "/tenants/"+mine.Slug, mine.Token, nil); status != http.StatusOK {
			t.Errorf("the tenant's other token: %d", status)
		}
	})

	t.Run("CreateShownOnce", func(t *testing.T) {
		c := c.as(t)
		c.get("/admin/tokens")
		p := c.submit("/admin/tokens", url.Values{"name": {"Nightly export"}, "scopes": {"stats:read"}})
		if p.status != http.StatusSeeOther || p.location() != "/admin/tokens" {
			t.Fatalf("create: %d to %q", p.status, p.location())
		}
		tok := c.get("/admin/tokens").text("#new-token")
		if status, _ := b.do(t, "GET", "/tenants/"+mine.Slug, tok, nil); status != http.StatusForbidden {
			t.Errorf("a stats:read token on settings: %d, want 403", status)
		}
		if again := c.get("/admin/tokens"); again.doc.Find("#new-token").Length() != 0 || strings.Contains(again.body, tok) {
			t.Error("the token is shown twice")
		}
	})

	for _, tc := range []struct {
		name string
		form url.Values
		errs map[string]string
	}{
		{"CreateEmpty", url.Values{"name": {"  "}}, map[string]string{
			"name": "Give the token a name, so you know later what uses it.", "scopes": "Choose at least one scope."}},
		{"CreateNameTooLong", url.Values{"name": {strings.Repeat("n", 101)}, "scopes": {"stats:read"}}, map[string]string{
			"name": "must be at most 100 characters"}},
		{"CreateUnknownScope", url.Values{"name": {"x"}, "scopes": {"stats:read", "root:all"}}, map[string]string{
			"scopes": `unknown scope "root:all"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := c.as(t)
			before := tokenCount(t)
			c.get("/admin/tokens")
			p := c.submit("/admin/tokens", tc.form)
			if p.status != http.StatusUnprocessableEntity {
				t.Errorf("status %d, want 422", p.status)
			}
			for field, msg := range tc.errs {
				if got := p.text("#err-" + field); !strings.HasPrefix(got, msg) {
					t.Errorf("%s error = %q, want %q", field, got, msg)
				}
			}
			for _, s := range tc.form["scopes"] {
				if _, ok := p.doc.Find(`input[name=scopes][value="` + s + `"]`).Attr("checked"); s != "root:all" && !ok {
					t.Errorf("scope %s lost its tick", s)
				}
			}
			if n := tokenCount(t); n != before {
				t.Errorf("%d tokens after a refused create, %d before", n, before)
			}
		})
	}
	// 100 characters is allowed.
	t.Run("CreateNameAtLimit", func(t *testing.T) {
		c := c.as(t)
		c.get("/admin/tokens")
		if p := c.submit("/admin/tokens", url.Values{"name": {strings.Repeat("é", 100)}, "scopes": {"stats:read"}}); p.status != http.StatusSeeOther {
			t.Errorf("status %d: %s", p.status, p.text("#err-name"))
		}
	})
}

func TestAdminSettings(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t, nil)

	stored := func(tn parley.Tenant, field string) string {
		switch field {
		case "botName":
			return strOrEmpty(tn.BotName)
		case "teaserText":
			return strOrEmpty(tn.TeaserText)
		case "autoOpenDelay":
			return strconv.Itoa(tn.AutoOpenDelay)
		}
		panic(field)
	}
	// Each case edits one field of a page and a valid companion field of
	// the same page, which must be saved only with the whole form.
	const persona, widget = "/admin/settings", "/admin/settings/widget"
	companion := map[string]struct{ field, value string }{persona: {"name", "Renamed"}, widget: {"secondaryColor", "#123456"}}
	companionStored := func(tn parley.Tenant, page string) string {
		if page == persona {
			return tn.Name
		}
		return strOrEmpty(tn.SecondaryColor)
	}
	for _, tc := range []struct {
		name, page, field, value, err string
	}{
		// Lengths count characters, not bytes.
		{"BotNameAtLimit", persona, "botName", strings.Repeat("é", 50), ""},
		{"BotNameTooLong", persona, "botName", strings.Repeat("é", 51), "must be at most 50 characters"},
		{"TeaserAtLimit", widget, "teaserText", strings.Repeat("ü", 160), ""},
		{"TeaserTooLong", widget, "teaserText", strings.Repeat("ü", 161), "must be at most 160 characters"},
		{"DelayMin", widget, "autoOpenDelay", "3", ""},
		{"DelayMax", widget, "autoOpenDelay", "120", ""},
		{"DelayTooShort", widget, "autoOpenDelay", "2", "must be between 3 and 120 seconds"},
		{"DelayTooLong", widget, "autoOpenDelay", "121", "must be between 3 and 120 seconds"},
		{"DelayNotNumber", widget, "autoOpenDelay", "soon", "must be a whole number of seconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ten := b.ownedTenant(t, "starter")
			c := b.newAdminClient(t)
			c.signIn(ten)
			before := b.tenantNow(t, ten.Slug)
			form := c.settingsFormAt(tc.page)
			form.Set(tc.field, tc.value)
			co := companion[tc.page]
			form.Set(co.field, co.value)
			p := c.submit(tc.page, form)
			after := b.tenantNow(t, ten.Slug)

			if tc.err == "" {
				if p.status != http.StatusSeeOther || p.location() != tc.page {
					t.Fatalf("status %d to %q: %s", p.status, p.location(), p.text(".field-error"))
				}
				if got := stored(after, tc.field); got != tc.value {
					t.Errorf("stored %s = %q, want %q", tc.field, got, tc.value)
				}
				if got := companionStored(after, tc.page); got != co.value {
					t.Errorf("stored %s = %q", co.field, got)
				}
				if p := c.get(tc.page); p.text(".flash.ok") != "Settings saved." || p.doc.Find("#"+tc.field).AttrOr("value", "") != tc.value {
					t.Errorf("after saving: flash %q, %s shown %q", p.text(".flash.ok"), tc.field, p.doc.Find("#"+tc.field).AttrOr("value", ""))
				}
				return
			}
			if p.status != http.StatusUnprocessableEntity {
				t.Errorf("status %d, want 422", p.status)
			}
			if got := p.text("#err-" + tc.field); got != tc.err {
				t.Errorf("error of %s = %q, want %q", tc.field, got, tc.err)
			}
			if p.doc.Find("#form-errors").Length() != 1 || p.doc.Find(".field-error").Length() != 1 {
				t.Errorf("want the form banner and one field error, got %q", p.text(".field-error"))
			}
			in := p.doc.Find("#" + tc.field)
			if in.AttrOr("value", "") != tc.value || in.AttrOr("aria-invalid", "") != "true" {
				t.Errorf("%s field: value %q, aria-invalid %q; want what was typed, marked invalid",
					tc.field, in.AttrOr("value", ""), in.AttrOr("aria-invalid", ""))
			}
			if p.doc.Find("#"+co.field).AttrOr("value", "") != co.value {
				t.Error("the other fields lost what was typed")
			}
			if companionStored(after, tc.page) != companionStored(before, tc.page) || stored(after, tc.field) != stored(before, tc.field) || !after.UpdatedAt.Equal(before.UpdatedAt) {
				t.Errorf("a refused form was saved: %s %q, %s %q", co.field, companionStored(after, tc.page), tc.field, stored(after, tc.field))
			}
		})
	}

	t.Run("UnchangedFormKeepsEverything", func(t *testing.T) {
		t.Parallel()
		ten := b.ownedTenant(t, "starter")
		ctx := context.Background()
		// Start from a tenant with every optional field set, so that a field the
		// form drops or mangles shows.
		_, err := b.db.UpdateTenant(ctx, ten.ID, db.TenantPatch{
			BotName: parley.Some("Ada"), BotTitle: parley.Some("Sales assistant"), BotLore: parley.Some("Line one\nLine two"),
			BotTone: parley.Some("PLAYFUL"), UseTutoiement: parley.Some(true), AllowEmojis: parley.Some(false),
			PrimaryColor: parley.Some("#112233"), SecondaryColor: parley.Some("#445566"), ShowAIBadge: parley.Some(false),
			BotAvatar: parley.Some("https://cdn.example/a.png"), AvatarType: parley.Some("LIBRARY"), TeaserText: parley.Some("Hi there"),
			AutoOpen: parley.Some(true), AutoOpenDelay: parley.Some(42), BubblePulse: parley.Some(true),
			AllowedDomains: parley.Some([]string{"example.com", "*.shop.example"}), ContentPolicy: parley.Some("MODERATE"),
		})
		if err != nil {
			t.Fatal(err)
		}
		before := b.tenantNow(t, ten.Slug)
		c := b.newAdminClient(t)
		c.signIn(ten)
		for _, page := range settingsPages {
			if p := c.submit(page, c.settingsFormAt(page)); p.status != http.StatusSeeOther {
				t.Fatalf("%s: status %d: %s", page, p.status, p.text(".field-error"))
			}
		}
		after := b.tenantNow(t, ten.Slug)
		if fmt.Sprintf("%+v", settingsOf(before)) != fmt.Sprintf("%+v", settingsOf(after)) {
			t.Errorf("saving the form unchanged changed the tenant:\nbefore %+v\nafter  %+v", settingsOf(before), settingsOf(after))
		}
	})
}

// settingsOf is what the settings page edits, dereferenced for comparison.
func settingsOf(tn parley.Tenant) []any {
	return []any{tn.Name, strOrEmpty(tn.BotName), strOrEmpty(tn.BotTitle), strOrEmpty(tn.BotLore), tn.BotTone,
		tn.UseTutoiement, tn.AllowEmojis, tn.PrimaryColor, strOrEmpty(tn.SecondaryColor), tn.ShowAIBadge,
		strOrEmpty(tn.BotAvatar), tn.AvatarType, strOrEmpty(tn.TeaserText), tn.AutoOpen, tn.AutoOpenDelay,
		tn.BubblePulse, tn.AllowedDomains, tn.ContentPolicy}
}

// adminCall is a dashboard request that must answer 404, such as one naming
// another tenant's row.
type adminCall struct {
	name, method, path string
	form               url.Values // nil: a GET
	hx                 bool
}

// expectNotFound makes each call as c's user, in a subtest, and checks the
// answer is 404.
func (c *adminClient) expectNotFound(t *testing.T, calls []adminCall) {
	t.Helper()
	for _, tc := range calls {
		t.Run(tc.name, func(t *testing.T) {
			cc := c.as(t)
			var p adminPage
			if tc.form == nil {
				p = cc.get(tc.path)
			} else {
				form := url.Values{"_csrf": {cc.csrf}}
				for k, v := range tc.form {
					form[k] = v
				}
				header := map[string]string{}
				if tc.hx {
					header["HX-Request"] = "true"
				}
				p = cc.do(tc.method, tc.path, form, header)
			}
			if p.status != http.StatusNotFound {
				t.Errorf("%s %s: %d, want 404", tc.method, tc.path, p.status)
			}
		})
	}
}

// TestAdminLoginChallenge: with the operator's challenge keys configured,
// an address that has failed repeatedly must solve the bot challenge to
// sign in; an address that has not failed never sees it.
func TestAdminLoginChallenge(t *testing.T) {
	t.Parallel()
	const secret = "operator-challenge-secret"
	provider := "https://challenge.example"
	verify := newSiteverify(t, secret)
	b := setupAdmin(t, map[string]string{"PARLEY_CAPTCHA_VERIFY_URL": verify.URL,
		"PARLEY_CAPTCHA_SCRIPT_URL":       provider + "/turnstile/v0/api.js?render=explicit",
		"PARLEY_ADMIN_CAPTCHA_SITE_KEY":   "0x4AAA-operator-site",
		"PARLEY_ADMIN_CAPTCHA_SECRET_KEY": secret})
	manualClock(b)
	ten := b.ownedTenant(t, "starter")
	const challengeAfter = 3 // failures of an address, as handlers.loginChallengeAfter
	challenged := func(t *testing.T, p adminPage) bool {
		t.Helper()
		box := p.doc.Find("#login-challenge")
		if box.Length() == 0 {
			return false
		}
		if box.AttrOr("data-sitekey", "") != "0x4AAA-operator-site" ||
			p.doc.Find(`script[src="`+provider+`/turnstile/v0/api.js?render=explicit"]`).Length() != 1 ||
			p.doc.Find(`script[src="`+static.Path("login-challenge.js")+`"]`).Length() != 1 ||
			!strings.Contains(p.header.Get("Content-Security-Policy"), "script-src 'self' "+provider) ||
			!strings.Contains(p.header.Get("Content-Security-Policy"), "frame-src "+provider) {
			t.Errorf("challenge without its site key, scripts or CSP: %s; CSP %q", box.Parent().Text(), p.header.Get("Content-Security-Policy"))
		}
		return true
	}
	signIn := func(c *adminClient, token string) adminPage {
		c.get("/admin/login")
		return c.submit("/admin/login", url.Values{"email": {ten.OwnerEmail}, "password": {ten.Password}, "challengeToken": {token}})
	}

	a := b.newAdminClient(t)
	if challenged(t, a.get("/admin/login")) {
		t.Fatal("the challenge shown to an address that has not failed")
	}
	for i := range challengeAfter {
		p := a.login(fmt.Sprintf("guess%d-%s@example.test", i, ten.Slug), "wrong-password", "")
		if p.status != http.StatusUnauthorized {
			t.Fatalf("failure %d: %d %s", i+1, p.status, p.text("#login-error"))
		}
		if got := challenged(t, p); got != (i+1 == challengeAfter) {
			t.Fatalf("after %d failures the challenge shown: %v", i+1, got)
		}
	}
	if !challenged(t, a.get("/admin/login")) {
		t.Fatal("no challenge on the sign-in page after repeated failures")
	}
	// A fresh address signs in with no challenge.
	if p := signIn(b.newAdminClient(t), ""); p.status != http.StatusSeeOther || p.location() != "/admin" {
		t.Fatalf("fresh address: %d %s", p.status, p.text("#login-error"))
	}
	if n := len(verify.seen()); n != 0 {
		t.Fatalf("%d siteverify calls before any challenge was answered", n)
	}
	// The failing address: the right password is not enough.
	p := signIn(a, "")
	if p.status != http.StatusForbidden || p.text("#login-error") != "Complete the check that you are not a robot, then sign in." || !challenged(t, p) {
		t.Fatalf("without a token: %d %q", p.status, p.text("#login-error"))
	}
	verify.refuse.Store(true)
	p = signIn(a, "refused-token")
	if p.status != http.StatusForbidden || p.text("#login-error") != "The check that you are not a robot failed: do it again, then sign in." {
		t.Fatalf("with a refused token: %d %q", p.status, p.text("#login-error"))
	}
	verify.refuse.Store(false)
	if p := signIn(a, "good-token"); p.status != http.StatusSeeOther || p.location() != "/admin" {
		t.Fatalf("with a solved challenge: %d %q", p.status, p.text("#login-error"))
	}
	if got := verify.seen(); !slices.Equal(got, []string{"refused-token", "good-token"}) {
		t.Errorf("siteverify asked about %q", got)
	}

	t.Run("VerificationUnavailable", func(t *testing.T) {
		down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "down", http.StatusServiceUnavailable)
		}))
		t.Cleanup(down.Close)
		b.srv.Base.Captcha.URL = down.URL
		c := b.newAdminClient(t)
		for i := range challengeAfter {
			c.login(fmt.Sprintf("other%d-%s@example.test", i, ten.Slug), "wrong-password", "")
		}
		p := signIn(c, "some-token")
		if p.status != http.StatusForbidden || p.text("#login-error") != "The check that you are not a robot could not be verified right now: try again shortly." {
			t.Errorf("siteverify down: %d %q", p.status, p.text("#login-error"))
		}
	})
}
