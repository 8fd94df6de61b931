package admin

import (
	"errors"
	"net/http"
	netmail "net/mail"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/accounts"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/jobs"
	"github.com/parley/parley/views"
)

// Reset-link requests: at most resetAddressLimit per window from one client
// address, and resetEmailLimit for one email, whether an account has it or
// not (so the limit tells nothing either).
const (
	resetAddressLimit = 10
	resetEmailLimit   = 3
	resetWindow       = time.Hour
)

// sessResetSent is the address a reset link was just asked for, shown once
// on the page the request redirects to.
const sessResetSent = "resetSent"

// ShowForgotPasswordPage asks for the email of the account whose password
// was forgotten; on a server without email it says how an operator resets
// a password instead.
func (h *Account) ShowForgotPasswordPage(c echo.Context) error {
	f := views.ForgotPasswordForm{CSRF: dash.CSRFToken(c), ByEmail: h.ResetByEmail}
	if sent := h.Sessions.PopString(c.Request().Context(), sessResetSent); sent != "" {
		f.Sent, f.Email = true, sent
	}
	return handlers.Render(c, http.StatusOK, views.ForgotPassword(f))
}

// SendPasswordReset enqueues the email of a reset link and answers the same
// whether an account has the address or not: the job looks the account up,
// so that neither the answer nor its time tells. Requests are limited per
// client address and per email.
func (h *Account) SendPasswordReset(c echo.Context) error {
	ctx := c.Request().Context()
	email := strings.TrimSpace(c.FormValue("email"))
	f := views.ForgotPasswordForm{CSRF: dash.CSRFToken(c), ByEmail: h.ResetByEmail, Email: email}
	if !h.ResetByEmail {
		return handlers.Render(c, http.StatusOK, views.ForgotPassword(f))
	}
	if a, err := netmail.ParseAddress(email); err != nil || a.Address != email {
		f.Errors = views.Errors{"email": "Enter the email you sign in with, like name@example.com."}
		return handlers.Render(c, http.StatusUnprocessableEntity, views.ForgotPassword(f))
	}
	_, counted, err := h.DB.HitWithin(ctx, []db.Window{
		{Key: "reset:ip:" + c.RealIP(), Length: resetWindow, Limit: resetAddressLimit},
		{Key: "reset:email:" + strings.ToLower(email), Length: resetWindow, Limit: resetEmailLimit},
	}, h.Clock())
	if err != nil {
		return err
	}
	if !counted {
		f.Error = "Too many reset links were asked for, for this address or from your network. Wait an hour and try again."
		return handlers.Render(c, http.StatusTooManyRequests, views.ForgotPassword(f))
	}
	if err := h.DB.InsertJob(ctx, jobs.PasswordResetArgs{Email: email}); err != nil {
		return err
	}
	h.Sessions.Put(ctx, sessResetSent, email)
	return c.Redirect(http.StatusSeeOther, "/admin/forgot-password")
}

// resetProblem says why token's link cannot reset a password, or "".
func (h *core) resetProblem(c echo.Context, token string) (views.ResetProblem, error) {
	if token == "" {
		return views.ResetLinkUnknown, nil
	}
	r, err := h.DB.PasswordResetByHash(c.Request().Context(), auth.HashResetToken(token))
	switch {
	case parley.ErrorKind(err) == parley.KindNotFound:
		return views.ResetLinkUnknown, nil
	case err != nil:
		return "", err
	case r.UsedAt != nil:
		return views.ResetLinkUsed, nil
	case !h.Clock().Before(r.ExpiresAt):
		return views.ResetLinkExpired, nil
	}
	return "", nil
}

// resetLinkStatus is the status of the page of a link that does not work.
func resetLinkStatus(p views.ResetProblem) int {
	if p == views.ResetLinkUnknown {
		return http.StatusNotFound
	}
	return http.StatusGone
}

// ShowResetPasswordPage is the page an emailed link opens: the new
// password's form, or why the link does not work and what to do.
func (h *Account) ShowResetPasswordPage(c echo.Context) error {
	// The token is in this page's address: no link or asset of the page
	// passes it on in a Referer.
	c.Response().Header().Set("Referrer-Policy", "no-referrer")
	f := views.ResetPasswordForm{CSRF: dash.CSRFToken(c), Token: c.QueryParam("token")}
	p, err := h.resetProblem(c, f.Token)
	if err != nil {
		return err
	}
	if p != "" {
		f.Problem = p
		return handlers.Render(c, resetLinkStatus(p), views.ResetPassword(f))
	}
	return handlers.Render(c, http.StatusOK, views.ResetPassword(f))
}

// SaveNewPassword sets the password of a reset link's user, with the rules
// of every admin password, uses the link (and the user's other links), and
// so ends every session signed in with the old password (RequireAdmin
// compares their stamps). The browser is sent to sign in with it.
func (h *Account) SaveNewPassword(c echo.Context) error {
	ctx := c.Request().Context()
	password, confirm := c.FormValue("password"), c.FormValue("confirm")
	f := views.ResetPasswordForm{CSRF: dash.CSRFToken(c), Token: c.FormValue("token")}
	p, err := h.resetProblem(c, f.Token)
	if err != nil {
		return err
	}
	if p != "" {
		f.Problem = p
		return handlers.Render(c, resetLinkStatus(p), views.ResetPassword(f))
	}
	f.Errors = views.Errors{}
	if field, msg := auth.NewPasswordProblem(password, confirm); field != "" {
		f.Errors[field] = msg
	}
	if len(f.Errors) > 0 {
		return handlers.Render(c, http.StatusUnprocessableEntity, views.ResetPassword(f))
	}
	hash, err := h.Passwords.Hash(password)
	if err != nil {
		return err
	}
	u, err := h.DB.ResetPassword(ctx, auth.HashResetToken(f.Token), hash, h.Clock())
	switch {
	case errors.Is(err, accounts.ErrResetUsed):
		// Another tab used the link since resetProblem looked.
		f.Problem = views.ResetLinkUsed
	case errors.Is(err, accounts.ErrResetExpired):
		f.Problem = views.ResetLinkExpired
	case parley.ErrorKind(err) == parley.KindNotFound:
		f.Problem = views.ResetLinkUnknown
	case err != nil:
		return err
	}
	if f.Problem != "" {
		return handlers.Render(c, resetLinkStatus(f.Problem), views.ResetPassword(f))
	}
	h.Log(c).Info("password reset by email link", "user_id", u.ID)
	// This browser may hold a session too: it signs in again like the others.
	if err := h.Sessions.RenewToken(ctx); err != nil {
		return err
	}
	h.Sessions.Remove(ctx, dash.SessUserID)
	h.Sessions.Remove(ctx, dash.SessPasswordStamp)
	h.Sessions.Put(ctx, dash.SessFlash, "Your password was changed. Sign in with the new one.")
	return c.Redirect(http.StatusSeeOther, "/admin/login")
}
