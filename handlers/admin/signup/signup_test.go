package signup_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"mime/quotedprintable"
	"net/http"
	netmail "net/mail"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/accounts"
	"github.com/parley/parley/handlers/admin/signup"
	"github.com/parley/parley/jobs"
	"github.com/parley/parley/mail/mailtest"
	"github.com/parley/parley/web/webtest"
)

// harness is a server in open sign-up mode that sends email: a test SMTP
// server speaking the real protocol, and a River client working the mail
// queue with the production worker. One runs per test binary (two River
// clients on the mail queue of one database would work each other's jobs),
// so every test of open sign-up is a subtest of TestSignUp.
type harness struct {
	b    *webtest.Bundle
	smtp *mailtest.Server
}

var seq atomic.Int64

// unique is a name no other test of the binary uses.
func unique(prefix string) string {
	return fmt.Sprintf("%s%d-%d", prefix, time.Now().UnixNano()%1_000_000, seq.Add(1))
}

func setup(t *testing.T) *harness {
	t.Helper()
	h := &harness{smtp: mailtest.Start(t, mailtest.Options{})}
	h.b = h.newServer(t, nil)
	workers := river.NewWorkers()
	river.AddWorker(workers, &jobs.SignupMailWorker{DB: h.b.DB,
		Mail: jobs.Mail{Sender: h.b.Srv.Mail, BaseURL: h.b.Srv.Config.BaseURL}})
	client, err := river.NewClient(riverpgxv5.New(h.b.DB.Pool()), &river.Config{
		Logger:            slog.New(slog.NewTextHandler(io.Discard, nil)),
		Queues:            map[string]river.QueueConfig{jobs.MailQueue: {MaxWorkers: 4}},
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

// newServer is another open-mode server on the same database and mail
// server, with more of the environment env.
func (h *harness) newServer(t *testing.T, env map[string]string) *webtest.Bundle {
	t.Helper()
	e := map[string]string{"PARLEY_SIGNUP": "open", "PARLEY_SMTP_URL": h.smtp.URL("Parley <no-reply@parley.test>")}
	for k, v := range env {
		e[k] = v
	}
	return webtest.SetupAdmin(t, e)
}

// mailBody waits for the n-th email to addr and returns its subject and text.
func (h *harness) mailBody(t *testing.T, addr string, n int) (subject, body string) {
	t.Helper()
	got := h.smtp.Wait(t, addr, n, 20*time.Second)
	m, err := netmail.ReadMessage(strings.NewReader(string(got.Data)))
	if err != nil {
		t.Fatalf("the email does not parse: %v\n%s", err, got.Data)
	}
	subject, _ = new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
	raw, err := io.ReadAll(quotedprintable.NewReader(m.Body))
	if err != nil {
		t.Fatal(err)
	}
	return subject, string(raw)
}

var confirmLink = regexp.MustCompile(`(https?://[^/\s]+)(/admin/signup/confirm\?token=([A-Za-z0-9_-]+))`)

// confirmMail waits for the n-th email to addr, a confirmation link, and
// returns the link's path and token.
func (h *harness) confirmMail(t *testing.T, addr string, n int) (path, token string) {
	t.Helper()
	subject, body := h.mailBody(t, addr, n)
	if subject != "Confirm your email to create your Parley workspace" {
		t.Errorf("subject %q", subject)
	}
	link := confirmLink.FindStringSubmatch(body)
	if link == nil {
		t.Fatalf("no confirmation link in the email:\n%s", body)
	}
	if link[1] != h.b.Srv.Config.BaseURL {
		t.Errorf("the link starts %s, want the base URL %s", link[1], h.b.Srv.Config.BaseURL)
	}
	if !strings.Contains(body, "24 hours") {
		t.Errorf("the email does not say how long the link works:\n%s", body)
	}
	return link[2], link[3]
}

// signUp opens the sign-up page as c and submits it.
func signUp(c *webtest.AdminClient, email, password, workspace string) webtest.AdminPage {
	c.T.Helper()
	if p := c.Get("/admin/signup"); p.Status != http.StatusOK {
		c.T.Fatalf("GET /admin/signup: %d", p.Status)
	}
	return c.Submit("/admin/signup", url.Values{"email": {email}, "password": {password}, "workspace": {workspace}})
}

// signedUp signs up as c and fails the test unless the link is on its way.
func signedUp(c *webtest.AdminClient, email, workspace string) {
	c.T.Helper()
	p := signUp(c, email, "a long password", workspace)
	if p.Status != http.StatusSeeOther || p.Location() != "/admin/signup/sent" {
		c.T.Fatalf("signing up %s: %d to %q: %s %s", email, p.Status, p.Location(), p.Text("#signup-error"), p.Text(".field-error"))
	}
}

func TestSignUp(t *testing.T) {
	h := setup(t)

	t.Run("OpenEndToEnd", func(t *testing.T) {
		t.Parallel()
		c := h.b.NewAdminClient(t)
		if p := c.Get("/admin/login"); p.Doc.Find(`#signup-link a[href="/admin/signup"]`).Length() != 1 {
			t.Errorf("the sign-in page has no link to sign up:\n%s", p.Body)
		}
		email, name := unique("new")+"@example.com", "Vélos "+unique("Dupont ")
		signedUp(c, email, name)
		sent := c.Get("/admin/signup/sent")
		if sent.Status != http.StatusOK || !strings.Contains(sent.Text("#signup-sent"), email) {
			t.Errorf("the page after signing up: %d %q", sent.Status, sent.Text("#signup-sent"))
		}
		if again := c.Get("/admin/signup/sent"); again.Status != http.StatusSeeOther {
			t.Errorf("the sent page, opened again: %d, want a redirect to the form", again.Status)
		}
		if _, err := h.b.DB.UserByEmail(context.Background(), email); err == nil {
			t.Fatal("the account exists before the address is confirmed")
		}
		path, token := h.confirmMail(t, email, 1)
		var plain int
		if err := h.b.DB.Pool().QueryRow(context.Background(), `SELECT count(*) FROM signups WHERE token_hash = $1 OR password_hash = 'a long password'`,
			[]byte(token)).Scan(&plain); err != nil || plain != 0 {
			t.Errorf("the token or the password is stored as it is (%d rows, %v)", plain, err)
		}

		// Another browser (the mail app's) opens the link.
		other := h.b.NewAdminClient(t)
		page := other.Get(path)
		if page.Status != http.StatusOK || !strings.Contains(page.Text("#signup-confirm"), name) || page.Header.Get("Referrer-Policy") != "no-referrer" {
			t.Fatalf("the confirmation page: %d %q (Referrer-Policy %q)", page.Status, page.Text("#signup-confirm"), page.Header.Get("Referrer-Policy"))
		}
		if _, err := h.b.DB.UserByEmail(context.Background(), email); err == nil {
			t.Fatal("opening the link (a GET, which mail scanners make) created the account")
		}
		done := other.Submit("/admin/signup/confirm", url.Values{"token": {token}})
		if done.Status != http.StatusSeeOther || done.Location() != "/admin" {
			t.Fatalf("confirming: %d to %q: %s", done.Status, done.Location(), done.Text("#signup-problem"))
		}
		home := other.Get("/admin")
		if home.Status != http.StatusOK || !strings.Contains(home.Body, "Welcome to Parley") {
			t.Fatalf("the dashboard after confirming: %d", home.Status)
		}

		ctx := context.Background()
		u, err := h.b.DB.UserByEmail(ctx, email)
		if err != nil {
			t.Fatal(err)
		}
		ms, err := h.b.DB.Memberships(ctx, u.ID)
		if err != nil || len(ms) != 1 || ms[0].Role != "owner" || ms[0].TenantName != name {
			t.Fatalf("memberships %+v (%v)", ms, err)
		}
		ten, err := h.b.DB.TenantByID(ctx, ms[0].TenantID)
		if err != nil || ten.Plan != "free" || !strings.HasPrefix(ten.Slug, "velos-dupont-") {
			t.Errorf("tenant %s on %s (%v)", ten.Slug, ten.Plan, err)
		}
		segs, err := h.b.DB.ListSegments(ctx, ten.ID)
		if err != nil || len(segs) != 1 || !segs[0].IsDefault {
			t.Errorf("segments %+v (%v)", segs, err)
		}
		var tokens int
		if err := h.b.DB.Pool().QueryRow(ctx, `SELECT count(*) FROM api_tokens WHERE tenant_id = $1`, ten.ID).Scan(&tokens); err != nil || tokens != 0 {
			t.Errorf("%d API tokens nobody saw (%v)", tokens, err)
		}
		var actorKind, actorID, actorName, action, target string
		if err := h.b.DB.Pool().QueryRow(ctx, `SELECT actor_kind, actor_id, actor_name, action, target FROM audit_log WHERE tenant_id = $1 AND action = 'tenant.created'`,
			ten.ID).Scan(&actorKind, &actorID, &actorName, &action, &target); err != nil {
			t.Fatalf("the audit log: %v", err)
		}
		if actorKind != "person" || actorID != u.ID || actorName != email || action != "tenant.created" || target != name {
			t.Errorf("audit entry %s %s %s %s %s", actorKind, actorID, actorName, action, target)
		}
		// The password chosen at sign-up signs in.
		if p := h.b.NewAdminClient(t).Login(email, "a long password", ""); p.Status != http.StatusSeeOther || p.Location() != "/admin" {
			t.Errorf("signing in with the new password: %d", p.Status)
		}

		t.Run("UsedLink", func(t *testing.T) {
			for _, p := range []webtest.AdminPage{other.Get(path), other.Submit("/admin/signup/confirm", url.Values{"token": {token}})} {
				if p.Status != http.StatusGone || !strings.Contains(p.Text("#signup-problem"), "already used") {
					t.Errorf("the link used: %d %q", p.Status, p.Text("#signup-problem"))
				}
			}
		})
	})

	t.Run("BadInput", func(t *testing.T) {
		t.Parallel()
		c := h.b.NewAdminClient(t)
		email := unique("bad") + "@example.com"
		for _, tc := range []struct {
			name, email, password, workspace, field, want string
		}{
			{"NoEmail", "", "a long password", "Acme", "email", "Enter your email address"},
			{"BadEmail", "not an address", "a long password", "Acme", "email", "Enter your email address"},
			{"EmailWithName", "Ann <ann@example.com>", "a long password", "Acme", "email", "Enter your email address"},
			{"ShortPassword", email, "short", "Acme", "password", "at least 10 characters"},
			{"PasswordIsEmail", email, strings.ToUpper(email), "Acme", "password", "not your email"},
			{"LongPassword", email, strings.Repeat("é", 40), "Acme", "password", "at most 72 bytes"},
			{"NoWorkspace", email, "a long password", "   ", "workspace", "Enter a name for your workspace"},
			{"LongWorkspace", email, "a long password", strings.Repeat("w", signup.WorkspaceNameMax+1), "workspace", "at most 100 characters"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				p := signUp(c.As(t), tc.email, tc.password, tc.workspace)
				if p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Text("#err-"+tc.field), tc.want) {
					t.Errorf("%d, %s error %q, want %q", p.Status, tc.field, p.Text("#err-"+tc.field), tc.want)
				}
				if p.Doc.Find("#"+map[string]string{"email": "email", "password": "password", "workspace": "workspace"}[tc.field]+`[aria-invalid="true"]`).Length() != 1 {
					t.Errorf("the %s field is not marked invalid", tc.field)
				}
			})
		}
		// The maximum is allowed.
		if p := signUp(c, unique("max")+"@example.com", "a long password", strings.Repeat("w", signup.WorkspaceNameMax)); p.Status != http.StatusSeeOther {
			t.Errorf("a name of %d characters: %d %s", signup.WorkspaceNameMax, p.Status, p.Text(".field-error"))
		}
	})

	t.Run("AddressAlreadyRegistered", func(t *testing.T) {
		t.Parallel()
		ten := h.b.OwnedTenant(t, "starter")
		c := h.b.NewAdminClient(t)
		// The same answer as for a new address.
		signedUp(c, ten.OwnerEmail, "Someone Else's Workspace")
		if p := c.Get("/admin/signup/sent"); !strings.Contains(p.Text("#signup-sent"), ten.OwnerEmail) {
			t.Errorf("sent page %q", p.Text("#signup-sent"))
		}
		subject, body := h.mailBody(t, ten.OwnerEmail, 1)
		if subject != "You already have a Parley account" || !strings.Contains(body, "/admin/login") ||
			!strings.Contains(body, "/admin/forgot-password") || strings.Contains(body, "/admin/signup/confirm") {
			t.Errorf("the mail to an address with an account: %q\n%s", subject, body)
		}
		var left int
		if err := h.b.DB.Pool().QueryRow(context.Background(), `SELECT count(*) FROM signups WHERE email = $1`, ten.OwnerEmail).Scan(&left); err != nil || left != 0 {
			t.Errorf("%d sign-ups left for the address (%v)", left, err)
		}
	})

	t.Run("AccountMadeBeforeTheLinkIsFollowed", func(t *testing.T) {
		t.Parallel()
		c := h.b.NewAdminClient(t)
		email := unique("late") + "@example.com"
		signedUp(c, email, "Late Workspace")
		path, token := h.confirmMail(t, email, 1)
		// Meanwhile the operator gives the address an account.
		ten := h.b.NewTenant(t, "free")
		if err := h.b.DB.AddOwner(context.Background(), ten.ID, email, "$2a$04$notthesignuppasswordhashxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", false); err != nil {
			t.Fatal(err)
		}
		c.Get(path)
		p := c.Submit("/admin/signup/confirm", url.Values{"token": {token}})
		if p.Status != http.StatusConflict || !strings.Contains(p.Text("#signup-problem"), "has a Parley account now") {
			t.Fatalf("confirming for an address with an account: %d %q", p.Status, p.Text("#signup-problem"))
		}
		if c.SignedIn() {
			t.Error("the link signed its follower in to someone else's account")
		}
		u, _ := h.b.DB.UserByEmail(context.Background(), email)
		if ms, _ := h.b.DB.Memberships(context.Background(), u.ID); len(ms) != 1 {
			t.Errorf("memberships %+v: the workspace was created for the existing account", ms)
		}
	})

	t.Run("LinkExpiresAfter24Hours", func(t *testing.T) {
		t.Parallel()
		var skew atomic.Int64
		later := h.newServer(t, nil)
		clock := later.Srv.Base.Now
		later.Srv.Base.Now = func() time.Time { return clock().Add(time.Duration(skew.Load())) }
		email := unique("exp") + "@example.com"
		signedUp(h.b.NewAdminClient(t), email, "Expiring Workspace")
		path, token := h.confirmMail(t, email, 1)
		c := later.NewAdminClient(t)
		skew.Store(int64(23 * time.Hour))
		if p := c.Get(path); p.Status != http.StatusOK {
			t.Errorf("after 23 hours: %d %q", p.Status, p.Text("#signup-problem"))
		}
		skew.Store(int64(24*time.Hour + 10*time.Minute))
		if p := c.Get(path); p.Status != http.StatusGone || !strings.Contains(p.Text("#signup-problem"), "links work for 24 hours") ||
			p.Doc.Find(`a[href="/admin/signup"]`).Length() != 1 {
			t.Errorf("after 24 hours: %d %q", p.Status, p.Text("#signup-problem"))
		}
		if p := c.Submit("/admin/signup/confirm", url.Values{"token": {token}}); p.Status != http.StatusGone {
			t.Errorf("confirming after 24 hours: %d %q", p.Status, p.Text("#signup-problem"))
		}
		if _, err := h.b.DB.UserByEmail(context.Background(), email); err == nil {
			t.Error("an expired link created the account")
		}
	})

	t.Run("UnknownLink", func(t *testing.T) {
		t.Parallel()
		c := h.b.NewAdminClient(t)
		for _, path := range []string{"/admin/signup/confirm", "/admin/signup/confirm?token=nope"} {
			if p := c.Get(path); p.Status != http.StatusNotFound || !strings.Contains(p.Text("#signup-problem"), "not one we sent") {
				t.Errorf("%s: %d %q", path, p.Status, p.Text("#signup-problem"))
			}
		}
		c.Get("/admin/signup")
		if p := c.Submit("/admin/signup/confirm", url.Values{"token": {"nope"}}); p.Status != http.StatusNotFound {
			t.Errorf("confirming an unknown token: %d", p.Status)
		}
		// An invitation's token is not a confirmation's.
		tok, hash := auth.NewResetToken()
		if _, err := h.b.DB.CreateSignupInvitation(context.Background(), unique("inv")+"@example.com", hash, time.Now()); err != nil {
			t.Fatal(err)
		}
		if p := c.Get("/admin/signup/confirm?token=" + tok); p.Status != http.StatusNotFound {
			t.Errorf("an invitation's token at the confirmation: %d", p.Status)
		}
		if p := c.Get("/admin/signup?invitation=" + tok); p.Doc.Find(`input[name="invitation"]`).Length() != 0 {
			t.Error("open mode took an invitation")
		}
	})

	t.Run("SameNameTwice", func(t *testing.T) {
		t.Parallel()
		name := unique("Twin Shop ")
		slug := db.Slugify(name)
		var slugs []string
		for range 2 {
			email := unique("twin") + "@example.com"
			signedUp(h.b.NewAdminClient(t), email, name)
			path, token := h.confirmMail(t, email, 1)
			c := h.b.NewAdminClient(t)
			c.Get(path)
			if p := c.Submit("/admin/signup/confirm", url.Values{"token": {token}}); p.Status != http.StatusSeeOther {
				t.Fatalf("confirming: %d %q", p.Status, p.Text("#signup-problem"))
			}
			u, _ := h.b.DB.UserByEmail(context.Background(), email)
			ms, _ := h.b.DB.Memberships(context.Background(), u.ID)
			slugs = append(slugs, ms[0].TenantSlug)
		}
		if slugs[0] != slug || slugs[1] != slug+"-2" {
			t.Errorf("slugs %q, want %s and %s-2", slugs, slug, slug)
		}
	})

	t.Run("PerAddressLimit", func(t *testing.T) {
		t.Parallel()
		c := h.b.NewAdminClient(t)
		for i := range signup.AddressLimit {
			signedUp(c, unique(fmt.Sprintf("lim%d-", i))+"@example.com", "Limited")
		}
		p := signUp(c, unique("over")+"@example.com", "a long password", "Limited")
		if p.Status != http.StatusTooManyRequests || !strings.Contains(p.Text("#signup-error"), "Wait an hour") || p.Header.Get("Retry-After") == "" {
			t.Errorf("sign-up %d from one address: %d %q", signup.AddressLimit+1, p.Status, p.Text("#signup-error"))
		}
		// Another address is not held back.
		signedUp(h.b.NewAdminClient(t), unique("free")+"@example.com", "Limited")
	})

	t.Run("PerEmailLimit", func(t *testing.T) {
		t.Parallel()
		email := unique("same") + "@example.com"
		for range signup.EmailLimit {
			signedUp(h.b.NewAdminClient(t), email, "Again")
		}
		if p := signUp(h.b.NewAdminClient(t), strings.ToUpper(email[:1])+email[1:], "a long password", "Again"); p.Status != http.StatusTooManyRequests {
			t.Errorf("sign-up %d for one email: %d", signup.EmailLimit+1, p.Status)
		}
	})

	t.Run("BotChallenge", func(t *testing.T) {
		t.Parallel()
		const secret = "operator-challenge-secret"
		provider := webtest.NewChallengeProvider(t)
		verify := webtest.NewSiteverify(t, secret)
		b := h.newServer(t, map[string]string{"PARLEY_CAPTCHA_VERIFY_URL": verify.URL,
			"PARLEY_CAPTCHA_SCRIPT_URL":       provider.URL + "/turnstile/v0/api.js?render=explicit",
			"PARLEY_ADMIN_CAPTCHA_SITE_KEY":   "0x4AAA-operator-site",
			"PARLEY_ADMIN_CAPTCHA_SECRET_KEY": secret})
		c := b.NewAdminClient(t)
		page := c.Get("/admin/signup")
		if page.Doc.Find(`#login-challenge[data-sitekey="0x4AAA-operator-site"]`).Length() != 1 ||
			!strings.Contains(page.Header.Get("Content-Security-Policy"), provider.URL) {
			t.Fatalf("the sign-up page has no challenge, or its policy refuses it (%q)", page.Header.Get("Content-Security-Policy"))
		}
		email := unique("bot") + "@example.com"
		form := url.Values{"email": {email}, "password": {"a long password"}, "workspace": {"Robots"}}
		if p := c.Submit("/admin/signup", form); p.Status != http.StatusForbidden || !strings.Contains(p.Text("#signup-error"), "not a robot") {
			t.Errorf("without the challenge: %d %q", p.Status, p.Text("#signup-error"))
		}
		verify.Refuse.Store(true)
		form.Set("challengeToken", "fake-token-refused")
		if p := c.Submit("/admin/signup", form); p.Status != http.StatusForbidden {
			t.Errorf("with a refused token: %d", p.Status)
		}
		verify.Refuse.Store(false)
		form.Set("challengeToken", "fake-token-1")
		if p := c.Submit("/admin/signup", form); p.Status != http.StatusSeeOther {
			t.Errorf("with the challenge solved: %d %q", p.Status, p.Text("#signup-error"))
		}
	})

	t.Run("Browser", func(t *testing.T) { t.Parallel(); testBrowser(t, h) })
}

// TestSignUpInvite is invite mode: without an invitation the page says
// sign-up is by invitation; with one, the form creates the workspace at
// once for the invitation's address, once.
func TestSignUpInvite(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, map[string]string{"PARLEY_SIGNUP": "invite"})
	ctx := context.Background()
	invite := func(t *testing.T, email string, at time.Time) string {
		t.Helper()
		tok, hash := auth.NewResetToken()
		if _, err := b.DB.CreateSignupInvitation(ctx, email, hash, at); err != nil {
			t.Fatal(err)
		}
		return tok
	}

	t.Run("WithoutInvitation", func(t *testing.T) {
		c := b.NewAdminClient(t)
		if p := c.Get("/admin/login"); p.Doc.Find("#signup-link").Length() != 0 {
			t.Error("the sign-in page links to an open sign-up")
		}
		p := c.Get("/admin/signup")
		if p.Status != http.StatusForbidden || !strings.Contains(p.Text("#signup-problem"), "invitation") {
			t.Errorf("%d %q", p.Status, p.Text("#signup-problem"))
		}
		c.Get("/admin/login")
		if p := c.Submit("/admin/signup", url.Values{"email": {"x@example.com"}, "password": {"a long password"}, "workspace": {"X"}}); p.Status != http.StatusForbidden {
			t.Errorf("posting the open form: %d", p.Status)
		}
		if p := c.Get("/admin/signup/confirm?token=x"); p.Status != http.StatusNotFound {
			t.Errorf("the open mode's confirmation: %d", p.Status)
		}
	})

	t.Run("NewAccount", func(t *testing.T) {
		email := unique("invited") + "@example.com"
		tok := invite(t, email, time.Now())
		c := b.NewAdminClient(t)
		p := c.Get("/admin/signup?invitation=" + tok)
		if p.Status != http.StatusOK || p.Doc.Find(`#email[readonly]`).AttrOr("value", "") != email {
			t.Fatalf("the invitation's form: %d, email %q", p.Status, p.Doc.Find("#email").AttrOr("value", ""))
		}
		form := url.Values{"invitation": {tok}, "email": {"someone-else@example.com"}, "password": {"short"}, "workspace": {"Invited Co"}}
		if p := c.Submit("/admin/signup", form); p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Text("#err-password"), "10 characters") {
			t.Errorf("a weak password: %d %q", p.Status, p.Text("#err-password"))
		}
		form.Set("password", "a long password")
		if p := c.Submit("/admin/signup", form); p.Status != http.StatusSeeOther || p.Location() != "/admin" {
			t.Fatalf("creating: %d %q %q", p.Status, p.Text(".field-error"), p.Text("#signup-problem"))
		}
		if !c.SignedIn() {
			t.Fatal("not signed in after creating the workspace")
		}
		u, err := b.DB.UserByEmail(ctx, email)
		if err != nil {
			t.Fatalf("the invitation's address has no account: %v", err)
		}
		if _, err := b.DB.UserByEmail(ctx, "someone-else@example.com"); err == nil {
			t.Error("the address posted replaced the invitation's")
		}
		ms, _ := b.DB.Memberships(ctx, u.ID)
		if len(ms) != 1 || ms[0].TenantName != "Invited Co" || ms[0].Role != "owner" {
			t.Errorf("memberships %+v", ms)
		}
		var action string
		if err := b.DB.Pool().QueryRow(ctx, `SELECT string_agg(action, ' ' ORDER BY id) FROM audit_log WHERE tenant_id = $1 AND actor_id = $2`, ms[0].TenantID, u.ID).Scan(&action); err != nil || action != "tenant.created account.signed_in" {
			t.Errorf("audit %q (%v), want the creation, then the sign-in", action, err)
		}
		again := b.NewAdminClient(t)
		if p := again.Get("/admin/signup?invitation=" + tok); p.Status != http.StatusGone || !strings.Contains(p.Text("#signup-problem"), "already used") {
			t.Errorf("the invitation used: %d %q", p.Status, p.Text("#signup-problem"))
		}
		again.Get("/admin/login")
		if p := again.Submit("/admin/signup", form); p.Status != http.StatusGone {
			t.Errorf("posting the used invitation: %d", p.Status)
		}
	})

	t.Run("ExistingAccount", func(t *testing.T) {
		ten := b.OwnedTenant(t, "starter")
		tok := invite(t, ten.OwnerEmail, time.Now())
		c := b.NewAdminClient(t)
		p := c.Get("/admin/signup?invitation=" + tok)
		if p.Doc.Find(`#password[autocomplete="current-password"]`).Length() != 1 {
			t.Fatal("the form does not ask for the existing account's password")
		}
		form := url.Values{"invitation": {tok}, "password": {"not the password"}, "workspace": {"Second Shop"}}
		if p := c.Submit("/admin/signup", form); p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Text("#err-password"), "not the password of your account") {
			t.Errorf("a wrong password: %d %q", p.Status, p.Text("#err-password"))
		}
		form.Set("password", ten.Password)
		if p := c.Submit("/admin/signup", form); p.Status != http.StatusSeeOther {
			t.Fatalf("creating: %d %q", p.Status, p.Text(".field-error"))
		}
		u, _ := b.DB.UserByEmail(ctx, ten.OwnerEmail)
		if ms, _ := b.DB.Memberships(ctx, u.ID); len(ms) != 2 {
			t.Errorf("memberships %+v, want the old workspace and the new", ms)
		}
		if p := b.NewAdminClient(t).Login(ten.OwnerEmail, ten.Password, ""); p.Status != http.StatusSeeOther {
			t.Errorf("the password changed: signing in gives %d", p.Status)
		}
	})

	t.Run("Expired", func(t *testing.T) {
		tok := invite(t, unique("old")+"@example.com", time.Now().Add(-accounts.InvitationLifetime-time.Hour))
		p := b.NewAdminClient(t).Get("/admin/signup?invitation=" + tok)
		if p.Status != http.StatusGone || !strings.Contains(p.Text("#signup-problem"), "invitations work for 7 days") ||
			!strings.Contains(p.Body, "ask the person who invited you for a new invitation") {
			t.Errorf("%d %q", p.Status, p.Text("#signup-problem"))
		}
	})
}

// TestSignUpClosed is the default: no sign-up anywhere.
func TestSignUpClosed(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	c := b.NewAdminClient(t)
	if p := c.Get("/admin/login"); p.Doc.Find("#signup-link").Length() != 0 || strings.Contains(p.Body, "/admin/signup") {
		t.Error("the sign-in page links to sign-up")
	}
	for _, path := range []string{"/admin/signup", "/admin/signup/sent", "/admin/signup/confirm?token=x", "/admin/signup?invitation=x"} {
		if p := c.Get(path); p.Status != http.StatusNotFound || !strings.Contains(p.Text("#signup-problem"), "not created from this page") {
			t.Errorf("%s: %d %q", path, p.Status, p.Text("#signup-problem"))
		}
	}
	c.Get("/admin/login")
	for _, path := range []string{"/admin/signup", "/admin/signup/confirm"} {
		if p := c.Submit(path, url.Values{"email": {"x@example.com"}, "password": {"a long password"}, "workspace": {"X"}, "token": {"x"}}); p.Status != http.StatusNotFound {
			t.Errorf("POST %s: %d", path, p.Status)
		}
	}
}
