package security

import (
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	qr "github.com/piglig/go-qr"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db/audit"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/views"
)

// totpIssuer names Parley in the person's authenticator app.
const totpIssuer = "Parley"

// setupSecret is the secret of the person's setup in progress: the one
// kept (so that reloading the page does not undo what the app took), or
// a new one. on is true when two-step sign-in is on already.
func (h *Security) setupSecret(c echo.Context) (secret []byte, on bool, err error) {
	ctx := c.Request().Context()
	a := dash.AdminFrom(c)
	tf, err := h.DB.TwoFactorOf(ctx, a.User.ID)
	switch {
	case err == nil && tf.On():
		return nil, true, nil
	case err == nil:
		secret, err = h.Box.Open(tf.Secret)
		return secret, false, err
	case parley.ErrorKind(err) != parley.KindNotFound:
		return nil, false, err
	}
	secret = auth.NewTOTPSecret()
	return secret, false, h.DB.StartTwoFactor(ctx, a.User.ID, h.Box.Seal(secret))
}

// setupView is the setup page's model for secret.
func (h *Security) setupView(c echo.Context, secret []byte) views.TwoFactorSetupView {
	a := dash.AdminFrom(c)
	uri := auth.TOTPURI(secret, totpIssuer, a.User.Email)
	required := false
	for _, m := range a.Memberships {
		required = required || (m.TenantID == a.Tenant.ID && m.RequireTwoFactor)
	}
	return views.TwoFactorSetupView{Key: auth.TOTPKey(secret), URI: uri, QR: qrDataURL(uri), Required: required}
}

func (h *Security) renderSetup(c echo.Context, status int, v views.TwoFactorSetupView) error {
	return handlers.Render(c, status, views.TwoFactorSetupPage(dash.Page(c, h.Sessions, "Set up two-step sign-in", "account"), v))
}

// ShowTwoFactorSetupPage shows the key to add to an authenticator app and
// asks for its first code; with two-step sign-in on, it goes back to the
// account page.
func (h *Security) ShowTwoFactorSetupPage(c echo.Context) error {
	secret, on, err := h.setupSecret(c)
	if err != nil {
		return err
	}
	if on {
		return c.Redirect(http.StatusSeeOther, "/admin/account")
	}
	return h.renderSetup(c, http.StatusOK, h.setupView(c, secret))
}

// SaveTwoFactor turns two-step sign-in on once the app's first code is
// right, and shows the new recovery codes once (ShowRecoveryCodesPage).
func (h *Security) SaveTwoFactor(c echo.Context) error {
	ctx := c.Request().Context()
	a := dash.AdminFrom(c)
	secret, on, err := h.setupSecret(c)
	if err != nil {
		return err
	}
	if on {
		return c.Redirect(http.StatusSeeOther, "/admin/account")
	}
	v := h.setupView(c, secret)
	code := auth.NormalizeCode(c.FormValue("code"))
	step, ok := auth.MatchTOTP(secret, code, h.Clock())
	if !ok {
		v.Errors = views.Errors{"code": "That code is not right: enter the six digits the app shows now for Parley."}
		if code == "" {
			v.Errors["code"] = "Enter the six-digit code the app shows."
		}
		return h.renderSetup(c, http.StatusUnprocessableEntity, v)
	}
	codes, hashes := auth.NewRecoveryCodes()
	if err := h.DB.EnableTwoFactor(ctx, a.User.ID, step, hashes, h.Clock()); err != nil {
		return err
	}
	h.Sessions.Put(ctx, sessTwoFactor, "1")
	h.Sessions.Put(ctx, sessRecoveryCodes, strings.Join(codes, " "))
	h.record(c, a.Tenant.ID, a.User, audit.ActionTwoFactorOn, nil)
	return c.Redirect(http.StatusSeeOther, "/admin/account/recovery-codes")
}

