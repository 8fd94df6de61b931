// Package signup is the dashboard's sign-up (PARLEY_SIGNUP, issue 37): the
// public pages beside the sign-in that create a workspace. Closed (the
// default), there is none: tenants come from the command line. Invite, a
// workspace is created with the operator's invitation (parley signup
// invite). Open, anyone signs up with an email, a password and a workspace
// name, behind the operator's bot challenge when one is configured and a
// per-address limit; the workspace (a tenant on the free plan, with its
// default segment and its owner) is created only when the emailed link is
// followed, and its owner is then signed in.
package signup

import (
	"errors"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"
	"github.com/riverqueue/river"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/accounts"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/handlers/admin/security"
	"github.com/parley/parley/jobs"
	"github.com/parley/parley/views"
)

// The modes of PARLEY_SIGNUP.
const (
	ModeClosed = "closed"
	ModeInvite = "invite"
	ModeOpen   = "open"
)

// Open sign-ups taken: at most AddressLimit per Window from one client
// address, and EmailLimit for one email, whether an account has it or not
// (so the limit tells nothing either). A refused one is not counted.
const (
	AddressLimit = 5
	EmailLimit   = 3
	Window       = time.Hour
)

// WorkspaceNameMax is the longest workspace name, in characters.
const WorkspaceNameMax = 100

// sessSignupSent is the address a confirmation link was just sent to, shown
// once on the page the sign-up redirects to.
const sessSignupSent = "signupSent"

// Signup is the sign-up area.
type Signup struct{ *handlers.Base }

// New builds the sign-up area over the dashboard's Base.
func New(b *handlers.Base) *Signup { return &Signup{b} }

func (h *Signup) mode() string {
	if h.SignUp == "" {
		return ModeClosed
	}
	return h.SignUp
}

// problemStatus is the status of a page that creates nothing.
func problemStatus(p views.SignupProblem) int {
	switch p {
	case views.SignupClosed, views.SignupLinkUnknown:
		return http.StatusNotFound
	case views.SignupByInvitation:
		return http.StatusForbidden
	case views.SignupHasAccount:
		return http.StatusConflict
	}
	return http.StatusGone
}

func renderProblem(c echo.Context, p views.SignupProblem) error {
	return handlers.Render(c, problemStatus(p), views.Signup(views.SignupForm{Problem: p}))
}

// renderLinkProblem is renderProblem for a link of kind, whose page says
// what to do next in its own words (sign up again, or ask for a new
// invitation).
func renderLinkProblem(c echo.Context, p views.SignupProblem, kind string) error {
	f := views.SignupForm{Problem: p, Invitation: kind == accounts.SignupInvitation}
	return handlers.Render(c, problemStatus(p), views.Signup(f))
}

// confirmationOff is the page of a confirmation link when sign-up is not
// open: closed, the page saying so; by invitation, an unknown link.
func (h *Signup) confirmationOff(c echo.Context) error {
	if h.mode() == ModeInvite {
		return renderProblem(c, views.SignupLinkUnknown)
	}
	return renderProblem(c, views.SignupClosed)
}

// ShowSignupPage is the sign-up form: open to anyone in open mode, for the
// invitation's address in invite mode; otherwise why there is none.
func (h *Signup) ShowSignupPage(c echo.Context) error {
	// An invitation's token is in this page's address: no link or asset
	// of the page passes it on in a Referer.
	c.Response().Header().Set("Referrer-Policy", "no-referrer")
	f := views.SignupForm{CSRF: dash.CSRFToken(c), Hours: int(accounts.ConfirmationLifetime.Hours())}
	switch h.mode() {
	case ModeOpen:
		h.withChallenge(&f)
		return handlers.Render(c, http.StatusOK, views.Signup(f))
	case ModeInvite:
		s, p, err := h.invitation(c, c.QueryParam("invitation"))
		if err != nil {
			return err
		}
		if p != "" {
			return renderLinkProblem(c, p, accounts.SignupInvitation)
		}
		if err := h.fillInvitation(c, &f, s); err != nil {
			return err
		}
		return handlers.Render(c, http.StatusOK, views.Signup(f))
	}
	return renderProblem(c, views.SignupClosed)
}

