package admin_test

import (
	"encoding/base32"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/web/webtest"
)

// auditCount is how many entries of action the tenant's audit log has by the person email.
func auditCount(t *testing.T, b *webtest.Bundle, tenantID, action, email string) int {
	t.Helper()
	var n int
	if err := b.DB.Pool().QueryRow(t.Context(), `SELECT count(*) FROM audit_log
		WHERE tenant_id = $1 AND action = $2 AND actor_kind = 'person' AND actor_name = $3`, tenantID, action, email).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestAccountPassword(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	ten := b.OwnedTenant(t, "starter")

	for _, tc := range []struct {
		name, current, password, confirm, field string
	}{
		{"WrongCurrent", "not-the-password", "a-new-password-1", "a-new-password-1", "current"},
		{"NoCurrent", "", "a-new-password-1", "a-new-password-1", "current"},
		{"TooShort", ten.Password, "short", "short", "password"},
		{"TooLong", ten.Password, strings.Repeat("x", 73), strings.Repeat("x", 73), "password"},
		{"NotConfirmed", ten.Password, "a-new-password-1", "a-new-password-2", "confirm"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := b.NewAdminClient(t)
			c.SignIn(ten)
			c.Get("/admin/account")
			p := c.Submit("/admin/account/password", url.Values{"current": {tc.current}, "password": {tc.password}, "confirm": {tc.confirm}})
			if p.Status != http.StatusUnprocessableEntity {
				t.Fatalf("%d, want 422", p.Status)
			}
			if p.Doc.Find("#"+tc.field+"[aria-invalid=true]").Length() != 1 {
				t.Errorf("the field %s is not marked invalid: %s", tc.field, p.Text(".field-error"))
			}
		})
	}

	t.Run("Changed", func(t *testing.T) {
		tn := b.OwnedTenant(t, "starter")
		here, there := b.NewAdminClient(t), b.NewAdminClient(t)
		here.SignIn(tn)
		there.SignIn(tn)
		here.Get("/admin/account")
		p := here.Submit("/admin/account/password", url.Values{"current": {tn.Password}, "password": {"a-new-password-1"}, "confirm": {"a-new-password-1"}})
		if p.Status != http.StatusSeeOther || p.Location() != "/admin/account" {
			t.Fatalf("%d to %q: %s", p.Status, p.Location(), p.Text(".field-error"))
		}
		if !here.SignedIn() {
			t.Error("the session that changed the password was signed out")
		}
		if there.SignedIn() {
			t.Error("another session of the old password is still signed in")
		}
		if p := b.NewAdminClient(t).Login(tn.OwnerEmail, tn.Password, ""); p.Status != http.StatusUnauthorized {
			t.Errorf("the old password signs in: %d", p.Status)
		}
		if p := b.NewAdminClient(t).Login(tn.OwnerEmail, "a-new-password-1", ""); p.Status != http.StatusSeeOther {
			t.Errorf("the new password does not sign in: %d", p.Status)
		}
		if n := auditCount(t, b, tn.ID, "account.password_changed", tn.OwnerEmail); n != 1 {
			t.Errorf("%d audit entries of the change", n)
		}
	})
}

// listedSessions reads the account page's sessions: each row's id, and
// the id of the one marked as this device.
func listedSessions(t *testing.T, c *webtest.AdminClient) (ids []string, current string) {
	t.Helper()
	p := c.Get("/admin/account")
	if p.Status != http.StatusOK {
		t.Fatalf("account page: %d", p.Status)
	}
	for _, row := range p.Doc.Find("#session-list tbody tr").EachIter() {
		id := strings.TrimPrefix(row.AttrOr("id", ""), "session-")
		ids = append(ids, id)
		if row.Find("#this-device").Length() == 1 {
			current = id
		}
	}
	return ids, current
}

