package web

import (
	"context"
	"crypto/sha256"
	"io"
	"log/slog"
	"mime"
	"mime/quotedprintable"
	"net/http"
	netmail "net/mail"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/parley/parley/db"
	"github.com/parley/parley/jobs"
	"github.com/parley/parley/mail/mailtest"
)

// resetHarness is a dashboard that sends email: a test SMTP server that
// speaks the real protocol, the server's own sender (net/smtp) pointed at
// it, and a River client working the mail queue.
type resetHarness struct {
	b    *bundle
	smtp *mailtest.Server
	// skew moves the handlers' clock (and the jobs'): the expiry test sets it.
	skew atomic.Int64
}

// setupReset starts a resetHarness. Only one runs per test binary: two
// River clients on the mail queue of one database would work each other's
// jobs and send to each other's SMTP server.
func setupReset(t *testing.T) *resetHarness {
	t.Helper()
	h := &resetHarness{smtp: mailtest.Start(t, mailtest.Options{Username: "parley", Password: "smtp secret"})}
	h.b = setupAdmin(t, map[string]string{"PARLEY_SMTP_URL": h.smtp.URL("Parley <no-reply@parley.test>")})
	clock := h.b.srv.Base.Now
	h.b.srv.Base.Now = func() time.Time { return clock().Add(time.Duration(h.skew.Load())) }
	if h.b.srv.Mail == nil || !h.b.srv.Base.ResetByEmail {
		t.Fatal("PARLEY_SMTP_URL did not configure the server's mail")
	}
	// The production worker, on a client that works nothing but mail, so
	// that the other tests' jobs in this database are left alone.
	workers := river.NewWorkers()
	river.AddWorker(workers, &jobs.PasswordResetWorker{DB: h.b.db,
		Mail: jobs.Mail{Sender: h.b.srv.Mail, BaseURL: h.b.srv.Config.BaseURL, Now: h.b.srv.Base.Clock}})
	client, err := river.NewClient(riverpgxv5.New(h.b.db.Pool()), &river.Config{
		Logger:            slog.New(slog.NewTextHandler(io.Discard, nil)),
		Queues:            map[string]river.QueueConfig{jobs.MailQueue: {MaxWorkers: 2}},
		Workers:           workers,
		FetchCooldown:     db.JobFetchCooldown,
		FetchPollInterval: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.Stop(ctx)
	})
	return h
}

var resetLink = regexp.MustCompile(`(https?://[^/\s]+)(/admin/reset-password\?token=([A-Za-z0-9_-]+))`)

// resetMail waits for the n-th reset email to addr, checks that it is a
// well-formed message (net/mail parses it; Date, Message-ID, From, To,
// Subject, quoted-printable UTF-8 text) and returns its link's path and
// token.
func (h *resetHarness) resetMail(t *testing.T, addr string, n int) (path, token string) {
	t.Helper()
	got := h.smtp.Wait(t, addr, n, 20*time.Second)
	if got.From != "no-reply@parley.test" {
		t.Errorf("envelope sender %q", got.From)
	}
	m, err := netmail.ReadMessage(strings.NewReader(string(got.Data)))
	if err != nil {
		t.Fatalf("the email does not parse: %v\n%s", err, got.Data)
	}
	if _, err := m.Header.Date(); err != nil {
		t.Errorf("Date: %v", err)
	}
	if id := m.Header.Get("Message-ID"); !strings.HasSuffix(id, "@parley.test>") {
		t.Errorf("Message-ID %q", id)
	}
	if from, err := m.Header.AddressList("From"); err != nil || len(from) != 1 || from[0].Address != "no-reply@parley.test" || from[0].Name != "Parley" {
		t.Errorf("From %v (%v)", from, err)
	}
	if to, err := m.Header.AddressList("To"); err != nil || len(to) != 1 || !strings.EqualFold(to[0].Address, addr) {
		t.Errorf("To %v (%v)", to, err)
	}
	if subj, _ := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject")); subj != "Reset your Parley password" {
		t.Errorf("Subject %q", subj)
	}
	if ct, cte := m.Header.Get("Content-Type"), m.Header.Get("Content-Transfer-Encoding"); ct != "text/plain; charset=utf-8" || cte != "quoted-printable" {
		t.Errorf("Content-Type %q, Content-Transfer-Encoding %q", ct, cte)
	}
	body, err := io.ReadAll(quotedprintable.NewReader(m.Body))
	if err != nil {
		t.Fatal(err)
	}
	link := resetLink.FindStringSubmatch(string(body))
	if link == nil {
		t.Fatalf("no reset link in the email:\n%s", body)
	}
	if link[1] != h.b.srv.Config.BaseURL {
		t.Errorf("the link starts %s, want the base URL %s", link[1], h.b.srv.Config.BaseURL)
	}
	if !strings.Contains(string(body), "within the hour") {
		t.Errorf("the email does not say how long the link works:\n%s", body)
	}
	return link[2], link[3]
}