// fillInvitation puts the invitation's address on the form, and whether it
// has an account already.
func (h *Signup) fillInvitation(c echo.Context, f *views.SignupForm, s accounts.Signup) error {
	f.Token = c.QueryParam("invitation")
	if f.Token == "" {
		f.Token = c.FormValue("invitation")
	}
	f.Email = s.Email
	_, err := h.DB.UserByEmail(c.Request().Context(), s.Email)
	switch {
	case err == nil:
		f.HasAccount = true
	case parley.ErrorKind(err) != parley.KindNotFound:
		return err
	}
	return nil
}

// invitation is the operator's invitation of token, or why it creates
// nothing.
func (h *Signup) invitation(c echo.Context, token string) (accounts.Signup, views.SignupProblem, error) {
	if token == "" {
		return accounts.Signup{}, views.SignupByInvitation, nil
	}
	return h.link(c, token, accounts.SignupInvitation)
}

// link is the sign-up link of token and kind, or why it creates nothing.
func (h *Signup) link(c echo.Context, token, kind string) (accounts.Signup, views.SignupProblem, error) {
	s, err := h.DB.SignupByHash(c.Request().Context(), auth.HashResetToken(token))
	switch {
	case parley.ErrorKind(err) == parley.KindNotFound || err == nil && s.Kind != kind:
		return s, views.SignupLinkUnknown, nil
	case err != nil:
		return s, "", err
	case s.UsedAt != nil:
		return s, views.SignupLinkUsed, nil
	case !h.Clock().Before(s.ExpiresAt):
		return s, views.SignupLinkExpired, nil
	}
	return s, "", nil
}

// withChallenge adds the operator's bot challenge to the open form, when
// one is configured.
func (h *Signup) withChallenge(f *views.SignupForm) {
	if h.SignInChallenge.SiteKey != "" {
		f.ChallengeSiteKey, f.ChallengeScriptURL = h.SignInChallenge.SiteKey, h.CaptchaScriptURL
	}
}

// checkChallenge verifies the form's bot-challenge token and says what went
// wrong in the owner's words ("" when solved). It fails closed, as the
// sign-in's does, and logs why for the operator.
func (h *Signup) checkChallenge(c echo.Context) string {
	token := strings.TrimSpace(c.FormValue("challengeToken"))
	if token == "" {
		return "Complete the check that you are not a robot, then sign up."
	}
	err := h.Captcha.Verify(c.Request().Context(), h.SignInChallenge.SecretKey, token, c.RealIP())
	var refused *auth.RefusedError
	switch {
	case errors.As(err, &refused):
		h.Log(c).Info("sign-up bot challenge refused", "error_codes", refused.Codes)
		return "The check that you are not a robot failed: do it again, then sign up."
	case err != nil:
		h.Log(c).Warn("sign-up bot challenge unavailable", "err", err)
		return "The check that you are not a robot could not be verified right now: try again shortly."
	}
	return ""
}

// checkWorkspace checks the workspace's name into errs.
func checkWorkspace(name string, errs views.Errors) {
	switch {
	case name == "":
		errs["workspace"] = "Enter a name for your workspace, like the name of your company or site."
	case utf8.RuneCountInString(name) > WorkspaceNameMax:
		errs["workspace"] = "Use at most 100 characters."
	}
}

// checkNewPassword checks a new owner's password into errs.
func checkNewPassword(password, email string, errs views.Errors) {
	if field, msg := auth.NewPasswordProblem(password, password); field != "" {
		errs[field] = msg
		return
	}
	if strings.EqualFold(strings.TrimSpace(password), email) {
		errs["password"] = "Choose a password that is not your email."
	}
}

// SaveSignup takes the sign-up form: an invitation's (invite mode), which
// creates the workspace at once, or an open one, which mails the link that
// will. The open form answers the same whether an account has the address
// or not: the mail job looks, and mails a person with an account a note
// instead of a link.
func (h *Signup) SaveSignup(c echo.Context) error {
	switch h.mode() {
	case ModeInvite:
		return h.saveInvited(c)
	case ModeOpen:
		return h.saveOpen(c)
	}
	return renderProblem(c, views.SignupClosed)
}