func TestAccountSessions(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	ten := b.OwnedTenant(t, "starter")
	here, there, third := b.NewAdminClient(t), b.NewAdminClient(t), b.NewAdminClient(t)
	here.SignIn(ten)
	there.SignIn(ten)
	ids, current := listedSessions(t, here)
	if len(ids) != 2 || current == "" {
		t.Fatalf("listed %v, this device %q; want 2 sessions, one marked", ids, current)
	}
	other := ids[0]
	if other == current {
		other = ids[1]
	}
	if n := auditCount(t, b, ten.ID, "account.signed_in", ten.OwnerEmail); n != 2 {
		t.Errorf("%d sign-ins in the audit log, want 2", n)
	}

	stranger := b.OwnedTenant(t, "starter")
	sc := b.NewAdminClient(t)
	sc.SignIn(stranger)
	_, strangers := listedSessions(t, sc)
	here.ExpectNotFound(t, []webtest.AdminCall{
		{Name: "AnotherPersonsSession", Method: "POST", Path: "/admin/account/sessions/" + strangers + "/end", Form: url.Values{}},
		{Name: "NotAnID", Method: "POST", Path: "/admin/account/sessions/nope/end", Form: url.Values{}},
		{Name: "ThisSession", Method: "POST", Path: "/admin/account/sessions/" + current + "/end", Form: url.Values{}},
	})
	if !sc.SignedIn() {
		t.Fatal("another person's session was ended")
	}

	here.Get("/admin/account")
	if p := here.Submit("/admin/account/sessions/"+other+"/end", nil); p.Status != http.StatusSeeOther {
		t.Fatalf("ending a session: %d", p.Status)
	}
	if there.SignedIn() {
		t.Error("the ended session still reaches the dashboard")
	}
	if !here.SignedIn() {
		t.Error("ending another session signed this one out")
	}
	if ids, _ := listedSessions(t, here); len(ids) != 1 {
		t.Errorf("%d sessions listed after ending one", len(ids))
	}

	there.SignIn(ten)
	third.SignIn(ten)
	here.Get("/admin/account")
	if p := here.Submit("/admin/account/sessions/end-others", nil); p.Status != http.StatusSeeOther {
		t.Fatalf("ending the others: %d", p.Status)
	}
	if there.SignedIn() || third.SignedIn() {
		t.Error("another session survived Sign out all other sessions")
	}
	if !here.SignedIn() {
		t.Error("Sign out all other sessions signed this one out")
	}
	if n := auditCount(t, b, ten.ID, "account.sessions_ended", ten.OwnerEmail); n != 2 {
		t.Errorf("%d audit entries of ended sessions, want 2", n)
	}

	here.Get("/admin")
	here.Submit("/admin/logout", nil)
	if n := auditCount(t, b, ten.ID, "account.signed_out", ten.OwnerEmail); n != 1 {
		t.Errorf("%d sign-outs in the audit log, want 1", n)
	}
	var rows int
	if err := b.DB.Pool().QueryRow(t.Context(), `SELECT count(*) FROM user_sessions u JOIN users p ON p.id = u.user_id
		WHERE p.email = $1`, ten.OwnerEmail).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 0 {
		t.Errorf("%d sessions still indexed after every one ended", rows)
	}
}

// totpSecret reads the setup page's key.
func totpSecret(t *testing.T, p webtest.AdminPage) []byte {
	t.Helper()
	key := strings.ReplaceAll(p.Text("#two-factor-key"), " ", "")
	secret, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(key)
	if err != nil || len(secret) == 0 {
		t.Fatalf("the setup page's key %q: %v", key, err)
	}
	if !strings.Contains(p.Text("#two-factor-uri"), "secret="+key) {
		t.Errorf("the otpauth address %q does not hold the key", p.Text("#two-factor-uri"))
	}
	return secret
}

// setUpTwoFactor turns two-step sign-in on for c's person and returns the
// secret and the recovery codes.
func setUpTwoFactor(t *testing.T, c *webtest.AdminClient, now time.Time) ([]byte, []string) {
	t.Helper()
	p := c.Get("/admin/account/two-factor")
	if p.Status != http.StatusOK {
		t.Fatalf("setup page: %d", p.Status)
	}
	secret := totpSecret(t, p)
	p = c.Submit("/admin/account/two-factor", url.Values{"code": {auth.TOTPCode(secret, auth.TOTPStepAt(now))}})
	if p.Status != http.StatusSeeOther || p.Location() != "/admin/account/recovery-codes" {
		t.Fatalf("confirming the setup: %d to %q: %s", p.Status, p.Location(), p.Text(".field-error"))
	}
	p = c.Get("/admin/account/recovery-codes")
	codes := strings.Fields(p.Text("#recovery-codes"))
	if len(codes) != auth.RecoveryCodes {
		t.Fatalf("%d recovery codes shown", len(codes))
	}
	return secret, codes
}

