// Package security is the dashboard's account safety: a person's own
// account page (/admin/account: the password, the sessions, two-step
// sign-in), the sign-in's second step (/admin/login/code) and the
// sessions' index written at sign-in, and the owner's page of the tenant's
// sign-in rules (/admin/security), whose requirement of two-step sign-in
// RequireAdmin enforces through Admit. Every change is in the audit log.
package security

import (
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db/accounts"
	"github.com/parley/parley/db/audit"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/views"
)

// Security is the dashboard's account safety area.
type Security struct{ *handlers.Base }

// New builds the area over the Base web builds.
func New(b *handlers.Base) *Security { return &Security{b} }

// Session keys of the sign-in's second step and of the signed-in session.
const (
	// sessPendingUser is the person whose password was right, until their
	// code is; sessPendingAt when (Unix seconds), sessPendingNext where to
	// go after. The session is not signed in meanwhile.
	sessPendingUser = "pendingUserID"
	sessPendingAt   = "pendingAt"
	sessPendingNext = "pendingNext"
	// sessTwoFactor is "1" once the session passed two-step sign-in or set
	// it up: a tenant's requirement is met.
	sessTwoFactor = "twoFactor"
	// sessSeenAt is when the session's last activity was written (Unix seconds).
	sessSeenAt = "seenAt"
	// sessRecoveryCodes holds new recovery codes until the page that shows them once.
	sessRecoveryCodes = "recoveryCodes"
)

// pendingLifetime is how long the code may take after the password.
const pendingLifetime = 5 * time.Minute

// LoginThrottles are the keys a sign-in attempt (a password or a code) is
// throttled by: its client address, and its client address with the
// account it names. Failures slow the next attempts of these keys down and
// never an account as such, so that nobody can lock an owner out, and an
// address that has not failed is never kept waiting. The address throttle
// lets an office behind one address mistype a few times; the pair's, one owner.
func LoginThrottles(ip, email string) []accounts.LoginThrottle {
	return []accounts.LoginThrottle{
		{Key: LoginAddressKey(ip), Free: 10, Base: time.Second, Max: 15 * time.Minute, Memory: time.Hour},
		{Key: "login:pair:" + ip + " " + strings.ToLower(email), Free: 3, Base: time.Second, Max: 15 * time.Minute,
			Memory: time.Hour, ClearOnSuccess: true},
	}
}

// LoginAddressKey is the throttle key of a client address's sign-ins.
func LoginAddressKey(ip string) string { return "login:ip:" + ip }

// WaitWords says a wait of secs seconds in words: seconds up to a minute, then minutes.
func WaitWords(secs int64) string {
	switch {
	case secs <= 1:
		return "1 second"
	case secs <= 60:
		return strconv.FormatInt(secs, 10) + " seconds"
	default:
		return strconv.FormatInt((secs+59)/60, 10) + " minutes"
	}
}

// throttled starts an attempt of the person's from the request's address
// (LoginThrottles): a refused one sets Retry-After and gets its words.
func (h *Security) throttled(c echo.Context, email string) (accounts.LoginAttempt, string, error) {
	attempt, err := h.DB.StartLoginAttempt(c.Request().Context(), LoginThrottles(c.RealIP(), email), h.Clock())
	if err != nil || attempt.Wait <= 0 {
		return attempt, "", err
	}
	secs := int64(math.Ceil(attempt.Wait.Seconds()))
	c.Response().Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	return attempt, "Too many failed attempts. Try again in " + WaitWords(secs) + ".", nil
}

// SignIn signs in user, whose password was right: at once, or, with
// two-step sign-in on, after the code's step (ShowCodePage), the session
// holding no signed-in person meanwhile. next is where to go after.
func SignIn(c echo.Context, b *handlers.Base, user accounts.User, next string) error {
	h := &Security{b}
	ctx := c.Request().Context()
	tf, err := h.DB.TwoFactorOf(ctx, user.ID)
	if err != nil && parley.ErrorKind(err) != parley.KindNotFound {
		return err
	}
	if tf.On() {
		// A new token: the step between is a change of privilege too.
		if err := h.Sessions.RenewToken(ctx); err != nil {
			return err
		}
		h.Sessions.Remove(ctx, dash.SessUserID)
		h.Sessions.Put(ctx, sessPendingUser, user.ID)
		h.Sessions.Put(ctx, sessPendingAt, h.Clock().Unix())
		h.Sessions.Put(ctx, sessPendingNext, next)
		return c.Redirect(http.StatusSeeOther, "/admin/login/code")
	}
	return h.finishSignIn(c, user, next, false)
}

// SignInTo is SignIn into tenantID, one of the user's: a person who just
// joined its team or created it signs in to it, through the second step
// when their account has two-step sign-in on.
func SignInTo(c echo.Context, b *handlers.Base, user accounts.User, tenantID, next string) error {
	b.Sessions.Put(c.Request().Context(), dash.SessTenantID, tenantID)
	return SignIn(c, b, user, next)
}

