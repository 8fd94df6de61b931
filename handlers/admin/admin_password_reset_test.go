package admin_test

import (
	"context"
	"crypto/sha256"
	"io"
	"log/slog"
	"mime"
	"mime/quotedprintable"
	"net/http"

	"github.com/parley/parley/web/webtest"

	netmail "net/mail"
	"net/url"
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
	b    *webtest.Bundle
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
	h.b = webtest.SetupAdmin(t, map[string]string{"PARLEY_SMTP_URL": h.smtp.URL("Parley <no-reply@parley.test>")})
	clock := h.b.Srv.Base.Now
	h.b.Srv.Base.Now = func() time.Time { return clock().Add(time.Duration(h.skew.Load())) }
	if h.b.Srv.Mail == nil || !h.b.Srv.Base.ResetByEmail {
		t.Fatal("PARLEY_SMTP_URL did not configure the server's mail")
	}
	// The production worker, on a client that works nothing but mail, so
	// that the other tests' jobs in this database are left alone.
	workers := river.NewWorkers()
	river.AddWorker(workers, &jobs.PasswordResetWorker{DB: h.b.DB,
		Mail: jobs.Mail{Sender: h.b.Srv.Mail, BaseURL: h.b.Srv.Config.BaseURL, Now: h.b.Srv.Base.Clock}})
	river.AddWorker(workers, &jobs.InvitationMailWorker{DB: h.b.DB,
		Mail: jobs.Mail{Sender: h.b.Srv.Mail, BaseURL: h.b.Srv.Config.BaseURL, Now: h.b.Srv.Base.Clock}})
	client, err := river.NewClient(riverpgxv5.New(h.b.DB.Pool()), &river.Config{
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
	if link[1] != h.b.Srv.Config.BaseURL {
		t.Errorf("the link starts %s, want the base URL %s", link[1], h.b.Srv.Config.BaseURL)
	}
	if !strings.Contains(string(body), "within the hour") {
		t.Errorf("the email does not say how long the link works:\n%s", body)
	}
	return link[2], link[3]
}

// askReset submits the forgot-password form as c and returns the answer.
func askReset(c *webtest.AdminClient, email string) webtest.AdminPage {
	c.T.Helper()
	c.Get("/admin/forgot-password")
	return c.Submit("/admin/forgot-password", url.Values{"email": {email}})
}

// resetJobsDone waits until River has worked every reset job for email.
func (h *resetHarness) resetJobsDone(t *testing.T, email string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var pending, done int
		err := h.b.DB.Pool().QueryRow(context.Background(), `SELECT count(*) FILTER (WHERE state <> 'completed'), count(*) FILTER (WHERE state = 'completed')
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

// TestAdminPasswordReset drives the emailed reset link end to end: over
// HTTP, then in Chromium. One River client runs for all of it (see
// setupReset), so the subtests run one after another.
func TestAdminPasswordReset(t *testing.T) {
	t.Parallel()
	h := setupReset(t)
	b := h.b
	const newPassword = "a brand new password"

	// An invitation to the team goes by mail (the link is then never
	// shown on the Team page); a new link is mailed again, and only the
	// newest works.
	t.Run("InvitationByMail", func(t *testing.T) {
		ten := b.OwnedTenant(t, "starter")
		owner := b.NewAdminClient(t)
		owner.SignIn(ten)
		email := "invited-" + ten.Slug + "@example.test"
		owner.Get("/admin/members")
		if p := owner.Submit("/admin/members", url.Values{"email": {email}, "role": {"admin"}}); p.Status != http.StatusSeeOther {
			t.Fatalf("invite: %d", p.Status)
		}
		p := owner.Get("/admin/members")
		if p.Text("#invitation-link") != "" || !strings.Contains(p.Text("#invitation-mailed"), email) {
			t.Errorf("after a mailed invitation: link %q, notice %q", p.Text("#invitation-link"), p.Text("#invitation-mailed"))
		}
		first := invitationMail(t, h, email, 1)
		id := strings.TrimPrefix(p.Doc.Find("#invitations tbody tr").First().AttrOr("id", ""), "invitation-")
		if p := owner.Submit("/admin/members/invitations/"+id+"/renew", nil); p.Status != http.StatusSeeOther {
			t.Fatalf("new link: %d", p.Status)
		}
		second := invitationMail(t, h, email, 2)
		c := b.NewAdminClient(t)
		if p := c.Get(first); p.Status != http.StatusNotFound {
			t.Errorf("the first mailed link after a new one: %d", p.Status)
		}
		if p := c.Get(second); p.Status != http.StatusOK || !strings.Contains(p.Text("#invitation-intro"), "Admin") {
			t.Errorf("the mailed link: %d %q", p.Status, p.Text("#invitation-intro"))
		}
	})

	t.Run("LinkResetsPassword", func(t *testing.T) {
		ten, other := b.OwnedTenant(t, "starter"), b.OwnedTenant(t, "starter")
		// Two sessions of the owner (another browser) and one of another user.
		elsewhere, bystander := b.NewAdminClient(t), b.NewAdminClient(t)
		elsewhere.SignIn(ten)
		bystander.SignIn(other)

		c := b.NewAdminClient(t)
		if href, _ := c.Get("/admin/login").Doc.Find(`a[href="/admin/forgot-password"]`).Attr("href"); href == "" {
			t.Fatal("the sign-in page has no Forgot your password? link")
		}
		page := c.Get("/admin/forgot-password")
		if page.Status != http.StatusOK || page.Doc.Find(`form[action="/admin/forgot-password"] input#email`).Length() != 1 || page.Text("#no-email") != "" {
			t.Fatalf("forgot-password page: %d\n%s", page.Status, page.Body)
		}
		if p := askReset(c, strings.ToUpper(ten.OwnerEmail)); p.Status != http.StatusSeeOther || p.Location() != "/admin/forgot-password" {
			t.Fatalf("asking for a link: %d to %q", p.Status, p.Location())
		}
		sent := c.Get("/admin/forgot-password").Text("#reset-sent")
		if !strings.Contains(sent, "If an account exists for "+strings.ToUpper(ten.OwnerEmail)+", we sent it a link") {
			t.Errorf("answer %q", sent)
		}
		path, token := h.resetMail(t, ten.OwnerEmail, 1)

		// Only the token's SHA-256 is stored.
		sum := sha256.Sum256([]byte(token))
		var byHash, byToken int
		webtest.MustStep(t, "reading the stored link", b.DB.Pool().QueryRow(context.Background(),
			`SELECT count(*) FILTER (WHERE token_hash = $1), count(*) FILTER (WHERE token_hash = $2 OR position($3::bytea IN token_hash) > 0)
			FROM password_resets`, sum[:], []byte(token), []byte(token)).Scan(&byHash, &byToken))
		if byHash != 1 || byToken != 0 {
			t.Errorf("%d rows by the token's hash, %d holding the token itself", byHash, byToken)
		}

		form := c.Get(path)
		if form.Status != http.StatusOK || form.Doc.Find(`form[action="/admin/reset-password"] input#password`).Length() != 1 {
			t.Fatalf("reset page: %d\n%s", form.Status, form.Body)
		}
		if rp := form.Header.Get("Referrer-Policy"); rp != "no-referrer" {
			t.Errorf("the page holding the token in its address has Referrer-Policy %q", rp)
		}
		for _, tc := range []struct{ name, password, confirm, field string }{
			{"TooShort", "short", "short", "password"},
			{"TooLong", strings.Repeat("é", 40), strings.Repeat("é", 40), "password"},
			{"Mismatch", newPassword, newPassword + "!", "confirm"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				p := c.As(t).Submit("/admin/reset-password", url.Values{"token": {token}, "password": {tc.password}, "confirm": {tc.confirm}})
				if p.Status != http.StatusUnprocessableEntity || p.Text("#err-"+tc.field) == "" {
					t.Fatalf("%d, error %q\n%s", p.Status, p.Text("#err-"+tc.field), p.Body)
				}
				if got := p.Doc.Find("#"+tc.field).AttrOr("aria-describedby", ""); !strings.Contains(got, "err-"+tc.field) {
					t.Errorf("the field is not tied to its error: aria-describedby=%q", got)
				}
			})
		}
		if h := b.PasswordHash(t, ten.OwnerEmail); !b.Srv.Base.Passwords.Check(h, ten.Password) {
			t.Fatal("a refused new password changed the password")
		}

		done := c.Submit("/admin/reset-password", url.Values{"token": {token}, "password": {newPassword}, "confirm": {newPassword}})
		if done.Status != http.StatusSeeOther || done.Location() != "/admin/login" {
			t.Fatalf("setting the password: %d to %q\n%s", done.Status, done.Location(), done.Body)
		}
		if notice := c.Get("/admin/login").Text("#login-notice"); notice != "Your password was changed. Sign in with the new one." {
			t.Errorf("sign-in page notice %q", notice)
		}
		if p := c.Login(ten.OwnerEmail, ten.Password, ""); p.Status != http.StatusUnauthorized {
			t.Errorf("the old password still signs in: %d", p.Status)
		}
		if p := c.Login(ten.OwnerEmail, newPassword, ""); p.Status != http.StatusSeeOther || p.Location() != "/admin" {
			t.Errorf("the new password does not sign in: %d to %q", p.Status, p.Location())
		}
		if elsewhere.SignedIn() {
			t.Error("the owner's other session is still signed in after the reset")
		}
		if !bystander.SignedIn() {
			t.Error("another user's session ended")
		}

		t.Run("UsedOnce", func(t *testing.T) {
			again := b.NewAdminClient(t)
			p := again.Get(path)
			if p.Status != http.StatusGone || !strings.Contains(p.Text("#reset-problem"), "already used") {
				t.Fatalf("reused link: %d %q", p.Status, p.Text("#reset-problem"))
			}
			if href, _ := p.Doc.Find(`a[href="/admin/forgot-password"]`).Attr("href"); href == "" {
				t.Error("the page does not offer a new link")
			}
			before := b.PasswordHash(t, ten.OwnerEmail)
			again.Get("/admin/login") // the page has no form, so no CSRF token
			p = again.Submit("/admin/reset-password", url.Values{"token": {token}, "password": {"yet another password"}, "confirm": {"yet another password"}})
			if p.Status != http.StatusGone || b.PasswordHash(t, ten.OwnerEmail) != before {
				t.Errorf("reusing the link: %d, password changed: %v", p.Status, b.PasswordHash(t, ten.OwnerEmail) != before)
			}
		})
	})

	t.Run("Expired", func(t *testing.T) {
		ten := b.OwnedTenant(t, "starter")
		c := b.NewAdminClient(t)
		askReset(c, ten.OwnerEmail)
		path, token := h.resetMail(t, ten.OwnerEmail, 1)
		if p := c.Get(path); p.Status != http.StatusOK {
			t.Fatalf("fresh link: %d", p.Status)
		}
		h.skew.Store(int64(time.Hour + time.Minute))
		defer h.skew.Store(0)
		p := c.Get(path)
		if p.Status != http.StatusGone || !strings.Contains(p.Text("#reset-problem"), "expired") {
			t.Fatalf("link after an hour: %d %q", p.Status, p.Text("#reset-problem"))
		}
		c.Get("/admin/login") // the page has no form, so no CSRF token
		p = c.Submit("/admin/reset-password", url.Values{"token": {token}, "password": {newPassword}, "confirm": {newPassword}})
		if p.Status != http.StatusGone || !b.Srv.Base.Passwords.Check(b.PasswordHash(t, ten.OwnerEmail), ten.Password) {
			t.Errorf("an expired link reset the password: %d", p.Status)
		}
	})

	t.Run("UnknownLink", func(t *testing.T) {
		c := b.NewAdminClient(t)
		for _, path := range []string{"/admin/reset-password?token=nosuchtoken", "/admin/reset-password"} {
			p := c.Get(path)
			if p.Status != http.StatusNotFound || !strings.Contains(p.Text("#reset-problem"), "not one we sent") {
				t.Errorf("%s: %d %q", path, p.Status, p.Text("#reset-problem"))
			}
		}
		c.Get("/admin/login") // the page has no form, so no CSRF token
		p := c.Submit("/admin/reset-password", url.Values{"token": {"nosuchtoken"}, "password": {newPassword}, "confirm": {newPassword}})
		if p.Status != http.StatusNotFound {
			t.Errorf("POST with an unknown token: %d", p.Status)
		}
	})

	t.Run("UnknownEmailSameAnswer", func(t *testing.T) {
		ten := b.OwnedTenant(t, "starter")
		nobody := "nobody-" + ten.Slug + "@example.test"
		known, unknown := b.NewAdminClient(t), b.NewAdminClient(t)
		pk, pu := askReset(known, ten.OwnerEmail), askReset(unknown, nobody)
		if pk.Status != pu.Status || pk.Location() != pu.Location() {
			t.Errorf("known address: %d to %q; unknown: %d to %q", pk.Status, pk.Location(), pu.Status, pu.Location())
		}
		sk, su := known.Get("/admin/forgot-password"), unknown.Get("/admin/forgot-password")
		if x, y := strings.Replace(sk.Text("#reset-sent"), ten.OwnerEmail, "X", 1), strings.Replace(su.Text("#reset-sent"), nobody, "X", 1); x != y || x == "" {
			t.Errorf("the answers differ:\n%q\n%q", x, y)
		}
		h.resetMail(t, ten.OwnerEmail, 1)
		h.resetJobsDone(t, nobody)
		if n := len(h.smtp.To(nobody)); n != 0 {
			t.Errorf("%d emails to an address without an account", n)
		}
	})

	t.Run("InvalidEmail", func(t *testing.T) {
		c := b.NewAdminClient(t)
		p := askReset(c, "not an address")
		if p.Status != http.StatusUnprocessableEntity || p.Text("#err-email") == "" || p.Doc.Find("#email").AttrOr("aria-invalid", "") != "true" {
			t.Errorf("%d, error %q", p.Status, p.Text("#err-email"))
		}
	})

	t.Run("RateLimit", func(t *testing.T) {
		ten := b.OwnedTenant(t, "starter")
		// Per email: three links an hour, whatever the client's address.
		for i := range 3 {
			if p := askReset(b.NewAdminClient(t), ten.OwnerEmail); p.Status != http.StatusSeeOther {
				t.Fatalf("request %d: %d", i+1, p.Status)
			}
		}
		p := askReset(b.NewAdminClient(t), ten.OwnerEmail)
		if p.Status != http.StatusTooManyRequests || !strings.Contains(p.Text("#reset-error"), "Wait an hour") {
			t.Errorf("fourth link for one email: %d %q", p.Status, p.Text("#reset-error"))
		}
		for i := 1; i <= 3; i++ {
			h.resetMail(t, ten.OwnerEmail, i)
		}
		// Per client address: ten requests an hour, whatever the emails.
		c := b.NewAdminClient(t)
		for i := range 10 {
			if p := askReset(c, "someone-"+ten.Slug+"-"+string(rune('a'+i))+"@example.test"); p.Status != http.StatusSeeOther {
				t.Fatalf("request %d from one address: %d", i+1, p.Status)
			}
		}
		if p := askReset(c, "someone-else-"+ten.Slug+"@example.test"); p.Status != http.StatusTooManyRequests {
			t.Errorf("eleventh request from one address: %d", p.Status)
		}
		h.resetJobsDone(t, ten.OwnerEmail) // a fourth email, had one been enqueued, is sent by now
		if n := len(h.smtp.To(ten.OwnerEmail)); n != 3 {
			t.Errorf("%d emails, want 3", n)
		}
	})

	t.Run("RetriedWhenRefused", func(t *testing.T) {
		ten := b.OwnedTenant(t, "starter")
		h.smtp.RejectNext(1)
		askReset(b.NewAdminClient(t), ten.OwnerEmail)
		path, _ := h.resetMail(t, ten.OwnerEmail, 1)
		if p := b.NewAdminClient(t).Get(path); p.Status != http.StatusOK {
			t.Errorf("the link of the retry: %d", p.Status)
		}
		var attempts int
		webtest.MustStep(t, "reading the job", b.DB.Pool().QueryRow(context.Background(),
			`SELECT attempt FROM river_job WHERE kind = 'password_reset_email' AND args->>'email' = $1`, ten.OwnerEmail).Scan(&attempts))
		if attempts != 2 {
			t.Errorf("%d attempts, want 2", attempts)
		}
	})

	t.Run("Browser", func(t *testing.T) {
		axe := webtest.AxeScript(t)
		ten := b.OwnedTenant(t, "starter")
		ctx := webtest.BrowserTab(t)
		webtest.OwnAddress(ctx, t)
		webtest.MustStep(t, "phone size", chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)))
		webtest.MustStep(t, "opening the sign-in page", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin/login")))
		checkSignedOutPage(ctx, t, axe, "sign in")
		webtest.MustStep(t, "following Forgot your password?", chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`a[href="/admin/forgot-password"]`))))
		webtest.WaitUntil(ctx, t, "the forgot-password page", `location.pathname === '/admin/forgot-password' && !!document.getElementById('email')`)
		checkSignedOutPage(ctx, t, axe, "forgot password")
		webtest.MustStep(t, "typing the email", chromedp.Do(ctx, webtest.FillField("email", ten.OwnerEmail)))
		if st := webtest.SubmitForm(ctx, t, `form[action="/admin/forgot-password"] button[type=submit]`); st != http.StatusOK {
			t.Fatalf("after asking for a link: %d", st)
		}
		if sent := webtest.MustRunStep(ctx, t, "answer", chromedp.Text(chromedp.ID("reset-sent"))); !strings.Contains(sent, ten.OwnerEmail) {
			t.Errorf("answer %q", sent)
		}
		checkSignedOutPage(ctx, t, axe, "link sent")

		path, _ := h.resetMail(t, ten.OwnerEmail, 1)
		webtest.MustStep(t, "opening the link", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+path)))
		webtest.WaitUntil(ctx, t, "the reset page", `!!document.getElementById('confirm')`)
		checkSignedOutPage(ctx, t, axe, "new password")
		webtest.MustStep(t, "typing two different passwords", chromedp.Do(ctx, webtest.FillField("password", newPassword), webtest.FillField("confirm", "something else entirely")))
		if st := webtest.SubmitForm(ctx, t, `form[action="/admin/reset-password"] button[type=submit]`); st != http.StatusUnprocessableEntity {
			t.Fatalf("mismatched passwords: %d", st)
		}
		if msg := webtest.MustRunStep(ctx, t, "error", chromedp.Text(chromedp.ID("err-confirm"))); !strings.Contains(msg, "not the same password") {
			t.Errorf("error %q", msg)
		}
		checkSignedOutPage(ctx, t, axe, "new password error")
		webtest.MustStep(t, "typing the password twice", chromedp.Do(ctx, webtest.FillField("password", newPassword), webtest.FillField("confirm", newPassword)))
		if st := webtest.SubmitForm(ctx, t, `form[action="/admin/reset-password"] button[type=submit]`); st != http.StatusOK {
			t.Fatalf("setting the password: %d", st)
		}
		if loc := webtest.MustRunStep(ctx, t, "location", chromedp.Location()); loc != b.TS.URL+"/admin/login" {
			t.Fatalf("after the reset at %s, want the sign-in page", loc)
		}
		if notice := webtest.OkFlash(ctx, t); notice != "Your password was changed. Sign in with the new one." {
			t.Errorf("notice %q", notice)
		}
		checkSignedOutPage(ctx, t, axe, "password changed")
		webtest.BrowserSignIn(ctx, t, b, webtest.Tenant{Provisioned: ten.Provisioned, Password: newPassword})

		webtest.MustStep(t, "reopening the used link", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+path)))
		webtest.WaitUntil(ctx, t, "the used-link page", `!!document.getElementById('reset-problem')`)
		checkSignedOutPage(ctx, t, axe, "used link")
	})
}