// signInWithCode signs c in with the password, then code; it returns the code step's answer.
func signInWithCode(t *testing.T, c *webtest.AdminClient, ten webtest.Tenant, code string) webtest.AdminPage {
	t.Helper()
	p := c.Login(ten.OwnerEmail, ten.Password, "")
	if p.Status != http.StatusSeeOther || p.Location() != "/admin/login/code" {
		t.Fatalf("password step: %d to %q", p.Status, p.Location())
	}
	c.Get("/admin/login/code")
	return c.Submit("/admin/login/code", url.Values{"code": {code}})
}

func TestTwoFactor(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	advance := webtest.ManualClock(b)
	now := func() time.Time { return b.Srv.Base.Now() }
	ten := b.OwnedTenant(t, "starter")
	owner := b.NewAdminClient(t)
	owner.SignIn(ten)

	p := owner.Get("/admin/account/two-factor")
	secret := totpSecret(t, p)
	if src := p.Doc.Find("img#two-factor-qr").AttrOr("src", ""); !strings.HasPrefix(src, "data:image/svg+xml;base64,") {
		t.Errorf("no QR code drawn on the page: %.40q", src)
	}
	if again := totpSecret(t, owner.Get("/admin/account/two-factor")); string(again) != string(secret) {
		t.Error("reloading the setup page changed the key the app took")
	}
	for _, code := range []string{"", "000000", auth.TOTPCode(secret, auth.TOTPStepAt(now())-3)} {
		if p := owner.Submit("/admin/account/two-factor", url.Values{"code": {code}}); p.Status != http.StatusUnprocessableEntity {
			t.Errorf("setup with code %q: %d, want 422", code, p.Status)
		}
	}
	if p := owner.Get("/admin/account"); p.Text("#two-factor-status") == "" || strings.HasPrefix(p.Text("#two-factor-status"), "On") {
		t.Fatal("two-step sign-in is on before its code was confirmed")
	}
	secret, codes := setUpTwoFactor(t, owner, now())
	if p := owner.Get("/admin/account/recovery-codes"); p.Status != http.StatusSeeOther {
		t.Errorf("the recovery codes are shown twice: %d", p.Status)
	}
	if n := auditCount(t, b, ten.ID, "account.two_factor_on", ten.OwnerEmail); n != 1 {
		t.Errorf("%d audit entries of turning it on", n)
	}

	t.Run("PasswordAloneDoesNotSignIn", func(t *testing.T) {
		c := b.NewAdminClient(t)
		c.Login(ten.OwnerEmail, ten.Password, "")
		if c.SignedIn() {
			t.Fatal("the password alone signed in")
		}
	})

	// The code that confirmed the setup is not taken again.
	setupCode := auth.TOTPCode(secret, auth.TOTPStepAt(now()))
	c := b.NewAdminClient(t)
	if p := signInWithCode(t, c, ten, setupCode); p.Status != http.StatusUnauthorized || !strings.Contains(p.Text("#login-error"), "used already") {
		t.Fatalf("replayed code: %d %q", p.Status, p.Text("#login-error"))
	}
	advance(auth.TOTPStep)
	code := auth.TOTPCode(secret, auth.TOTPStepAt(now()))
	if p := c.Submit("/admin/login/code", url.Values{"code": {"123 456"}}); p.Status != http.StatusUnauthorized {
		t.Fatalf("wrong code: %d", p.Status)
	}
	if p := c.Submit("/admin/login/code", url.Values{"code": {code[:3] + " " + code[3:]}}); p.Status != http.StatusSeeOther || p.Location() != "/admin" {
		t.Fatalf("right code: %d to %q: %s", p.Status, p.Location(), p.Text("#login-error"))
	}
	if !c.SignedIn() {
		t.Fatal("not signed in after the code")
	}
	if p := signInWithCode(t, b.NewAdminClient(t), ten, code); p.Status != http.StatusUnauthorized {
		t.Errorf("the same code twice: %d", p.Status)
	}

	t.Run("RecoveryCode", func(t *testing.T) {
		c := b.NewAdminClient(t)
		if p := signInWithCode(t, c, ten, strings.ToUpper(codes[0])); p.Status != http.StatusSeeOther || !c.SignedIn() {
			t.Fatalf("recovery code: %d %q", p.Status, p.Text("#login-error"))
		}
		if p := signInWithCode(t, b.NewAdminClient(t), ten, codes[0]); p.Status != http.StatusUnauthorized {
			t.Errorf("a used recovery code: %d", p.Status)
		}
		if p := signInWithCode(t, b.NewAdminClient(t), ten, "abcde-fghjk"); p.Status != http.StatusUnauthorized {
			t.Errorf("a made-up recovery code: %d", p.Status)
		}
		if left := owner.Get("/admin/account").Text("#two-factor"); !strings.Contains(left, "9 of 10 recovery codes left") {
			t.Errorf("account page: %q", left)
		}
	})

	t.Run("Throttled", func(t *testing.T) {
		c := b.NewAdminClient(t)
		var p webtest.AdminPage
		for i := 0; i < 6 && p.Status != http.StatusTooManyRequests; i++ {
			if i == 0 {
				p = signInWithCode(t, c, ten, "000000")
			} else {
				p = c.Submit("/admin/login/code", url.Values{"code": {"000000"}})
			}
		}
		if p.Status != http.StatusTooManyRequests || p.Header.Get("Retry-After") == "" {
			t.Fatalf("repeated wrong codes: %d, Retry-After %q", p.Status, p.Header.Get("Retry-After"))
		}
		// The next step's code, which is right and never used yet.
		good := auth.TOTPCode(secret, auth.TOTPStepAt(now())+1)
		if p := c.Submit("/admin/login/code", url.Values{"code": {good}}); p.Status != http.StatusTooManyRequests {
			t.Errorf("a right code while throttled: %d", p.Status)
		}
	})

	t.Run("TooSlow", func(t *testing.T) {
		c := b.NewAdminClient(t)
		c.Login(ten.OwnerEmail, ten.Password, "")
		c.Get("/admin/login/code")
		advance(6 * time.Minute)
		good := auth.TOTPCode(secret, auth.TOTPStepAt(now()))
		if p := c.Submit("/admin/login/code", url.Values{"code": {good}}); p.Status != http.StatusSeeOther || p.Location() != "/admin/login" {
			t.Fatalf("a code after 6 minutes: %d to %q", p.Status, p.Location())
		}
		if c.SignedIn() {
			t.Error("signed in after the wait ran out")
		}
	})

	t.Run("NoPendingSignIn", func(t *testing.T) {
		c := b.NewAdminClient(t)
		if p := c.Get("/admin/login/code"); p.Status != http.StatusSeeOther || p.Location() != "/admin/login" {
			t.Errorf("the code page without a password: %d to %q", p.Status, p.Location())
		}
	})

	t.Run("TurnOff", func(t *testing.T) {
		owner.Get("/admin/account")
		for _, proof := range []string{"", "not-the-password", "000000"} {
			if p := owner.Submit("/admin/account/two-factor/off", url.Values{"proof": {proof}}); p.Status != http.StatusUnprocessableEntity {
				t.Errorf("turning off with %q: %d, want 422", proof, p.Status)
			}
		}
		// The owner's own failures slow the pair down: a fresh address for the right one.
		owner.IP = b.NewAdminClient(t).IP
		if p := owner.Submit("/admin/account/two-factor/off", url.Values{"proof": {ten.Password}}); p.Status != http.StatusSeeOther {
			t.Fatalf("turning off with the password: %d %s", p.Status, p.Text(".field-error"))
		}
		if p := b.NewAdminClient(t).Login(ten.OwnerEmail, ten.Password, ""); p.Location() != "/admin" {
			t.Errorf("after turning it off, the password leads to %q", p.Location())
		}
		if n := auditCount(t, b, ten.ID, "account.two_factor_off", ten.OwnerEmail); n != 1 {
			t.Errorf("%d audit entries of turning it off", n)
		}
	})
}

