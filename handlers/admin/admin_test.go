package admin_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/static"
	"github.com/parley/parley/web/webtest"
)

const (
	msgWrongLogin = "Wrong email or password."
	msgCSRF       = "Your form expired or came from another site; reload the page and try again."
)

func TestLeakInMessage(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`segmentSlug no segment with slug "x"`: "segmentSlug",
		"name must be snake_case":              "snake_case",
		"or delete with ?cascade=true":         "?cascade",
		"must be at most 50 characters":        "",
	} {
		if got := webtest.LeakInMessage(in); got != want {
			t.Errorf("leakInMessage(%q) = %q, want %q", in, got, want)
		}
	}
}

// settingsPages are the settings pages, each saving its own fields.
var settingsPages = []string{"/admin/settings", "/admin/settings/widget", "/admin/settings/developer"}

func TestAdminLogin(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	ten := b.OwnedTenant(t, "starter")

	for _, tc := range []struct{ name, email, password string }{
		{"WrongPassword", ten.OwnerEmail, "not-" + ten.Password},
		{"UnknownEmail", "nobody-" + ten.Slug + "@example.test", ten.Password},
		{"EmptyPassword", ten.OwnerEmail, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := b.NewAdminClient(t)
			p := c.Login(tc.email, tc.password, "")
			if p.Status != http.StatusUnauthorized || p.Text("#login-error") != msgWrongLogin {
				t.Errorf("status %d, error %q", p.Status, p.Text("#login-error"))
			}
			if got := p.Doc.Find("#email").AttrOr("value", ""); got != tc.email {
				t.Errorf("email field = %q, want what was typed", got)
			}
			if got := p.Doc.Find("#password").AttrOr("value", ""); got != "" {
				t.Errorf("the password is sent back: %q", got)
			}
			if c.SignedIn() {
				t.Error("signed in with wrong credentials")
			}
		})
	}

	t.Run("Success", func(t *testing.T) {
		t.Parallel()
		c := b.NewAdminClient(t)
		c.SignIn(ten)
		p := c.Get("/admin")
		if p.Status != http.StatusOK || p.Text(".logout .muted") != ten.OwnerEmail {
			t.Errorf("GET /admin: %d, user %q", p.Status, p.Text(".logout .muted"))
		}
		if p := c.Get("/admin/login"); p.Status != http.StatusSeeOther || p.Location() != "/admin" {
			t.Errorf("login page when signed in: %d to %q", p.Status, p.Location())
		}
	})

	t.Run("EmailIgnoresCase", func(t *testing.T) {
		t.Parallel()
		c := b.NewAdminClient(t)
		if p := c.Login("  "+strings.ToUpper(ten.OwnerEmail)+" ", ten.Password, ""); p.Status != http.StatusSeeOther {
			t.Errorf("status %d: %s", p.Status, p.Text("#login-error"))
		}
	})

	t.Run("NextFromRedirect", func(t *testing.T) {
		t.Parallel()
		c := b.NewAdminClient(t)
		p := c.Get("/admin/tokens?page=2")
		if p.Status != http.StatusSeeOther || p.Location() != "/admin/login?next=%2Fadmin%2Ftokens%3Fpage%3D2" {
			t.Fatalf("signed out GET /admin/tokens: %d to %q", p.Status, p.Location())
		}
		p = c.Get(p.Location())
		next := p.Doc.Find(`input[name="next"]`).AttrOr("value", "")
		if next != "/admin/tokens?page=2" {
			t.Fatalf("login form next = %q", next)
		}
		// A failed attempt keeps where the user was going.
		p = c.Submit("/admin/login", url.Values{"email": {ten.OwnerEmail}, "password": {"typo"}, "next": {next}})
		if got := p.Doc.Find(`input[name="next"]`).AttrOr("value", ""); p.Status != http.StatusUnauthorized || got != next {
			t.Fatalf("failed login: %d, next %q", p.Status, got)
		}
		p = c.Submit("/admin/login", url.Values{"email": {ten.OwnerEmail}, "password": {ten.Password}, "next": {next}})
		if p.Status != http.StatusSeeOther || p.Location() != "/admin/tokens?page=2" {
			t.Errorf("after login: %d to %q", p.Status, p.Location())
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
			c := b.NewAdminClient(t)
			p := c.Login(ten.OwnerEmail, ten.Password, tc.next)
			if p.Status != http.StatusSeeOther || p.Location() != tc.want {
				t.Errorf("next %q: %d to %q, want %q", tc.next, p.Status, p.Location(), tc.want)
			}
		})
	}
}