// checkSignedOutPage checks the page the tab shows as TestAdminPagesBrowser
// checks the dashboard's: nothing scrolls sideways, axe-core finds no
// serious or critical violation; and keeps a screenshot.
func checkSignedOutPage(ctx context.Context, t *testing.T, axe []byte, name string) {
	t.Helper()
	webtest.WaitUntil(ctx, t, name+" loaded", `document.readyState === 'complete' && !!document.querySelector('h1')`)
	if over := webtest.MustRunStep(ctx, t, "width", chromedp.Evaluate[int](`document.documentElement.scrollWidth - innerWidth`)); over > 0 {
		t.Errorf("%s scrolls sideways by %d px", name, over)
	}
	for _, v := range webtest.AxeViolations(ctx, t, axe) {
		t.Errorf("%s: axe: %s", name, v)
	}
	webtest.SaveScreenshot(ctx, t, "signed out phone "+name)
}

// TestAdminPasswordResetWithoutSMTP: without PARLEY_SMTP_URL the page says
// that this server sends no email and how an operator resets a password;
// nothing is enqueued.
func TestAdminPasswordResetWithoutSMTP(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	ten := b.OwnedTenant(t, "starter")
	c := b.NewAdminClient(t)
	check := func(p webtest.AdminPage) {
		t.Helper()
		if p.Status != http.StatusOK || !strings.Contains(p.Text("#no-email"), "not set up to send email") {
			t.Fatalf("%d, %q", p.Status, p.Text("#no-email"))
		}
		if cmd := p.Text("#reset-command"); !strings.HasPrefix(cmd, "parley user create --email ") || !strings.Contains(cmd, "--password") || !strings.Contains(cmd, "--tenant") {
			t.Errorf("operator command %q", cmd)
		}
		if p.Doc.Find(`form[action="/admin/forgot-password"]`).Length() != 0 {
			t.Error("the page offers a form that cannot send anything")
		}
	}
	check(c.Get("/admin/forgot-password"))
	c.Get("/admin/login") // the page has no form, so no CSRF token
	check(c.Submit("/admin/forgot-password", url.Values{"email": {ten.OwnerEmail}}))
	var n int
	webtest.MustStep(t, "counting jobs", b.DB.Pool().QueryRow(context.Background(),
		`SELECT count(*) FROM river_job WHERE kind = 'password_reset_email' AND args->>'email' = $1`, ten.OwnerEmail).Scan(&n))
	if n != 0 {
		t.Errorf("%d reset jobs enqueued without SMTP", n)
	}

	t.Run("Browser", func(t *testing.T) {
		axe := webtest.AxeScript(t)
		ctx := webtest.BrowserTab(t)
		webtest.MustStep(t, "opening the page", chromedp.Do(ctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(b.TS.URL+"/admin/forgot-password")))
		checkSignedOutPage(ctx, t, axe, "no email")
	})
}