func TestTwoFactorRequired(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	ten := b.OwnedTenant(t, "starter")
	owner := b.NewAdminClient(t)
	owner.SignIn(ten)

	// An agent of the tenant.
	agent := webtest.Tenant{Password: "agent-password-1"}
	agent.OwnerEmail = "agent@" + ten.Slug + ".test"
	hash, _ := b.Srv.Base.Passwords.Hash(agent.Password)
	if err := b.DB.AddOwner(t.Context(), ten.ID, agent.OwnerEmail, hash, false); err != nil {
		t.Fatal(err)
	}
	if _, err := b.DB.Pool().Exec(t.Context(), `UPDATE tenant_members SET role = 'agent'
		WHERE user_id = (SELECT id FROM users WHERE email = $1)`, agent.OwnerEmail); err != nil {
		t.Fatal(err)
	}
	member := b.NewAdminClient(t)
	member.SignIn(agent)
	if p := member.Get("/admin/security"); p.Status != http.StatusForbidden {
		t.Errorf("an agent opens the sign-in rules: %d", p.Status)
	}

	owner.Get("/admin/security")
	if p := owner.Submit("/admin/security", url.Values{"require": {"on"}}); p.Status != http.StatusUnprocessableEntity {
		t.Fatalf("requiring it without it for oneself: %d", p.Status)
	}
	setUpTwoFactor(t, owner, b.Srv.Base.Now())
	owner.Get("/admin/security")
	if p := owner.Submit("/admin/security", url.Values{"require": {"on"}}); p.Status != http.StatusSeeOther {
		t.Fatalf("requiring it: %d %s", p.Status, p.Text("#security-error"))
	}
	if n := auditCount(t, b, ten.ID, "tenant.two_factor_required", ten.OwnerEmail); n != 1 {
		t.Errorf("%d audit entries of the requirement", n)
	}
	p := owner.Get("/admin/security")
	if !strings.Contains(p.Text("#security-members"), "Not set up") {
		t.Errorf("the members' list does not show the agent without it: %q", p.Text("#security-members"))
	}

	for _, path := range []string{"/admin", "/admin/conversations", "/admin/settings"} {
		if p := member.Get(path); p.Status != http.StatusSeeOther || p.Location() != "/admin/account/two-factor" {
			t.Errorf("GET %s without two-step sign-in: %d to %q", path, p.Status, p.Location())
		}
	}
	if p := member.Get("/admin/account"); p.Status != http.StatusOK {
		t.Errorf("the account page: %d", p.Status)
	}
	if p := member.Get("/admin/account/two-factor"); p.Status != http.StatusOK || p.Doc.Find("#two-factor-needed").Length() != 1 {
		t.Errorf("the setup page: %d, says why: %v", p.Status, p.Doc.Find("#two-factor-needed").Length() == 1)
	}
	setUpTwoFactor(t, member, b.Srv.Base.Now())
	if p := member.Get("/admin/conversations"); p.Status != http.StatusOK {
		t.Errorf("the agent's inbox after setting it up: %d to %q", p.Status, p.Location())
	}
	member.Get("/admin/account")
	if p := member.Submit("/admin/account/two-factor/off", url.Values{"proof": {agent.Password}}); p.Status != http.StatusForbidden {
		t.Errorf("turning it off while the tenant requires it: %d", p.Status)
	}
}