func (h *Signup) saveOpen(c echo.Context) error {
	ctx := c.Request().Context()
	email := strings.TrimSpace(c.FormValue("email"))
	password := c.FormValue("password")
	f := views.SignupForm{CSRF: dash.CSRFToken(c), Email: email, WorkspaceName: strings.TrimSpace(c.FormValue("workspace")),
		Errors: views.Errors{}}
	h.withChallenge(&f)
	if !auth.NewAccountEmail(email) {
		f.Errors["email"] = "Enter your email address, like name@example.com."
	}
	checkNewPassword(password, email, f.Errors)
	checkWorkspace(f.WorkspaceName, f.Errors)
	if len(f.Errors) > 0 {
		return handlers.Render(c, http.StatusUnprocessableEntity, views.Signup(f))
	}
	if f.ChallengeSiteKey != "" {
		if msg := h.checkChallenge(c); msg != "" {
			f.Error = msg
			return handlers.Render(c, http.StatusForbidden, views.Signup(f))
		}
	}
	_, counted, err := h.DB.HitWithin(ctx, []db.Window{
		{Key: "signup:ip:" + c.RealIP(), Length: Window, Limit: AddressLimit},
		{Key: "signup:email:" + strings.ToLower(email), Length: Window, Limit: EmailLimit},
	}, h.Clock())
	if err != nil {
		return err
	}
	if !counted {
		f.Error = "Too many sign-ups came from your network or for this address. Wait an hour and try again."
		c.Response().Header().Set("Retry-After", "3600")
		return handlers.Render(c, http.StatusTooManyRequests, views.Signup(f))
	}
	// Hashed whether or not the address has an account, so that the
	// answer takes as long either way.
	hash, err := h.Passwords.Hash(password)
	if err != nil {
		return err
	}
	err = h.DB.CreateSignupConfirmation(ctx, email, f.WorkspaceName, hash, h.Clock(),
		func(id string) river.JobArgs { return jobs.SignupMailArgs{SignupID: id} })
	if err != nil {
		return err
	}
	h.Sessions.Put(ctx, sessSignupSent, email)
	return c.Redirect(http.StatusSeeOther, "/admin/signup/sent")
}

// ShowSignupSentPage says where the link went, once; opened again, it is
// the sign-up form.
func (h *Signup) ShowSignupSentPage(c echo.Context) error {
	if h.mode() != ModeOpen {
		return renderProblem(c, views.SignupClosed)
	}
	email := h.Sessions.PopString(c.Request().Context(), sessSignupSent)
	if email == "" {
		return c.Redirect(http.StatusSeeOther, "/admin/signup")
	}
	return handlers.Render(c, http.StatusOK, views.SignupSent(email, int(accounts.ConfirmationLifetime.Hours())))
}

// ShowConfirmPage is the page an emailed confirmation link opens: a button
// that creates the workspace, or why the link does not work.
func (h *Signup) ShowConfirmPage(c echo.Context) error {
	c.Response().Header().Set("Referrer-Policy", "no-referrer")
	if h.mode() != ModeOpen {
		return h.confirmationOff(c)
	}
	f := views.SignupConfirmForm{CSRF: dash.CSRFToken(c), Token: c.QueryParam("token")}
	if f.Token == "" {
		return renderProblem(c, views.SignupLinkUnknown)
	}
	s, p, err := h.link(c, f.Token, accounts.SignupConfirmation)
	if err != nil {
		return err
	}
	if p != "" {
		return renderLinkProblem(c, p, accounts.SignupConfirmation)
	}
	f.Email, f.WorkspaceName = s.Email, s.WorkspaceName
	return handlers.Render(c, http.StatusOK, views.SignupConfirm(f))
}

// ConfirmSignup uses a confirmation link: it creates the workspace and
// signs its new owner in.
func (h *Signup) ConfirmSignup(c echo.Context) error {
	if h.mode() != ModeOpen {
		return h.confirmationOff(c)
	}
	token := c.FormValue("token")
	if token == "" {
		return renderProblem(c, views.SignupLinkUnknown)
	}
	s, p, err := h.link(c, token, accounts.SignupConfirmation)
	if err != nil {
		return err
	}
	if p != "" {
		return renderLinkProblem(c, p, accounts.SignupConfirmation)
	}
	return h.createWorkspace(c, s, s.WorkspaceName, s.PasswordHash)
}