// TestAdminPasswordChangedElsewhere: a password set by an operator (what
// parley user create does to an existing user) ends the user's sessions
// too, as a reset link does.
func TestAdminPasswordChangedElsewhere(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	ten := b.OwnedTenant(t, "starter")
	c := b.NewAdminClient(t)
	c.SignIn(ten)
	hash, err := b.Srv.Base.Passwords.Hash("set by the operator")
	webtest.MustStep(t, "hashing", err)
	webtest.MustStep(t, "setting the password", b.DB.AddOwner(context.Background(), ten.ID, ten.OwnerEmail, hash, true))
	if c.SignedIn() {
		t.Error("a session signed in with the old password is still signed in")
	}
	if p := c.Login(ten.OwnerEmail, "set by the operator", ""); p.Status != http.StatusSeeOther {
		t.Errorf("the operator's password does not sign in: %d", p.Status)
	}
	if !c.SignedIn() {
		t.Error("not signed in with the new password")
	}
}

var invitationLink = regexp.MustCompile(`https?://[^/\s]+(/admin/invitation\?token=[A-Za-z0-9_-]+)`)

// invitationMail waits for the n-th invitation mailed to addr and returns
// its link's path.
func invitationMail(t *testing.T, h *resetHarness, addr string, n int) string {
	t.Helper()
	got := h.smtp.Wait(t, addr, n, 20*time.Second)
	m, err := netmail.ReadMessage(strings.NewReader(string(got.Data)))
	if err != nil {
		t.Fatal(err)
	}
	if subj, _ := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject")); !strings.HasPrefix(subj, "Join Tenant ") {
		t.Errorf("Subject %q", subj)
	}
	body, _ := io.ReadAll(quotedprintable.NewReader(m.Body))
	l := invitationLink.FindStringSubmatch(string(body))
	if l == nil {
		t.Fatalf("no invitation link in\n%s", body)
	}
	return l[1]
}