// TestAdminLoginThrottle: failed sign-ins slow down their address, and
// their address with the account, never the account itself (issue 14,
// finding 2: ten wrong passwords locked the owner out from everywhere).
func TestAdminLoginThrottle(t *testing.T) {
	t.Parallel()

	fail := func(t *testing.T, c *webtest.AdminClient, email string) {
		t.Helper()
		if p := c.Login(email, "wrong-password", ""); p.Status != http.StatusUnauthorized || p.Text("#login-error") != msgWrongLogin {
			t.Fatalf("failure: status %d: %s", p.Status, p.Text("#login-error"))
		}
	}
	// throttled checks a 429 that says, in words and in Retry-After, to wait wait.
	throttled := func(t *testing.T, p webtest.AdminPage, wait string, retryAfter int) {
		t.Helper()
		want := "Too many failed sign-in attempts. Try again in " + wait + "."
		if p.Status != http.StatusTooManyRequests || p.Text("#login-error") != want || p.Header.Get("Retry-After") != strconv.Itoa(retryAfter) {
			t.Errorf("status %d, error %q, Retry-After %q; want 429, %q, %d", p.Status, p.Text("#login-error"),
				p.Header.Get("Retry-After"), want, retryAfter)
		}
	}
	signsIn := func(t *testing.T, c *webtest.AdminClient, ten webtest.Tenant) {
		t.Helper()
		if p := c.Login(ten.OwnerEmail, ten.Password, ""); p.Status != http.StatusSeeOther || p.Location() != "/admin" {
			t.Fatalf("right password: %d to %q: %s", p.Status, p.Location(), p.Text("#login-error"))
		}
		if !c.SignedIn() {
			t.Fatal("not signed in after the right password")
		}
	}

	t.Run("NoAccountLockout", func(t *testing.T) {
		t.Parallel()
		b := webtest.SetupAdmin(t, nil)
		advance := webtest.ManualClock(b)
		ten := b.OwnedTenant(t, "starter")
		// Ten wrong passwords from ten addresses, then ten from one, waiting
		// out each of its delays.
		for range 10 {
			fail(t, b.NewAdminClient(t), ten.OwnerEmail)
		}
		a := b.NewAdminClient(t)
		for i := range 10 {
			p := a.Login(ten.OwnerEmail, "wrong-password", "")
			for p.Status == http.StatusTooManyRequests {
				secs, _ := strconv.Atoi(p.Header.Get("Retry-After"))
				if secs <= 0 || secs > 60 {
					t.Fatalf("failure %d from one address: 429 with Retry-After %q: %s", i+1, p.Header.Get("Retry-After"), p.Text("#login-error"))
				}
				advance(time.Duration(secs) * time.Second)
				p = a.Login(ten.OwnerEmail, "wrong-password", "")
			}
			if p.Status != http.StatusUnauthorized {
				t.Fatalf("failure: status %d: %s", p.Status, p.Text("#login-error"))
			}
		}
		// The owner, from an address that has not failed, signs in at once.
		signsIn(t, b.NewAdminClient(t), ten)
	})

	t.Run("PerAddressAndAccount", func(t *testing.T) {
		t.Parallel()
		b := webtest.SetupAdmin(t, nil)
		advance := webtest.ManualClock(b)
		ten, other := b.OwnedTenant(t, "starter"), b.OwnedTenant(t, "starter")
		a := b.NewAdminClient(t)
		// Three failures are free; the fourth makes the next attempt of the
		// address on this account wait a second, even with the right password.
		for range 4 {
			fail(t, a, ten.OwnerEmail)
		}
		throttled(t, a.Login(ten.OwnerEmail, ten.Password, ""), "1 second", 1)
		throttled(t, a.Login(strings.ToUpper(ten.OwnerEmail), ten.Password, ""), "1 second", 1)
		// Another address on this account, and this address on another, are not kept waiting.
		signsIn(t, b.NewAdminClient(t), ten)
		sameAddress := b.NewAdminClient(t)
		sameAddress.IP = a.IP
		signsIn(t, sameAddress, other)
		// Each further failure doubles the wait.
		advance(time.Second)
		fail(t, a, ten.OwnerEmail)
		throttled(t, a.Login(ten.OwnerEmail, ten.Password, ""), "2 seconds", 2)
		for _, wait := range []int{2, 4, 8, 16, 32, 64} {
			advance(time.Duration(wait) * time.Second)
			fail(t, a, ten.OwnerEmail)
		}
		throttled(t, a.Login(ten.OwnerEmail, ten.Password, ""), "3 minutes", 128)
		// Once waited out, the right password signs in, and the failures
		// of the address on the account are forgotten.
		advance(128 * time.Second)
		signsIn(t, a, ten)
		if p := a.Submit("/admin/logout", nil); p.Status != http.StatusSeeOther {
			t.Fatalf("logout: %d", p.Status)
		}
		// One more failure: the pair has one, free, but the address, with
		// twelve, waits 2 s (kept waiting 128 s, had the pair kept its eleven).
		fail(t, a, ten.OwnerEmail)
		throttled(t, a.Login(ten.OwnerEmail, ten.Password, ""), "2 seconds", 2)
		advance(2 * time.Second)
		signsIn(t, a, ten)
	})

	t.Run("PerAddress", func(t *testing.T) {
		t.Parallel()
		b := webtest.SetupAdmin(t, nil)
		advance := webtest.ManualClock(b)
		ten := b.OwnedTenant(t, "starter")
		a := b.NewAdminClient(t)
		// Ten failures on as many accounts are free; the eleventh makes the
		// address wait a second, whatever account it names.
		for i := range 11 {
			fail(t, a, fmt.Sprintf("guess%d-%s@example.test", i, ten.Slug))
		}
		throttled(t, a.Login(ten.OwnerEmail, ten.Password, ""), "1 second", 1)
		// The same account from another address is fine.
		signsIn(t, b.NewAdminClient(t), ten)
		advance(time.Second)
		signsIn(t, a, ten)
	})
}