// TestAccountSessionActivity checks the sessions' last activity, written at
// most every 5 minutes, and that a session ended while a request of its
// browser was in flight (which stores the session again as it answers)
// ends at its next write of its activity.
func TestAccountSessionActivity(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	advance := webtest.ManualClock(b)
	ten := b.OwnedTenant(t, "starter")
	here, there := b.NewAdminClient(t), b.NewAdminClient(t)
	here.SignIn(ten)
	thereCookie := there.SignIn(ten).Cookie("parley_session")
	seen := func() time.Time {
		t.Helper()
		var at time.Time
		if err := b.DB.Pool().QueryRow(t.Context(), `SELECT seen_at FROM user_sessions WHERE session_key = $1`,
			auth.SessionKey(thereCookie.Value)).Scan(&at); err != nil {
			t.Fatal(err)
		}
		return at
	}
	first := seen()
	advance(time.Minute)
	there.Get("/admin")
	if !seen().Equal(first) {
		t.Errorf("a request a minute later wrote the activity")
	}
	advance(5 * time.Minute)
	there.Get("/admin")
	if got := seen(); !got.After(first) {
		t.Errorf("a request 6 minutes later left the activity at %v", got)
	}

	// The session as its in-flight request would store it again.
	var data []byte
	var expiry time.Time
	key := auth.SessionKey(thereCookie.Value)
	if err := b.DB.Pool().QueryRow(t.Context(), `SELECT data, expiry FROM sessions WHERE token = $1`, key).Scan(&data, &expiry); err != nil {
		t.Fatal(err)
	}
	ids, current := listedSessions(t, here)
	for _, id := range ids {
		if id != current {
			here.Submit("/admin/account/sessions/"+id+"/end", nil)
		}
	}
	if _, err := b.DB.Pool().Exec(t.Context(), `INSERT INTO sessions (token, data, expiry) VALUES ($1, $2, $3)`, key, data, expiry); err != nil {
		t.Fatal(err)
	}
	advance(6 * time.Minute)
	if there.SignedIn() {
		t.Error("a session ended, then stored again by a request in flight, is still signed in")
	}
	if !here.SignedIn() {
		t.Error("the session that ended the other was signed out")
	}
}