// finishSignIn makes the session the user's: a new token (against session
// fixation), the password's stamp, the session's row among the user's
// sessions, and the sign-in in the audit log of the tenant signed in to.
func (h *Security) finishSignIn(c echo.Context, user accounts.User, next string, twoFactor bool) error {
	ctx := c.Request().Context()
	if err := h.Sessions.RenewToken(ctx); err != nil {
		return err
	}
	for _, k := range []string{sessPendingUser, sessPendingAt, sessPendingNext} {
		h.Sessions.Remove(ctx, k)
	}
	now := h.Clock()
	h.Sessions.Put(ctx, dash.SessUserID, user.ID)
	h.Sessions.Put(ctx, dash.SessPasswordStamp, auth.PasswordStamp(user.PasswordHash))
	h.Sessions.Put(ctx, sessSeenAt, now.Unix())
	if twoFactor {
		h.Sessions.Put(ctx, sessTwoFactor, "1")
	} else {
		h.Sessions.Remove(ctx, sessTwoFactor)
	}
	// The session's row must exist before the index of it references it.
	token, _, err := h.Sessions.Commit(ctx)
	if err != nil {
		return err
	}
	if err := h.DB.RecordSession(ctx, user.ID, auth.SessionKey(token),
		accounts.Session{UserAgent: c.Request().UserAgent(), Address: c.RealIP()}, now); err != nil {
		return err
	}
	ms, err := h.DB.Memberships(ctx, user.ID)
	if err != nil {
		return err
	}
	if len(ms) > 0 {
		tenantID := ms[0].TenantID
		want := h.Sessions.GetString(ctx, dash.SessTenantID)
		for _, m := range ms {
			if m.TenantID == want {
				tenantID = want
			}
		}
		details := map[string]any{}
		if twoFactor {
			details["twoStep"] = true
		}
		h.record(c, tenantID, user, audit.ActionSignedIn, details)
	}
	return c.Redirect(http.StatusSeeOther, SafeNext(next))
}

// SafeNext keeps the redirects after signing in on the dashboard.
func SafeNext(next string) string {
	if strings.HasPrefix(next, "/admin") && !strings.HasPrefix(next, "//") && !strings.Contains(next, "\\") {
		return next
	}
	return "/admin"
}

// record adds an action of the signed-in person to the tenant's audit log.
// The change is made already: a failure to record it is logged, not shown.
func (h *Security) record(c echo.Context, tenantID string, user accounts.User, action string, details map[string]any) {
	err := h.DB.RecordAudit(c.Request().Context(), audit.Entry{
		TenantID: tenantID, At: h.Clock(), Actor: audit.Actor{Kind: audit.ActorPerson, ID: user.ID, Name: user.Email},
		Action: action, Target: user.Email, TargetID: user.ID, Address: c.RealIP(), Details: details,
	})
	if err != nil {
		h.Log(c).Error("recording an account action", "action", action, "err", err)
	}
}

// pending is the person whose password was right, waiting for their code;
// ok is false when none waits or the wait is over.
func (h *Security) pending(c echo.Context) (userID string, ok bool) {
	ctx := c.Request().Context()
	userID = h.Sessions.GetString(ctx, sessPendingUser)
	at := h.Sessions.GetInt64(ctx, sessPendingAt)
	if userID == "" || h.Clock().Sub(time.Unix(at, 0)) > pendingLifetime {
		return "", false
	}
	return userID, true
}

// startAgain sends the browser back to the password, saying why.
func (h *Security) startAgain(c echo.Context, why string) error {
	ctx := c.Request().Context()
	for _, k := range []string{sessPendingUser, sessPendingAt, sessPendingNext} {
		h.Sessions.Remove(ctx, k)
	}
	h.Sessions.Put(ctx, dash.SessFlash, why)
	return c.Redirect(http.StatusSeeOther, "/admin/login")
}

// ShowCodePage asks for the code of the sign-in's second step.
func (h *Security) ShowCodePage(c echo.Context) error {
	if _, ok := h.pending(c); !ok {
		return h.startAgain(c, "Sign in with your password first.")
	}
	return handlers.Render(c, http.StatusOK, views.LoginCode(views.LoginCodeForm{CSRF: dash.CSRFToken(c)}))
}

// SignInWithCode checks the second step's code, a TOTP code (each accepted
// once) or an unused recovery code, throttled as the password is, and
// signs the person in when it is right.
func (h *Security) SignInWithCode(c echo.Context) error {
	ctx := c.Request().Context()
	userID, ok := h.pending(c)
	if !ok {
		return h.startAgain(c, "That took too long: sign in again.")
	}
	user, err := h.DB.UserByID(ctx, userID)
	if parley.ErrorKind(err) == parley.KindNotFound {
		return h.startAgain(c, "Sign in again.")
	}
	if err != nil {
		return err
	}
	form := views.LoginCodeForm{CSRF: dash.CSRFToken(c)}
	attempt, wait, err := h.throttled(c, user.Email)
	if err != nil {
		return err
	}
	if wait != "" {
		form.Error = wait
		return handlers.Render(c, http.StatusTooManyRequests, views.LoginCode(form))
	}
	ok, msg, err := h.checkCode(c, user.ID, c.FormValue("code"))
	if err != nil {
		return err
	}
	if !ok {
		// The attempt was counted as a failure when it started.
		form.Error = msg
		return handlers.Render(c, http.StatusUnauthorized, views.LoginCode(form))
	}
	if err := h.DB.ForgiveLoginAttempt(ctx, attempt); err != nil {
		return err
	}
	return h.finishSignIn(c, user, h.Sessions.GetString(ctx, sessPendingNext), true)
}