func TestAdminCSRF(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	ten := b.OwnedTenant(t, "starter")

	refused := func(t *testing.T, p webtest.AdminPage) {
		t.Helper()
		if p.Status != http.StatusForbidden || !strings.Contains(p.Text("body"), msgCSRF) {
			t.Errorf("status %d, body %q; want 403 with %q", p.Status, p.Text("body"), msgCSRF)
		}
		if ct := p.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
			t.Errorf("Content-Type %q, want an HTML page", ct)
		}
	}

	t.Run("LoginWithoutToken", func(t *testing.T) {
		t.Parallel()
		c := b.NewAdminClient(t)
		c.Get("/admin/login")
		refused(t, c.Post("/admin/login", url.Values{"email": {ten.OwnerEmail}, "password": {ten.Password}}))
		if c.SignedIn() {
			t.Error("signed in without a CSRF token")
		}
	})

	t.Run("LoginWithForgedToken", func(t *testing.T) {
		t.Parallel()
		c := b.NewAdminClient(t)
		c.Get("/admin/login")
		refused(t, c.Post("/admin/login", url.Values{"_csrf": {"forged"}, "email": {ten.OwnerEmail}, "password": {ten.Password}}))
	})

	t.Run("LoginWithoutCookie", func(t *testing.T) {
		t.Parallel()
		// A token read from a page, sent from a client that never got its cookie.
		token := b.NewAdminClient(t).Get("/admin/login").Doc.Find(`input[name="_csrf"]`).AttrOr("value", "")
		refused(t, b.NewAdminClient(t).Post("/admin/login", url.Values{"_csrf": {token}, "email": {ten.OwnerEmail}, "password": {ten.Password}}))
	})

	t.Run("SettingsWithoutToken", func(t *testing.T) {
		t.Parallel()
		c := b.NewAdminClient(t)
		c.SignIn(ten)
		form := c.SettingsForm()
		form.Del("_csrf")
		form.Set("botTitle", "Forged title")
		refused(t, c.Post("/admin/settings", form))
		if got := b.TenantNow(t, ten.Slug); webtest.StrOrEmpty(got.BotTitle) == "Forged title" {
			t.Error("saved without a CSRF token")
		}
	})

	t.Run("CrossSiteRequest", func(t *testing.T) {
		t.Parallel()
		c := b.NewAdminClient(t)
		c.SignIn(ten)
		form := c.SettingsForm() // with a valid token: the browser says the request is cross-site
		form.Set("botTitle", "Cross-site title")
		refused(t, c.Do("POST", "/admin/settings", form, map[string]string{"Sec-Fetch-Site": "cross-site"}))
		if got := b.TenantNow(t, ten.Slug); webtest.StrOrEmpty(got.BotTitle) == "Cross-site title" {
			t.Error("saved from another site")
		}
	})
}