// askReset submits the forgot-password form as c and returns the answer.
func askReset(c *adminClient, email string) adminPage {
	c.t.Helper()
	c.get("/admin/forgot-password")
	return c.submit("/admin/forgot-password", url.Values{"email": {email}})
}

// resetJobsDone waits until River has worked every reset job for email.
func (h *resetHarness) resetJobsDone(t *testing.T, email string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var pending, done int
		err := h.b.db.Pool().QueryRow(context.Background(), `SELECT count(*) FILTER (WHERE state <> 'completed'), count(*) FILTER (WHERE state = 'completed')
			FROM river_job WHERE kind = 'password_reset_email' AND args->>'email' = $1`, email).Scan(&pending, &done)
		if err != nil {
			t.Fatal(err)
		}
		if pending == 0 && done > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("reset jobs for %s: %d not completed after 20 s", email, pending)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (b *bundle) passwordHash(t *testing.T, email string) string {
	t.Helper()
	u, err := b.db.UserByEmail(context.Background(), email)
	if err != nil {
		t.Fatal(err)
	}
	return u.PasswordHash
}

// TestAdminPasswordReset drives the emailed reset link end to end: over
// HTTP, then in Chromium. One River client runs for all of it (see
// setupReset), so the subtests run one after another.
func TestAdminPasswordReset(t *testing.T) {
	t.Parallel()
	h := setupReset(t)
	b := h.b
	const newPassword = "a brand new password"

	t.Run("LinkResetsPassword", func(t *testing.T) {
		ten, other := b.ownedTenant(t, "starter"), b.ownedTenant(t, "starter")
		// Two sessions of the owner (another browser) and one of another user.
		elsewhere, bystander := b.newAdminClient(t), b.newAdminClient(t)
		elsewhere.signIn(ten)
		bystander.signIn(other)

		c := b.newAdminClient(t)
		if href, _ := c.get("/admin/login").doc.Find(`a[href="/admin/forgot-password"]`).Attr("href"); href == "" {
			t.Fatal("the sign-in page has no Forgot your password? link")
		}
		page := c.get("/admin/forgot-password")
		if page.status != http.StatusOK || page.doc.Find(`form[action="/admin/forgot-password"] input#email`).Length() != 1 || page.text("#no-email") != "" {
			t.Fatalf("forgot-password page: %d\n%s", page.status, page.body)
		}
		if p := askReset(c, strings.ToUpper(ten.OwnerEmail)); p.status != http.StatusSeeOther || p.location() != "/admin/forgot-password" {
			t.Fatalf("asking for a link: %d to %q", p.status, p.location())
		}
		sent := c.get("/admin/forgot-password").text("#reset-sent")
		if !strings.Contains(sent, "If an account exists for "+strings.ToUpper(ten.OwnerEmail)+", we sent it a link") {
			t.Errorf("answer %q", sent)
		}
		path, token := h.resetMail(t, ten.OwnerEmail, 1)

		// Only the token's SHA-256 is stored.
		sum := sha256.Sum256([]byte(token))
		var byHash, byToken int
		mustStep(t, "reading the stored link", b.db.Pool().QueryRow(context.Background(),
			`SELECT count(*) FILTER (WHERE token_hash = $1), count(*) FILTER (WHERE token_hash = $2 OR position($3::bytea IN token_hash) > 0)
			FROM password_resets`, sum[:], []byte(token), []byte(token)).Scan(&byHash, &byToken))
		if byHash != 1 || byToken != 0 {
			t.Errorf("%d rows by the token's hash, %d holding the token itself", byHash, byToken)
		}

		form := c.get(path)
		if form.status != http.StatusOK || form.doc.Find(`form[action="/admin/reset-password"] input#password`).Length() != 1 {
			t.Fatalf("reset page: %d\n%s", form.status, form.body)
		}
		if rp := form.header.Get("Referrer-Policy"); rp != "no-referrer" {
			t.Errorf("the page holding the token in its address has Referrer-Policy %q", rp)
		}
		for _, tc := range []struct{ name, password, confirm, field string }{
			{"TooShort", "short", "short", "password"},
			{"TooLong", strings.Repeat("é", 40), strings.Repeat("é", 40), "password"},
			{"Mismatch", newPassword, newPassword + "!", "confirm"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				p := c.as(t).submit("/admin/reset-password", url.Values{"token": {token}, "password": {tc.password}, "confirm": {tc.confirm}})
				if p.status != http.StatusUnprocessableEntity || p.text("#err-"+tc.field) == "" {
					t.Fatalf("%d, error %q\n%s", p.status, p.text("#err-"+tc.field), p.body)
				}
				if got := p.doc.Find("#"+tc.field).AttrOr("aria-describedby", ""); !strings.Contains(got, "err-"+tc.field) {
					t.Errorf("the field is not tied to its error: aria-describedby=%q", got)
				}
			})
		}
		if h := b.passwordHash(t, ten.OwnerEmail); !b.srv.Base.Passwords.Check(h, ten.Password) {
			t.Fatal("a refused new password changed the password")
		}

		done := c.submit("/admin/reset-password", url.Values{"token": {token}, "password": {newPassword}, "confirm": {newPassword}})
		if done.status != http.StatusSeeOther || done.location() != "/admin/login" {
			t.Fatalf("setting the password: %d to %q\n%s", done.status, done.location(), done.body)
		}
		if notice := c.get("/admin/login").text("#login-notice"); notice != "Your password was changed. Sign in with the new one." {
			t.Errorf("sign-in page notice %q", notice)
		}
		if p := c.login(ten.OwnerEmail, ten.Password, ""); p.status != http.StatusUnauthorized {
			t.Errorf("the old password still signs in: %d", p.status)
		}
		if p := c.login(ten.OwnerEmail, newPassword, ""); p.status != http.StatusSeeOther || p.location() != "/admin" {
			t.Errorf("the new password does not sign in: %d to %q", p.status, p.location())
		}
		if elsewhere.signedIn() {
			t.Error("the owner's other session is still signed in after the reset")
		}
		if !bystander.signedIn() {
			t.Error("another user's session ended")
		}

		t.Run("UsedOnce", func(t *testing.T) {
			again := b.newAdminClient(t)
			p := again.get(path)
			if p.status != http.StatusGone || !strings.Contains(p.text("#reset-problem"), "already used") {
				t.Fatalf("reused link: %d %q", p.status, p.text("#reset-problem"))
			}
			if href, _ := p.doc.Find(`a[href="/admin/forgot-password"]`).Attr("href"); href == "" {
				t.Error("the page does not offer a new link")
			}
			before := b.passwordHash(t, ten.OwnerEmail)
			again.get("/admin/login") // the page has no form, so no CSRF token
			p = again.submit("/admin/reset-password", url.Values{"token": {token}, "password": {"yet another password"}, "confirm": {"yet another password"}})
			if p.status != http.StatusGone || b.passwordHash(t, ten.OwnerEmail) != before {
				t.Errorf("reusing the link: %d, password changed: %v", p.status, b.passwordHash(t, ten.OwnerEmail) != before)
			}
		})
	})

	t.Run("Expired", func(t *testing.T) {
		ten := b.ownedTenant(t, "starter")
		c := b.newAdminClient(t)
		askReset(c, ten.OwnerEmail)
		path, token := h.resetMail(t, ten.OwnerEmail, 1)
		if p := c.get(path); p.status != http.StatusOK {
			t.Fatalf("fresh link: %d", p.status)
		}
		h.skew.Store(int64(time.Hour + time.Minute))
		defer h.skew.Store(0)
		p := c.get(path)
		if p.status != http.StatusGone || !strings.Contains(p.text("#reset-problem"), "expired") {
			t.Fatalf("link after an hour: %d %q", p.status, p.text("#reset-problem"))
		}
		c.get("/admin/login") // the page has no form, so no CSRF token
		p = c.submit("/admin/reset-password", url.Values{"token": {token}, "password": {newPassword}, "confirm": {newPassword}})
		if p.status != http.StatusGone || !b.srv.Base.Passwords.Check(b.passwordHash(t, ten.OwnerEmail), ten.Password) {
			t.Errorf("an expired link reset the password: %d", p.status)
		}
	})

	t.Run("UnknownLink", func(t *testing.T) {
		c := b.newAdminClient(t)
		for _, path := range []string{"/admin/reset-password?token=nosuchtoken", "/admin/reset-password"} {
			p := c.get(path)
			if p.status != http.StatusNotFound || !strings.Contains(p.text("#reset-problem"), "not one we sent") {
				t.Errorf("%s: %d %q", path, p.status, p.text("#reset-problem"))
			}
		}
		c.get("/admin/login") // the page has no form, so no CSRF token
		p := c.submit("/admin/reset-password", url.Values{"token": {"nosuchtoken"}, "password": {newPassword}, "confirm": {newPassword}})
		if p.status != http.StatusNotFound {
			t.Errorf("POST with an unknown token: %d", p.status)
		}
	})

	t.Run("UnknownEmailSameAnswer", func(t *testing.T) {
		ten := b.ownedTenant(t, "starter")
		nobody := "nobody-" + ten.Slug + "@example.test"
		known, unknown := b.newAdminClient(t), b.newAdminClient(t)
		pk, pu := askReset(known, ten.OwnerEmail), askReset(unknown, nobody)
		if pk.status != pu.status || pk.location() != pu.location() {
			t.Errorf("known address: %d to %q; unknown: %d to %q", pk.status, pk.location(), pu.status, pu.location())
		}
		sk, su := known.get("/admin/forgot-password"), unknown.get("/admin/forgot-password")
		if x, y := strings.Replace(sk.text("#reset-sent"), ten.OwnerEmail, "X", 1), strings.Replace(su.text("#reset-sent"), nobody, "X", 1); x != y || x == "" {
			t.Errorf("the answers differ:\n%q\n%q", x, y)
		}
		h.resetMail(t, ten.OwnerEmail, 1)
		h.resetJobsDone(t, nobody)
		if n := len(h.smtp.To(nobody)); n != 0 {
			t.Errorf("%d emails to an address without an account", n)
		}
	})

	t.Run("InvalidEmail", func(t *testing.T) {
		c := b.newAdminClient(t)
		p := askReset(c, "not an address")
		if p.status != http.StatusUnprocessableEntity || p.text("#err-email") == "" || p.doc.Find("#email").AttrOr("aria-invalid", "") != "true" {
			t.Errorf("%d, error %q", p.status, p.text("#err-email"))
		}
	})

	t.Run("RateLimit", func(t *testing.T) {
		ten := b.ownedTenant(t, "starter")
		// Per email: three links an hour, whatever the client's address.
		for i := range 3 {
			if p := askReset(b.newAdminClient(t), ten.OwnerEmail); p.status != http.StatusSeeOther {
				t.Fatalf("request %d: %d", i+1, p.status)
			}
		}
		p := askReset(b.newAdminClient(t), ten.OwnerEmail)
		if p.status != http.StatusTooManyRequests || !strings.Contains(p.text("#reset-error"), "Wait an hour") {
			t.Errorf("fourth link for one email: %d %q", p.status, p.text("#reset-error"))
		}
		for i := 1; i <= 3; i++ {
			h.resetMail(t, ten.OwnerEmail, i)
		}
		// Per client address: ten requests an hour, whatever the emails.
		c := b.newAdminClient(t)
		for i := range 10 {
			if p := askReset(c, "someone-"+ten.Slug+"-"+string(rune('a'+i))+"@example.test"); p.status != http.StatusSeeOther {
				t.Fatalf("request %d from one address: %d", i+1, p.status)
			}
		}
		if p := askReset(c, "someone-else-"+ten.Slug+"@example.test"); p.status != http.StatusTooManyRequests {
			t.Errorf("eleventh request from one address: %d", p.status)
		}
		h.resetJobsDone(t, ten.OwnerEmail) // a fourth email, had one been enqueued, is sent by now
		if n := len(h.smtp.To(ten.OwnerEmail)); n != 3 {
			t.Errorf("%d emails, want 3", n)
		}
	})

	t.Run("RetriedWhenRefused", func(t *testing.T) {
		ten := b.ownedTenant(t, "starter")
		h.smtp.RejectNext(1)
		askReset(b.newAdminClient(t), ten.OwnerEmail)
		path, _ := h.resetMail(t, ten.OwnerEmail, 1)
		if p := b.newAdminClient(t).get(path); p.status != http.StatusOK {
			t.Errorf("the link of the retry: %d", p.status)
		}
		var attempts int
		mustStep(t, "reading the job", b.db.Pool().QueryRow(context.Background(),
			`SELECT attempt FROM river_job WHERE kind = 'password_reset_email' AND args->>'email' = $1`, ten.OwnerEmail).Scan(&attempts))
		if attempts != 2 {
			t.Errorf("%d attempts, want 2", attempts)
		}
	})

	t.Run("Browser", func(t *testing.T) {
		axe, err := os.ReadFile("../widget/testdata/axe.min.js")
		if err != nil {
			t.Fatal(err)
		}
		ten := b.ownedTenant(t, "starter")
		ctx := browserTab(t)
		ownAddress(ctx, t)
		mustStep(t, "phone size", chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)))
		mustStep(t, "opening the sign-in page", chromedp.Do(ctx, chromedp.Navigate(b.ts.URL+"/admin/login")))
		checkSignedOutPage(ctx, t, axe, "sign in")
		mustStep(t, "following Forgot your password?", chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`a[href="/admin/forgot-password"]`))))
		waitUntil(ctx, t, "the forgot-password page", `location.pathname === '/admin/forgot-password' && !!document.getElementById('email')`)
		checkSignedOutPage(ctx, t, axe, "forgot password")
		mustStep(t, "typing the email", chromedp.Do(ctx, fillField("email", ten.OwnerEmail)))
		if st := submitForm(ctx, t, `form[action="/admin/forgot-password"] button[type=submit]`); st != http.StatusOK {
			t.Fatalf("after asking for a link: %d", st)
		}
		if sent := mustRunStep(ctx, t, "answer", chromedp.Text(chromedp.ID("reset-sent"))); !strings.Contains(sent, ten.OwnerEmail) {
			t.Errorf("answer %q", sent)
		}
		checkSignedOutPage(ctx, t, axe, "link sent")

		path, _ := h.resetMail(t, ten.OwnerEmail, 1)
		mustStep(t, "opening the link", chromedp.Do(ctx, chromedp.Navigate(b.ts.URL+path)))
		waitUntil(ctx, t, "the reset page", `!!document.getElementById('confirm')`)
		checkSignedOutPage(ctx, t, axe, "new password")
		mustStep(t, "typing two different passwords", chromedp.Do(ctx, fillField("password", newPassword), fillField("confirm", "something else entirely")))
		if st := submitForm(ctx, t, `form[action="/admin/reset-password"] button[type=submit]`); st != http.StatusUnprocessableEntity {
			t.Fatalf("mismatched passwords: %d", st)
		}
		if msg := mustRunStep(ctx, t, "error", chromedp.Text(chromedp.ID("err-confirm"))); !strings.Contains(msg, "not the same password") {
			t.Errorf("error %q", msg)
		}
		checkSignedOutPage(ctx, t, axe, "new password error")
		mustStep(t, "typing the password twice", chromedp.Do(ctx, fillField("password", newPassword), fillField("confirm", newPassword)))
		if st := submitForm(ctx, t, `form[action="/admin/reset-password"] button[type=submit]`); st != http.StatusOK {
			t.Fatalf("setting the password: %d", st)
		}
		if loc := mustRunStep(ctx, t, "location", chromedp.Location()); loc != b.ts.URL+"/admin/login" {
			t.Fatalf("after the reset at %s, want the sign-in page", loc)
		}
		if notice := okFlash(ctx, t); notice != "Your password was changed. Sign in with the new one." {
			t.Errorf("notice %q", notice)
		}
		checkSignedOutPage(ctx, t, axe, "password changed")
		browserSignIn(ctx, t, b, tenant{Provisioned: ten.Provisioned, Password: newPassword})

		mustStep(t, "reopening the used link", chromedp.Do(ctx, chromedp.Navigate(b.ts.URL+path)))
		waitUntil(ctx, t, "the used-link page", `!!document.getElementById('reset-problem')`)
		checkSignedOutPage(ctx, t, axe, "used link")
	})
}