// checkCode uses code, a TOTP code of the user's authenticator or one of
// their recovery codes, once; msg says why a code is refused.
func (h *Security) checkCode(c echo.Context, userID, code string) (ok bool, msg string, err error) {
	ctx := c.Request().Context()
	typed := auth.NormalizeCode(code)
	if typed == "" {
		return false, "Enter the code your authenticator app shows.", nil
	}
	tf, err := h.DB.TwoFactorOf(ctx, userID)
	if parley.ErrorKind(err) == parley.KindNotFound || (err == nil && !tf.On()) {
		return false, "Two-step sign-in is off for this account: sign in again.", nil
	}
	if err != nil {
		return false, "", err
	}
	if len(typed) == auth.TOTPDigits && strings.Trim(typed, "0123456789") == "" {
		secret, err := h.Box.Open(tf.Secret)
		if err != nil {
			return false, "", err
		}
		step, match := auth.MatchTOTP(secret, typed, h.Clock())
		if !match {
			return false, "That code is not right. Check the time on your phone, and enter the code the app shows now.", nil
		}
		used, err := h.DB.UseTOTPStep(ctx, userID, step)
		if err != nil {
			return false, "", err
		}
		if !used {
			return false, "That code was used already: wait for the next one in your app.", nil
		}
		return true, "", nil
	}
	used, err := h.DB.UseRecoveryCode(ctx, userID, auth.HashRecoveryCode(typed), h.Clock())
	if err != nil {
		return false, "", err
	}
	if !used {
		return false, "That is not one of your recovery codes, or it was used already.", nil
	}
	return true, "", nil
}

// SignOut ends the session, and records it in the tenant's audit log.
func (h *Security) SignOut(c echo.Context) error {
	a := dash.AdminFrom(c)
	if err := h.Sessions.Destroy(c.Request().Context()); err != nil {
		return err
	}
	h.record(c, a.Tenant.ID, a.User, audit.ActionSignedOut, nil)
	return c.Redirect(http.StatusSeeOther, "/admin/login")
}

// errSessionEnded is touch's answer for a session ended elsewhere.
var errSessionEnded = errors.New("session ended")

// touch writes the session's last activity. A session with no row was
// ended from another one (a request in flight as it was may have stored it
// again): it ends here. One older than the sessions' index (it never wrote
// its activity, listed) gets its row.
func (h *Security) touch(c echo.Context, listed bool, now time.Time) error {
	ctx := c.Request().Context()
	token := h.Sessions.Token(ctx)
	ok, err := h.DB.TouchSession(ctx, auth.SessionKey(token), c.RealIP(), now)
	switch {
	case err != nil:
		return err
	case !ok && listed:
		return errSessionEnded
	case !ok:
		if err := h.DB.RecordSession(ctx, h.Sessions.GetString(ctx, dash.SessUserID), auth.SessionKey(token),
			accounts.Session{UserAgent: c.Request().UserAgent(), Address: c.RealIP()}, now); err != nil {
			return err
		}
	}
	h.Sessions.Put(ctx, sessSeenAt, now.Unix())
	return nil
}

// Admit is RequireAdmin's last step for a signed-in request to tenant m:
// it moves the session's last activity (at most every
// accounts.SessionSeenEvery) and, when the tenant requires two-step
// sign-in of a person who has not set it up, answers where to send them
// ("" to go on). ended is true for a session ended from another: the
// caller signs it out.
func Admit(c echo.Context, b *handlers.Base, m accounts.Membership) (target string, ended bool, err error) {
	h := &Security{b}
	ctx := c.Request().Context()
	now := h.Clock()
	if ro, _ := c.Get(dash.ReadOnlySession).(bool); !ro {
		if seen := h.Sessions.GetInt64(ctx, sessSeenAt); now.Sub(time.Unix(seen, 0)) >= accounts.SessionSeenEvery {
			if err := h.touch(c, seen != 0, now); errors.Is(err, errSessionEnded) {
				return "", true, nil
			} else if err != nil {
				return "", false, err
			}
		}
	}
	if !m.RequireTwoFactor || h.Sessions.GetString(ctx, sessTwoFactor) == "1" {
		return "", false, nil
	}
	a := dash.AdminFrom(c)
	tf, err := h.DB.TwoFactorOf(ctx, a.User.ID)
	if err != nil && parley.ErrorKind(err) != parley.KindNotFound {
		return "", false, err
	}
	if tf.On() {
		// Set up in another session since this one signed in.
		h.Sessions.Put(ctx, sessTwoFactor, "1")
		return "", false, nil
	}
	p := c.Request().URL.Path
	if strings.HasPrefix(p, "/admin/account") || p == "/admin/logout" || p == "/admin/tenant" {
		return "", false, nil
	}
	return "/admin/account/two-factor", false, nil
}
