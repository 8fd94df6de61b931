package security

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db/audit"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/views"
)

// accountView fills the account page's model: the person's sessions and
// their two-step sign-in.
func (h *Security) accountView(c echo.Context) (views.AccountView, error) {
	ctx := c.Request().Context()
	a := dash.AdminFrom(c)
	v := views.AccountView{Email: a.User.Email}
	ss, err := h.DB.UserSessions(ctx, a.User.ID)
	if err != nil {
		return v, err
	}
	current := auth.SessionKey(h.Sessions.Token(ctx))
	for _, s := range ss {
		v.Sessions = append(v.Sessions, views.SessionRow{ID: s.ID, Device: Device(s.UserAgent), Address: s.Address,
			Created: s.CreatedAt.UTC().Format(dash.DateTime), Seen: s.SeenAt.UTC().Format(dash.DateTime), Current: s.Key == current})
	}
	tf, err := h.DB.TwoFactorOf(ctx, a.User.ID)
	if err != nil && parley.ErrorKind(err) != parley.KindNotFound {
		return v, err
	}
	v.TwoFactorOn, v.RecoveryLeft = tf.On(), tf.RecoveryLeft
	for _, m := range a.Memberships {
		if m.RequireTwoFactor {
			v.RequiredBy = m.TenantName
		}
	}
	return v, nil
}

// ShowAccountPage renders the person's own account page.
func (h *Security) ShowAccountPage(c echo.Context) error {
	v, err := h.accountView(c)
	if err != nil {
		return err
	}
	return h.renderAccount(c, http.StatusOK, v)
}

func (h *Security) renderAccount(c echo.Context, status int, v views.AccountView) error {
	return handlers.Render(c, status, views.AccountPage(dash.Page(c, h.Sessions, "Your account", "account"), v))
}

// SavePassword changes the person's password: the current one first
// (throttled as signing in is), then the new one twice, with the rules of
// every password. The person's other sessions end; this one stays, with
// the new password's stamp.
func (h *Security) SavePassword(c echo.Context) error {
	ctx := c.Request().Context()
	a := dash.AdminFrom(c)
	current, password, confirm := c.FormValue("current"), c.FormValue("password"), c.FormValue("confirm")
	v, err := h.accountView(c)
	if err != nil {
		return err
	}
	v.PasswordErrors = views.Errors{}
	if field, msg := auth.NewPasswordProblem(password, confirm); field != "" {
		v.PasswordErrors[field] = msg
	}
	if current == "" {
		v.PasswordErrors["current"] = "Enter your current password."
	}
	if len(v.PasswordErrors) > 0 {
		return h.renderAccount(c, http.StatusUnprocessableEntity, v)
	}
	attempt, wait, err := h.throttled(c, a.User.Email)
	if err != nil {
		return err
	}
	if wait != "" {
		v.PasswordError = wait
		return h.renderAccount(c, http.StatusTooManyRequests, v)
	}
	if !h.Passwords.Check(a.User.PasswordHash, current) {
		v.PasswordErrors["current"] = "This is not your current password."
		return h.renderAccount(c, http.StatusUnprocessableEntity, v)
	}
	if err := h.DB.ForgiveLoginAttempt(ctx, attempt); err != nil {
		return err
	}
	hash, err := h.Passwords.Hash(password)
	if err != nil {
		return err
	}
	if err := h.DB.ChangePassword(ctx, a.User.ID, hash, auth.SessionKey(h.Sessions.Token(ctx))); err != nil {
		return err
	}
	// This session stays signed in: its stamp is the new password's.
	h.Sessions.Put(ctx, dash.SessPasswordStamp, auth.PasswordStamp(hash))
	h.record(c, a.Tenant.ID, a.User, audit.ActionPasswordChanged, nil)
	h.Sessions.Put(ctx, dash.SessFlash, "Your password was changed. Your other sessions were signed out.")
	return c.Redirect(http.StatusSeeOther, "/admin/account")
}

// EndSession signs one of the person's other sessions out: its browser
// goes to the sign-in page at its next request. Another person's session
// is not found.
func (h *Security) EndSession(c echo.Context) error {
	ctx := c.Request().Context()
	a := dash.AdminFrom(c)
	if err := h.DB.EndSession(ctx, a.User.ID, c.Param("id"), auth.SessionKey(h.Sessions.Token(ctx))); err != nil {
		return err
	}
	h.record(c, a.Tenant.ID, a.User, audit.ActionSessionsEnded, map[string]any{"sessions": 1})
	h.Sessions.Put(ctx, dash.SessFlash, "That session was signed out.")
	return c.Redirect(http.StatusSeeOther, "/admin/account")
}

// EndOtherSessions signs out every session of the person's but this one.
func (h *Security) EndOtherSessions(c echo.Context) error {
	ctx := c.Request().Context()
	a := dash.AdminFrom(c)
	n, err := h.DB.EndOtherSessions(ctx, a.User.ID, auth.SessionKey(h.Sessions.Token(ctx)))
	if err != nil {
		return err
	}
	h.record(c, a.Tenant.ID, a.User, audit.ActionSessionsEnded, map[string]any{"sessions": n})
	switch n {
	case 0:
		h.Sessions.Put(ctx, dash.SessFlash, "You had no other sessions.")
	case 1:
		h.Sessions.Put(ctx, dash.SessFlash, "Your other session was signed out.")
	default:
		h.Sessions.Put(ctx, dash.SessFlash, "Your other sessions were signed out.")
	}
	return c.Redirect(http.StatusSeeOther, "/admin/account")
}

// Device says which browser on which system a user agent is, in words
// ("Firefox on Windows"); "Unknown browser" when it says neither.
func Device(ua string) string {
	browser := ""
	for _, b := range []struct{ token, name string }{
		{"Edg/", "Edge"}, {"OPR/", "Opera"}, {"Firefox/", "Firefox"}, {"HeadlessChrome/", "Headless Chrome"},
		{"Chrome/", "Chrome"}, {"CriOS/", "Chrome"}, {"Safari/", "Safari"}, {"curl/", "curl"},
	} {
		if strings.Contains(ua, b.token) {
			browser = b.name
			break
		}
	}
	system := ""
	for _, s := range []struct{ token, name string }{
		{"iPhone", "iPhone"}, {"iPad", "iPad"}, {"Android", "Android"}, {"Windows", "Windows"},
		{"Mac OS X", "macOS"}, {"CrOS", "ChromeOS"}, {"Linux", "Linux"},
	} {
		if strings.Contains(ua, s.token) {
			system = s.name
			break
		}
	}
	switch {
	case browser != "" && system != "":
		return browser + " on " + system
	case browser != "":
		return browser
	case system != "":
		return "A browser on " + system
	}
	return "Unknown browser"
}