// checkSignedOutPage checks the page the tab shows as TestAdminPagesBrowser
// checks the dashboard's: nothing scrolls sideways, axe-core finds no
// serious or critical violation; and keeps a screenshot.
func checkSignedOutPage(ctx context.Context, t *testing.T, axe []byte, name string) {
	t.Helper()
	waitUntil(ctx, t, name+" loaded", `document.readyState === 'complete' && !!document.querySelector('h1')`)
	if over := mustRunStep(ctx, t, "width", chromedp.Evaluate[int](`document.documentElement.scrollWidth - innerWidth`)); over > 0 {
		t.Errorf("%s scrolls sideways by %d px", name, over)
	}
	for _, v := range axeViolations(ctx, t, axe) {
		t.Errorf("%s: axe: %s", name, v)
	}
	saveScreenshot(ctx, t, "signed out phone "+name)
}

// TestAdminPasswordResetWithoutSMTP: without PARLEY_SMTP_URL the page says
// that this server sends no email and how an operator resets a password;
// nothing is enqueued.
func TestAdminPasswordResetWithoutSMTP(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t, nil)
	ten := b.ownedTenant(t, "starter")
	c := b.newAdminClient(t)
	check := func(p adminPage) {
		t.Helper()
		if p.status != http.StatusOK || !strings.Contains(p.text("#no-email"), "not set up to send email") {
			t.Fatalf("%d, %q", p.status, p.text("#no-email"))
		}
		if cmd := p.text("#reset-command"); !strings.HasPrefix(cmd, "parley user create --email ") || !strings.Contains(cmd, "--password") || !strings.Contains(cmd, "--tenant") {
			t.Errorf("operator command %q", cmd)
		}
		if p.doc.Find(`form[action="/admin/forgot-password"]`).Length() != 0 {
			t.Error("the page offers a form that cannot send anything")
		}
	}
	check(c.get("/admin/forgot-password"))
	c.get("/admin/login") // the page has no form, so no CSRF token
	check(c.submit("/admin/forgot-password", url.Values{"email": {ten.OwnerEmail}}))
	var n int
	mustStep(t, "counting jobs", b.db.Pool().QueryRow(context.Background(),
		`SELECT count(*) FROM river_job WHERE kind = 'password_reset_email' AND args->>'email' = $1`, ten.OwnerEmail).Scan(&n))
	if n != 0 {
		t.Errorf("%d reset jobs enqueued without SMTP", n)
	}

	t.Run("Browser", func(t *testing.T) {
		axe, err := os.ReadFile("../widget/testdata/axe.min.js")
		if err != nil {
			t.Fatal(err)
		}
		ctx := browserTab(t)
		mustStep(t, "opening the page", chromedp.Do(ctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(b.ts.URL+"/admin/forgot-password")))
		checkSignedOutPage(ctx, t, axe, "no email")
	})
}

// TestAdminPasswordChangedElsewhere: a password set by an operator (what
// parley user create does to an existing user) ends the user's sessions
// too, as a reset link does.
func TestAdminPasswordChangedElsewhere(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t, nil)
	ten := b.ownedTenant(t, "starter")
	c := b.newAdminClient(t)
	c.signIn(ten)
	hash, err := b.srv.Base.Passwords.Hash("set by the operator")
	mustStep(t, "hashing", err)
	mustStep(t, "setting the password", b.db.AddOwner(context.Background(), ten.ID, ten.OwnerEmail, hash, true))
	if c.signedIn() {
		t.Error("a session signed in with the old password is still signed in")
	}
	if p := c.login(ten.OwnerEmail, "set by the operator", ""); p.status != http.StatusSeeOther {
		t.Errorf("the operator's password does not sign in: %d", p.status)
	}
	if !c.signedIn() {
		t.Error("not signed in with the new password")
	}
}