// ShowRecoveryCodesPage shows new recovery codes, once: reloaded, the page
// goes back to the account.
func (h *Security) ShowRecoveryCodesPage(c echo.Context) error {
	codes := strings.Fields(h.Sessions.PopString(c.Request().Context(), sessRecoveryCodes))
	if len(codes) == 0 {
		return c.Redirect(http.StatusSeeOther, "/admin/account")
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return handlers.Render(c, http.StatusOK, views.RecoveryCodesPage(dash.Page(c, h.Sessions, "Two-step sign-in is on", "account"), codes))
}

// SaveNewRecoveryCodes replaces the person's recovery codes with new ones,
// shown once.
func (h *Security) SaveNewRecoveryCodes(c echo.Context) error {
	ctx := c.Request().Context()
	a := dash.AdminFrom(c)
	tf, err := h.DB.TwoFactorOf(ctx, a.User.ID)
	if err != nil && parley.ErrorKind(err) != parley.KindNotFound {
		return err
	}
	if !tf.On() {
		return &parley.Error{Kind: parley.KindConflict, Message: "Two-step sign-in is off: there are no recovery codes to replace."}
	}
	codes, hashes := auth.NewRecoveryCodes()
	if err := h.DB.ReplaceRecoveryCodes(ctx, a.User.ID, hashes); err != nil {
		return err
	}
	h.Sessions.Put(ctx, sessRecoveryCodes, strings.Join(codes, " "))
	return c.Redirect(http.StatusSeeOther, "/admin/account/recovery-codes")
}

// RemoveTwoFactor turns two-step sign-in off with the person's password
// or a code of their app (throttled as signing in is); not while a tenant
// of theirs requires it.
func (h *Security) RemoveTwoFactor(c echo.Context) error {
	ctx := c.Request().Context()
	a := dash.AdminFrom(c)
	v, err := h.accountView(c)
	if err != nil {
		return err
	}
	if !v.TwoFactorOn {
		return c.Redirect(http.StatusSeeOther, "/admin/account")
	}
	if v.RequiredBy != "" {
		v.OffError = v.RequiredBy + " requires two-step sign-in of its members: it cannot be turned off."
		return h.renderAccount(c, http.StatusForbidden, v)
	}
	proof := c.FormValue("proof")
	if proof == "" {
		v.OffErrors = views.Errors{"proof": "Enter your password, or a code from your app."}
		return h.renderAccount(c, http.StatusUnprocessableEntity, v)
	}
	attempt, wait, err := h.throttled(c, a.User.Email)
	if err != nil {
		return err
	}
	if wait != "" {
		v.OffError = wait
		return h.renderAccount(c, http.StatusTooManyRequests, v)
	}
	ok := h.Passwords.Check(a.User.PasswordHash, proof)
	if !ok {
		if ok, _, err = h.checkCode(c, a.User.ID, proof); err != nil {
			return err
		}
	}
	if !ok {
		v.OffErrors = views.Errors{"proof": "This is neither your password nor a current code of your app."}
		return h.renderAccount(c, http.StatusUnprocessableEntity, v)
	}
	if err := h.DB.ForgiveLoginAttempt(ctx, attempt); err != nil {
		return err
	}
	if err := h.DB.DisableTwoFactor(ctx, a.User.ID); err != nil {
		return err
	}
	h.Sessions.Remove(ctx, sessTwoFactor)
	h.record(c, a.Tenant.ID, a.User, audit.ActionTwoFactorOff, nil)
	h.Sessions.Put(ctx, dash.SessFlash, "Two-step sign-in is off: signing in asks for your password only.")
	return c.Redirect(http.StatusSeeOther, "/admin/account")
}

// qrDataURL is the QR code of s as an SVG image's data: URL (drawn here:
// no outside service sees the secret), "" when none is made (the page
// then shows the key to type only).
func qrDataURL(s string) string {
	q, err := qr.EncodeText(s, qr.Medium)
	if err != nil {
		return ""
	}
	svg, err := q.ToSVGBytes(qrConfig())
	if err != nil {
		return ""
	}
	return "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(svg)
}

// qrConfig draws a module as 4 units with the standard quiet zone of 4 modules.
func qrConfig() *qr.QrCodeImgConfig { return qr.NewQrCodeImgConfig(4, 4, qr.WithOptimalSVG()) }