// saveInvited takes the form of an invitation: the workspace is created at
// once (the invitation went to its address, or the operator handed it
// over), for a new account or, when the address has one, for it once its
// password is given.
func (h *Signup) saveInvited(c echo.Context) error {
	ctx := c.Request().Context()
	s, p, err := h.invitation(c, c.FormValue("invitation"))
	if err != nil {
		return err
	}
	if p != "" {
		return renderLinkProblem(c, p, accounts.SignupInvitation)
	}
	f := views.SignupForm{CSRF: dash.CSRFToken(c), WorkspaceName: strings.TrimSpace(c.FormValue("workspace")), Errors: views.Errors{}}
	if err := h.fillInvitation(c, &f, s); err != nil {
		return err
	}
	password := c.FormValue("password")
	var hash string
	if f.HasAccount {
		u, err := h.DB.UserByEmail(ctx, s.Email)
		if err != nil {
			return err
		}
		if !h.Passwords.Check(u.PasswordHash, password) {
			f.Errors["password"] = "This is not the password of your account. Forgot it? Choose a new one from the sign-in page, then open the invitation again."
		}
		hash = u.PasswordHash
	} else {
		checkNewPassword(password, s.Email, f.Errors)
	}
	checkWorkspace(f.WorkspaceName, f.Errors)
	if len(f.Errors) > 0 {
		return handlers.Render(c, http.StatusUnprocessableEntity, views.Signup(f))
	}
	if !f.HasAccount {
		if hash, err = h.Passwords.Hash(password); err != nil {
			return err
		}
	}
	return h.createWorkspace(c, s, f.WorkspaceName, hash)
}

// createWorkspace creates the sign-up's tenant on the free plan, with its
// default segment and its owner (the address's account, made with
// passwordHash unless it has one of that hash), through the transaction
// parley tenant create runs, which also uses the link and records the
// creation in the audit log; then it signs the owner in. No API token is
// made: the owner makes one in the dashboard when they need it.
func (h *Signup) createWorkspace(c echo.Context, s accounts.Signup, name, passwordHash string) error {
	ctx := c.Request().Context()
	base := workspaceSlug(name)
	for range 3 {
		slug, err := h.DB.FreeTenantSlug(ctx, base)
		if err != nil {
			return err
		}
		use := &accounts.SignupUse{ID: s.ID, Email: s.Email, PasswordHash: passwordHash, Now: h.Clock(), Address: c.RealIP()}
		t, err := h.DB.CreateTenant(ctx, db.NewTenant{Slug: slug, Name: name, Plan: "free",
			SealedSigningKey: h.Box.Seal(auth.RandomBytes(32)), OwnerEmail: s.Email, OwnerPasswordHash: passwordHash, Signup: use})
		switch {
		case parley.ErrorKind(err) == parley.KindConflict:
			continue // another workspace took the slug meanwhile
		case errors.Is(err, accounts.ErrSignupUsed):
			return renderLinkProblem(c, views.SignupLinkUsed, s.Kind)
		case errors.Is(err, accounts.ErrSignupExpired):
			return renderLinkProblem(c, views.SignupLinkExpired, s.Kind)
		case errors.Is(err, accounts.ErrSignupAccountExists):
			return renderProblem(c, views.SignupHasAccount)
		case parley.ErrorKind(err) == parley.KindNotFound:
			return renderLinkProblem(c, views.SignupLinkUnknown, s.Kind)
		case err != nil:
			return err
		}
		h.Log(c).Info("workspace created by sign-up", "tenant_id", t.ID, "slug", t.Slug, "via", s.Kind)
		// Signed in as a sign-in does: an account that had two-step
		// sign-in on passes its second step first.
		h.Sessions.Put(ctx, dash.SessFlash, "Welcome to Parley: your workspace "+t.Name+" is ready.")
		return security.SignInTo(c, h.Base, accounts.User{ID: use.UserID, PasswordHash: passwordHash}, t.ID, "/admin")
	}
	return parley.Errorf(parley.KindConflict, "the workspace's address was taken three times in a row: try again")
}

// workspaceSlug is the slug a workspace's name makes (db.Slugify), short
// enough for a "-2" after it; "workspace" for a name of no letter or digit.
func workspaceSlug(name string) string {
	s := db.Slugify(name)
	if s == "segment" && !strings.Contains(strings.ToLower(name), "segment") {
		s = "workspace"
	}
	if len(s) > 90 {
		s = strings.TrimRight(s[:90], "-")
	}
	return s
}