func TestAdminSession(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	ten := b.OwnedTenant(t, "starter")

	for _, tc := range []struct{ name, method, path, want string }{
		{"Overview", "GET", "/admin", "/admin/login"},
		{"Settings", "GET", "/admin/settings", "/admin/login?next=%2Fadmin%2Fsettings"},
		{"SaveSettings", "POST", "/admin/settings", "/admin/login"},
		{"RevokeToken", "POST", "/admin/tokens/x/revoke", "/admin/login"},
	} {
		t.Run("SignedOut"+tc.name, func(t *testing.T) {
			t.Parallel()
			c := b.NewAdminClient(t)
			c.Get("/admin/login")
			var p webtest.AdminPage
			if tc.method == "GET" {
				p = c.Get(tc.path)
			} else {
				p = c.Submit(tc.path, url.Values{})
			}
			if p.Status != http.StatusSeeOther || p.Location() != tc.want {
				t.Errorf("%s %s: %d to %q, want 303 to %q", tc.method, tc.path, p.Status, p.Location(), tc.want)
			}
		})
	}

	t.Run("SignedOutHTMX", func(t *testing.T) {
		t.Parallel()
		c := b.NewAdminClient(t)
		p := c.Do("GET", "/admin/tokens", nil, map[string]string{"HX-Request": "true"})
		if p.Status != http.StatusUnauthorized || p.Header.Get("HX-Redirect") != "/admin/login?next=%2Fadmin%2Ftokens" {
			t.Errorf("htmx request: %d, HX-Redirect %q", p.Status, p.Header.Get("HX-Redirect"))
		}
	})

	t.Run("Logout", func(t *testing.T) {
		t.Parallel()
		c := b.NewAdminClient(t)
		c.SignIn(ten)
		var old *http.Cookie
		u, _ := url.Parse(b.TS.URL + "/admin")
		for _, ck := range c.HTTP.Jar.Cookies(u) {
			if ck.Name == "parley_session" {
				old = ck
			}
		}
		if old == nil {
			t.Fatal("no session cookie after signing in")
		}
		c.Get("/admin")
		if p := c.Submit("/admin/logout", nil); p.Status != http.StatusSeeOther || p.Location() != "/admin/login" {
			t.Fatalf("logout: %d to %q", p.Status, p.Location())
		}
		if c.SignedIn() {
			t.Error("still signed in after logout")
		}
		// The session is gone on the server, not only from the cookie jar.
		replay := b.NewAdminClient(t)
		replay.HTTP.Jar.SetCookies(u, []*http.Cookie{{Name: old.Name, Value: old.Value, Path: "/admin"}})
		if replay.SignedIn() {
			t.Error("the session cookie of a signed-out session still works")
		}
	})

	// Issue 14, finding 7: the sessions table held the cookies' values.
	t.Run("StoredHashed", func(t *testing.T) {
		t.Parallel()
		c := b.NewAdminClient(t)
		sess := c.Login(ten.OwnerEmail, ten.Password, "").Cookie("parley_session")
		if sess == nil || sess.Value == "" {
			t.Fatal("no session cookie after signing in")
		}
		if !c.SignedIn() {
			t.Fatal("the session does not reach the dashboard")
		}
		var plain, hashed int
		if err := b.DB.Pool().QueryRow(t.Context(), `SELECT count(*) FILTER (WHERE token = $1), count(*) FILTER (WHERE token = $2) FROM sessions`,
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
		rows, err := b.DB.Pool().Query(t.Context(), `SELECT token FROM sessions`)
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
		u, _ := url.Parse(b.TS.URL + "/admin")
		for _, tok := range tokens {
			thief := b.NewAdminClient(t)
			thief.HTTP.Jar.SetCookies(u, []*http.Cookie{{Name: "parley_session", Value: tok, Path: "/admin"}})
			if thief.SignedIn() {
				t.Fatalf("a token read from the sessions table signs in as a cookie")
			}
		}
	})

	t.Run("CookieFlags", func(t *testing.T) {
		t.Parallel()
		c := b.NewAdminClient(t)
		csrf := c.Get("/admin/login").Cookie("parley_csrf")
		if csrf == nil || !csrf.HttpOnly || csrf.SameSite != http.SameSiteStrictMode || csrf.Path != "/admin" || csrf.Secure {
			t.Errorf("CSRF cookie = %+v; want HttpOnly, SameSite=Strict, Path=/admin, not Secure over http", csrf)
		}
		sess := c.Login(ten.OwnerEmail, ten.Password, "").Cookie("parley_session")
		if sess == nil || !sess.HttpOnly || sess.SameSite != http.SameSiteLaxMode || sess.Path != "/admin" || sess.Secure {
			t.Errorf("session cookie = %+v; want HttpOnly, SameSite=Lax, Path=/admin, not Secure over http", sess)
		}
	})

	t.Run("SecureCookiesBehindHTTPS", func(t *testing.T) {
		t.Parallel()
		bs := webtest.SetupAdmin(t, map[string]string{"PARLEY_BASE_URL": "https://parley.example"})
		tn := bs.OwnedTenant(t, "starter")
		// The jar keeps Secure cookies from plain http, so they are sent by hand.
		c := bs.NewAdminClient(t)
		c.HTTP.Jar = nil
		p := c.Get("/admin/login")
		csrf := p.Cookie("parley_csrf")
		if csrf == nil || !csrf.Secure || !csrf.HttpOnly {
			t.Fatalf("CSRF cookie = %+v; want Secure and HttpOnly", csrf)
		}
		p = c.Do("POST", "/admin/login", url.Values{"_csrf": {c.CSRF}, "email": {tn.OwnerEmail}, "password": {tn.Password}},
			map[string]string{"Cookie": csrf.Name + "=" + csrf.Value})
		sess := p.Cookie("parley_session")
		if p.Status != http.StatusSeeOther || sess == nil || !sess.Secure || !sess.HttpOnly || sess.SameSite != http.SameSiteLaxMode {
			t.Errorf("login %d, session cookie = %+v; want Secure, HttpOnly, SameSite=Lax", p.Status, sess)
		}
	})
}

func TestAdminSwitchTenant(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	a, second, stranger := b.OwnedTenant(t, "starter"), b.NewTenant(t, "builder"), b.OwnedTenant(t, "starter")
	if err := b.DB.AddOwner(context.Background(), second.ID, a.OwnerEmail, "", false); err != nil {
		t.Fatal(err)
	}
	c := b.NewAdminClient(t)
	c.SignIn(a)

	current := func(c *webtest.AdminClient) string {
		t := c.T
		t.Helper()
		p := c.Get("/admin/settings")
		opts := p.Doc.Find("#tenant-switch option")
		if opts.Length() != 2 {
			t.Fatalf("tenant switcher has %d options, want 2", opts.Length())
		}
		sel := p.Doc.Find("#tenant-switch option[selected]")
		if sel.Length() != 1 {
			t.Fatalf("%d tenants selected in the switcher", sel.Length())
		}
		if name := p.Doc.Find("#name").AttrOr("value", ""); name != "Tenant "+sel.AttrOr("value", "") {
			t.Fatalf("settings show tenant %q while the switcher says %q", name, sel.AttrOr("value", ""))
		}
		return sel.AttrOr("value", "")
	}
	switchTo := func(c *webtest.AdminClient, slug string) webtest.AdminPage {
		c.T.Helper()
		c.Get("/admin")
		return c.Submit("/admin/tenant", url.Values{"tenant": {slug}})
	}

	for _, slug := range []string{second.Slug, a.Slug, second.Slug} {
		if p := switchTo(c, slug); p.Status != http.StatusSeeOther || p.Location() != "/admin" {
			t.Fatalf("switching to %s: %d to %q", slug, p.Status, p.Location())
		}
		if got := current(c); got != slug {
			t.Fatalf("after switching to %s the dashboard shows %s", slug, got)
		}
	}

	t.Run("SaveGoesToCurrentTenant", func(t *testing.T) {
		c := c.As(t)
		form := c.SettingsForm()
		form.Set("botName", "Bot of the second")
		if p := c.Submit("/admin/settings", form); p.Status != http.StatusSeeOther {
			t.Fatalf("save: %d", p.Status)
		}
		if got := webtest.StrOrEmpty(b.TenantNow(t, second.Slug).BotName); got != "Bot of the second" {
			t.Errorf("second tenant's botName = %q", got)
		}
		if got := webtest.StrOrEmpty(b.TenantNow(t, a.Slug).BotName); got == "Bot of the second" {
			t.Error("the save reached the other tenant too")
		}
	})

	t.Run("NotOwned", func(t *testing.T) {
		c := c.As(t)
		p := switchTo(c, stranger.Slug)
		if p.Status != http.StatusNotFound || !strings.Contains(p.Text("body"), "You do not administer that tenant.") {
			t.Errorf("switching to a stranger's tenant: %d %q", p.Status, p.Text("body"))
		}
		if got := current(c); got != second.Slug {
			t.Errorf("after a refused switch the dashboard shows %s", got)
		}
	})

	t.Run("OneTenantNoSwitcher", func(t *testing.T) {
		c := b.NewAdminClient(t)
		c.SignIn(stranger)
		p := c.Get("/admin")
		if p.Doc.Find("#tenant-switch").Length() != 0 || p.Text(".tenant code") != stranger.Slug {
			t.Errorf("single-tenant sidebar: %q", p.Text(".tenant"))
		}
	})
}

func TestAdminTokens(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	mine, theirs := b.OwnedTenant(t, "starter"), b.NewTenant(t, "starter")
	c := b.NewAdminClient(t)
	c.SignIn(mine)

	tokenID := func(t *testing.T, tenantID string) string {
		t.Helper()
		ts, err := b.DB.ListTokens(context.Background(), tenantID)
		if err != nil || len(ts) == 0 {
			t.Fatalf("tokens: %v %v", ts, err)
		}
		return ts[0].ID
	}
	tokenCount := func(t *testing.T) int {
		t.Helper()
		ts, err := b.DB.ListTokens(context.Background(), mine.ID)
		if err != nil {
			t.Fatal(err)
		}
		return len(ts)
	}

	t.Run("RevokeOtherTenantsToken", func(t *testing.T) {
		c := c.As(t)
		id := tokenID(t, theirs.ID)
		c.Get("/admin/tokens")
		if p := c.Submit("/admin/tokens/"+id+"/revoke", nil); p.Status != http.StatusNotFound {
			t.Errorf("revoking another tenant's token: %d", p.Status)
		}
		p := c.Do("POST", "/admin/tokens/"+id+"/revoke", url.Values{"_csrf": {c.CSRF}}, map[string]string{"HX-Request": "true"})
		if p.Status != http.StatusNotFound {
			t.Errorf("revoking another tenant's token with htmx: %d", p.Status)
		}
		if status, body := b.Do(t, "GET", "/tenants/"+theirs.Slug, theirs.Token, nil); status != http.StatusOK {
			t.Errorf("their token after the attempts: %d %v", status, body)
		}
	})

	t.Run("RevokeUnknownID", func(t *testing.T) {
		c := c.As(t)
		c.Get("/admin/tokens")
		for _, id := range []string{"not-a-uuid", "00000000-0000-0000-0000-000000000000"} {
			if p := c.Submit("/admin/tokens/"+id+"/revoke", nil); p.Status != http.StatusNotFound {
				t.Errorf("revoking %q: %d", id, p.Status)
			}
		}
	})

	t.Run("RevokeWithoutJavaScript", func(t *testing.T) {
		c := c.As(t)
		tok := b.Token(t, mine.ID, auth.ScopeSettingsRead)
		ts, _ := b.DB.ListTokens(context.Background(), mine.ID)
		id := ts[0].ID // newest first
		c.Get("/admin/tokens")
		if p := c.Submit("/admin/tokens/"+id+"/revoke", nil); p.Status != http.StatusSeeOther || p.Location() != "/admin/tokens" {
			t.Fatalf("revoke: %d to %q", p.Status, p.Location())
		}
		p := c.Get("/admin/tokens")
		if p.Text(".flash.ok") != "Token revoked." || p.Text("#token-"+id+" .badge.revoked") != "revoked" {
			t.Errorf("flash %q, row %q", p.Text(".flash.ok"), p.Text("#token-"+id))
		}
		if status, _ := b.Do(t, "GET", "/tenants/"+mine.Slug, tok, nil); status != http.StatusUnauthorized {
			t.Errorf("revoked token: %d", status)
		}
		if status, _ := b.Do(t, "GET", "/tenants/"+mine.Slug, mine.Token, nil); status != http.StatusOK {
			t.Errorf("the tenant's other token: %d", status)
		}
	})

	t.Run("CreateShownOnce", func(t *testing.T) {
		c := c.As(t)
		c.Get("/admin/tokens")
		p := c.Submit("/admin/tokens", url.Values{"name": {"Nightly export"}, "scopes": {"stats:read"}})
		if p.Status != http.StatusSeeOther || p.Location() != "/admin/tokens" {
			t.Fatalf("create: %d to %q", p.Status, p.Location())
		}
		tok := c.Get("/admin/tokens").Text("#new-token")
		if status, _ := b.Do(t, "GET", "/tenants/"+mine.Slug, tok, nil); status != http.StatusForbidden {
			t.Errorf("a stats:read token on settings: %d, want 403", status)
		}
		if again := c.Get("/admin/tokens"); again.Doc.Find("#new-token").Length() != 0 || strings.Contains(again.Body, tok) {
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
			c := c.As(t)
			before := tokenCount(t)
			c.Get("/admin/tokens")
			p := c.Submit("/admin/tokens", tc.form)
			if p.Status != http.StatusUnprocessableEntity {
				t.Errorf("status %d, want 422", p.Status)
			}
			for field, msg := range tc.errs {
				if got := p.Text("#err-" + field); !strings.HasPrefix(got, msg) {
					t.Errorf("%s error = %q, want %q", field, got, msg)
				}
			}
			for _, s := range tc.form["scopes"] {
				if _, ok := p.Doc.Find(`input[name=scopes][value="` + s + `"]`).Attr("checked"); s != "root:all" && !ok {
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
		c := c.As(t)
		c.Get("/admin/tokens")
		if p := c.Submit("/admin/tokens", url.Values{"name": {strings.Repeat("é", 100)}, "scopes": {"stats:read"}}); p.Status != http.StatusSeeOther {
			t.Errorf("status %d: %s", p.Status, p.Text("#err-name"))
		}
	})
}

func TestAdminSettings(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)

	stored := func(tn parley.Tenant, field string) string {
		switch field {
		case "botName":
			return webtest.StrOrEmpty(tn.BotName)
		case "teaserText":
			return webtest.StrOrEmpty(tn.TeaserText)
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
		return webtest.StrOrEmpty(tn.SecondaryColor)
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
			ten := b.OwnedTenant(t, "starter")
			c := b.NewAdminClient(t)
			c.SignIn(ten)
			before := b.TenantNow(t, ten.Slug)
			form := c.SettingsFormAt(tc.page)
			form.Set(tc.field, tc.value)
			co := companion[tc.page]
			form.Set(co.field, co.value)
			p := c.Submit(tc.page, form)
			after := b.TenantNow(t, ten.Slug)

			if tc.err == "" {
				if p.Status != http.StatusSeeOther || p.Location() != tc.page {
					t.Fatalf("status %d to %q: %s", p.Status, p.Location(), p.Text(".field-error"))
				}
				if got := stored(after, tc.field); got != tc.value {
					t.Errorf("stored %s = %q, want %q", tc.field, got, tc.value)
				}
				if got := companionStored(after, tc.page); got != co.value {
					t.Errorf("stored %s = %q", co.field, got)
				}
				if p := c.Get(tc.page); p.Text(".flash.ok") != "Settings saved." || p.Doc.Find("#"+tc.field).AttrOr("value", "") != tc.value {
					t.Errorf("after saving: flash %q, %s shown %q", p.Text(".flash.ok"), tc.field, p.Doc.Find("#"+tc.field).AttrOr("value", ""))
				}
				return
			}
			if p.Status != http.StatusUnprocessableEntity {
				t.Errorf("status %d, want 422", p.Status)
			}
			if got := p.Text("#err-" + tc.field); got != tc.err {
				t.Errorf("error of %s = %q, want %q", tc.field, got, tc.err)
			}
			if p.Doc.Find("#form-errors").Length() != 1 || p.Doc.Find(".field-error").Length() != 1 {
				t.Errorf("want the form banner and one field error, got %q", p.Text(".field-error"))
			}
			in := p.Doc.Find("#" + tc.field)
			if in.AttrOr("value", "") != tc.value || in.AttrOr("aria-invalid", "") != "true" {
				t.Errorf("%s field: value %q, aria-invalid %q; want what was typed, marked invalid",
					tc.field, in.AttrOr("value", ""), in.AttrOr("aria-invalid", ""))
			}
			if p.Doc.Find("#"+co.field).AttrOr("value", "") != co.value {
				t.Error("the other fields lost what was typed")
			}
			if companionStored(after, tc.page) != companionStored(before, tc.page) || stored(after, tc.field) != stored(before, tc.field) || !after.UpdatedAt.Equal(before.UpdatedAt) {
				t.Errorf("a refused form was saved: %s %q, %s %q", co.field, companionStored(after, tc.page), tc.field, stored(after, tc.field))
			}
		})
	}

	t.Run("UnchangedFormKeepsEverything", func(t *testing.T) {
		t.Parallel()
		ten := b.OwnedTenant(t, "starter")
		ctx := context.Background()
		// Start from a tenant with every optional field set, so that a field the
		// form drops or mangles shows.
		_, err := b.DB.UpdateTenant(ctx, ten.ID, db.TenantPatch{
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
		before := b.TenantNow(t, ten.Slug)
		c := b.NewAdminClient(t)
		c.SignIn(ten)
		for _, page := range settingsPages {
			if p := c.Submit(page, c.SettingsFormAt(page)); p.Status != http.StatusSeeOther {
				t.Fatalf("%s: status %d: %s", page, p.Status, p.Text(".field-error"))
			}
		}
		after := b.TenantNow(t, ten.Slug)
		if fmt.Sprintf("%+v", settingsOf(before)) != fmt.Sprintf("%+v", settingsOf(after)) {
			t.Errorf("saving the form unchanged changed the tenant:\nbefore %+v\nafter  %+v", settingsOf(before), settingsOf(after))
		}
	})
}

// settingsOf is what the settings page edits, dereferenced for comparison.
func settingsOf(tn parley.Tenant) []any {
	return []any{tn.Name, webtest.StrOrEmpty(tn.BotName), webtest.StrOrEmpty(tn.BotTitle), webtest.StrOrEmpty(tn.BotLore), tn.BotTone,
		tn.UseTutoiement, tn.AllowEmojis, tn.PrimaryColor, webtest.StrOrEmpty(tn.SecondaryColor), tn.ShowAIBadge,
		webtest.StrOrEmpty(tn.BotAvatar), tn.AvatarType, webtest.StrOrEmpty(tn.TeaserText), tn.AutoOpen, tn.AutoOpenDelay,
		tn.BubblePulse, tn.AllowedDomains, tn.ContentPolicy}
}

// TestAdminLoginChallenge: with the operator's challenge keys configured,
// an address that has failed repeatedly must solve the bot challenge to
// sign in; an address that has not failed never sees it.
func TestAdminLoginChallenge(t *testing.T) {
	t.Parallel()
	const secret = "operator-challenge-secret"
	provider := "https://challenge.example"
	verify := webtest.NewSiteverify(t, secret)
	b := webtest.SetupAdmin(t, map[string]string{"PARLEY_CAPTCHA_VERIFY_URL": verify.URL,
		"PARLEY_CAPTCHA_SCRIPT_URL":       provider + "/turnstile/v0/api.js?render=explicit",
		"PARLEY_ADMIN_CAPTCHA_SITE_KEY":   "0x4AAA-operator-site",
		"PARLEY_ADMIN_CAPTCHA_SECRET_KEY": secret})
	webtest.ManualClock(b)
	ten := b.OwnedTenant(t, "starter")
	const challengeAfter = 3 // failures of an address, as handlers.loginChallengeAfter
	challenged := func(t *testing.T, p webtest.AdminPage) bool {
		t.Helper()
		box := p.Doc.Find("#login-challenge")
		if box.Length() == 0 {
			return false
		}
		if box.AttrOr("data-sitekey", "") != "0x4AAA-operator-site" ||
			p.Doc.Find(`script[src="`+provider+`/turnstile/v0/api.js?render=explicit"]`).Length() != 1 ||
			p.Doc.Find(`script[src="`+static.Path("login-challenge.js")+`"]`).Length() != 1 ||
			!strings.Contains(p.Header.Get("Content-Security-Policy"), "script-src 'self' "+provider) ||
			!strings.Contains(p.Header.Get("Content-Security-Policy"), "frame-src "+provider) {
			t.Errorf("challenge without its site key, scripts or CSP: %s; CSP %q", box.Parent().Text(), p.Header.Get("Content-Security-Policy"))
		}
		return true
	}
	signIn := func(c *webtest.AdminClient, token string) webtest.AdminPage {
		c.Get("/admin/login")
		return c.Submit("/admin/login", url.Values{"email": {ten.OwnerEmail}, "password": {ten.Password}, "challengeToken": {token}})
	}

	a := b.NewAdminClient(t)
	if challenged(t, a.Get("/admin/login")) {
		t.Fatal("the challenge shown to an address that has not failed")
	}
	for i := range challengeAfter {
		p := a.Login(fmt.Sprintf("guess%d-%s@example.test", i, ten.Slug), "wrong-password", "")
		if p.Status != http.StatusUnauthorized {
			t.Fatalf("failure %d: %d %s", i+1, p.Status, p.Text("#login-error"))
		}
		if got := challenged(t, p); got != (i+1 == challengeAfter) {
			t.Fatalf("after %d failures the challenge shown: %v", i+1, got)
		}
	}
	if !challenged(t, a.Get("/admin/login")) {
		t.Fatal("no challenge on the sign-in page after repeated failures")
	}
	// A fresh address signs in with no challenge.
	if p := signIn(b.NewAdminClient(t), ""); p.Status != http.StatusSeeOther || p.Location() != "/admin" {
		t.Fatalf("fresh address: %d %s", p.Status, p.Text("#login-error"))
	}
	if n := len(verify.Seen()); n != 0 {
		t.Fatalf("%d siteverify calls before any challenge was answered", n)
	}
	// The failing address: the right password is not enough.
	p := signIn(a, "")
	if p.Status != http.StatusForbidden || p.Text("#login-error") != "Complete the check that you are not a robot, then sign in." || !challenged(t, p) {
		t.Fatalf("without a token: %d %q", p.Status, p.Text("#login-error"))
	}
	verify.Refuse.Store(true)
	p = signIn(a, "refused-token")
	if p.Status != http.StatusForbidden || p.Text("#login-error") != "The check that you are not a robot failed: do it again, then sign in." {
		t.Fatalf("with a refused token: %d %q", p.Status, p.Text("#login-error"))
	}
	verify.Refuse.Store(false)
	if p := signIn(a, "good-token"); p.Status != http.StatusSeeOther || p.Location() != "/admin" {
		t.Fatalf("with a solved challenge: %d %q", p.Status, p.Text("#login-error"))
	}
	if got := verify.Seen(); !slices.Equal(got, []string{"refused-token", "good-token"}) {
		t.Errorf("siteverify asked about %q", got)
	}

	t.Run("VerificationUnavailable", func(t *testing.T) {
		down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "down", http.StatusServiceUnavailable)
		}))
		t.Cleanup(down.Close)
		b.Srv.Base.Captcha.URL = down.URL
		c := b.NewAdminClient(t)
		for i := range challengeAfter {
			c.Login(fmt.Sprintf("other%d-%s@example.test", i, ten.Slug), "wrong-password", "")
		}
		p := signIn(c, "some-token")
		if p.Status != http.StatusForbidden || p.Text("#login-error") != "The check that you are not a robot could not be verified right now: try again shortly." {
			t.Errorf("siteverify down: %d %q", p.Status, p.Text("#login-error"))
		}
	})
}
