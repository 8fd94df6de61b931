// Package team is the dashboard's team (issue 37): the roles' guard of
// every signed-in route (RequireRole), the Team page where owners invite
// people by email, change roles and remove members (/admin/members), and
// the page an invitation's link opens (/admin/invitation), where the
// invited person chooses a password, or signs in with theirs, to join.
package team

import (
	"cmp"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/riverqueue/river"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/accounts"
	"github.com/parley/parley/db/audit"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/handlers/admin/security"
	"github.com/parley/parley/jobs"
	"github.com/parley/parley/manage"
	"github.com/parley/parley/views"
)

// Team is the dashboard's Team area.
type Team struct{ *handlers.Base }

// New builds the Team area over the Base web builds.
func New(b *handlers.Base) *Team { return &Team{b} }

// Session keys of an invitation's link, kept between the change that
// makes it and the page that shows it once.
const (
	sessLink      = "invitationLink"
	sessLinkEmail = "invitationEmail"
	sessMailed    = "invitationMailed"
)

// RequireRole lets through the signed-in people whose role in the tenant
// holds least; anyone else is refused with 403, in words that say who can
// help (the audit log's recorder, around every signed-in route, records
// the refusal).
func (h *Team) RequireRole(least string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			a := dash.AdminFrom(c)
			if auth.RoleHolds(a.Role, least) {
				return next(c)
			}
			r := c.Request()
			msg := "This part of the dashboard needs the " + views.RoleName(least) + " role; you are " +
				strings.ToLower(views.RoleName(a.Role)) + " of " + a.Tenant.Name + ". Ask an owner of the team if you need it."
			if strings.HasPrefix(r.Header.Get(echo.HeaderContentType), echo.MIMEApplicationJSON) || dash.IsHTMX(c) {
				return &parley.Error{Kind: parley.KindForbidden, Message: msg}
			}
			return handlers.Render(c, http.StatusForbidden, views.Forbidden(dash.Page(c, h.Sessions, "Not part of your role", ""), msg))
		}
	}
}

// SendBelow sends the people whose role does not hold least to another
// page instead of refusing them: the dashboard's home is an admin's
// overview, and an agent's inbox.
func (h *Team) SendBelow(least, to string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if auth.RoleHolds(dash.AdminFrom(c).Role, least) {
				return next(c)
			}
			return c.Redirect(http.StatusSeeOther, to)
		}
	}
}

// mailJob is the invitation's mail job when this server sends email, else
// nil: the owner is shown the link to pass on.
func (h *Team) mailJob() func(id string) river.JobArgs {
	if !h.ResetByEmail {
		return nil
	}
	return func(id string) river.JobArgs { return jobs.InvitationMailArgs{InvitationID: id} }
}

// membersView is the Team page's model, with the invitation form's values.
func (h *Team) membersView(c echo.Context, email, role string) (views.MembersView, error) {
	ctx := c.Request().Context()
	a := dash.AdminFrom(c)
	members, err := h.DB.Members(ctx, a.Tenant.ID)
	if err != nil {
		return views.MembersView{}, err
	}
	invs, err := h.DB.OpenInvitations(ctx, a.Tenant.ID, h.Clock())
	if err != nil {
		return views.MembersView{}, err
	}
	if role == "" {
		role = auth.RoleAgent
	}
	v := views.MembersView{Roles: auth.Roles, Plan: a.Tenant.Plan, Limit: a.Tenant.PlanInfo().MembersLimit,
		Used: len(members) + len(invs), Email: email, Role: role}
	for _, m := range members {
		v.Members = append(v.Members, views.MemberRow{UserID: m.UserID, Email: m.Email, Role: m.Role,
			Joined: m.JoinedAt.UTC().Format("2 Jan 2006"), You: m.UserID == a.User.ID})
	}
	for _, i := range invs {
		// No inviter: the command line's, or a member gone since.
		by := cmp.Or(i.InviterEmail, "—")
		v.Invitations = append(v.Invitations, views.InvitationRow{ID: i.ID, Email: i.Email, Role: i.Role,
			InvitedBy: by, Expires: i.ExpiresAt.UTC().Format(dash.DateTime)})
	}
	return v, nil
}

// ShowMembersPage lists the team and its waiting invitations, with the
// link of an invitation just made (shown once) when no mail went.
func (h *Team) ShowMembersPage(c echo.Context) error {
	ctx := c.Request().Context()
	v, err := h.membersView(c, "", "")
	if err != nil {
		return err
	}
	v.Link, v.LinkEmail = h.Sessions.PopString(ctx, sessLink), h.Sessions.PopString(ctx, sessLinkEmail)
	v.Mailed = h.Sessions.PopString(ctx, sessMailed)
	// The page may hold a link: no asset or link of it passes the address on.
	c.Response().Header().Set("Referrer-Policy", "no-referrer")
	c.Response().Header().Set("Cache-Control", "no-store")
	return handlers.Render(c, http.StatusOK, views.MembersPage(dash.Page(c, h.Sessions, "Team", "members"), v))
}

// announce shows the invitation's link once on the next page, or says it
// was mailed.
func (h *Team) announce(c echo.Context, token string, inv accounts.Invitation) {
	ctx := c.Request().Context()
	if h.ResetByEmail {
		h.Sessions.Put(ctx, sessMailed, inv.Email)
		return
	}
	h.Sessions.Put(ctx, sessLink, h.BaseURL+"/admin/invitation?token="+token)
	h.Sessions.Put(ctx, sessLinkEmail, inv.Email)
}

// SaveInvitation invites an address with a role: the link is mailed, or
// shown once to pass on.
func (h *Team) SaveInvitation(c echo.Context) error {
	a := dash.AdminFrom(c)
	in := manage.InviteInput{Email: strings.TrimSpace(c.FormValue("email")), Role: c.FormValue("role")}
	token, inv, err := h.Manage.Invite(c.Request().Context(), a.Tenant, in, a.User.ID, h.mailJob(), h.Clock())
	if err != nil {
		status, fields, msg, ok := dash.FormStatus(err)
		if !ok {
			return err
		}
		v, verr := h.membersView(c, in.Email, in.Role)
		if verr != nil {
			return verr
		}
		v.Errors = fields
		if len(fields) == 0 {
			v.Error = msg
		}
		return handlers.Render(c, status, views.MembersPage(dash.Page(c, h.Sessions, "Team", "members"), v))
	}
	h.announce(c, token, inv)
	return dash.SeeOther(c, "/admin/members")
}

// RenewInvitation gives a waiting invitation a new link for seven more
// days: the old one stops working.
func (h *Team) RenewInvitation(c echo.Context) error {
	a := dash.AdminFrom(c)
	token, inv, err := h.Manage.RenewInvitation(c.Request().Context(), a.Tenant.ID, c.Param("id"), h.mailJob(), h.Clock())
	if err != nil {
		return err
	}
	h.announce(c, token, inv)
	return dash.SeeOther(c, "/admin/members")
}

// RevokeInvitation cancels a waiting invitation.
func (h *Team) RevokeInvitation(c echo.Context) error {
	a := dash.AdminFrom(c)
	inv, err := h.Manage.RevokeInvitation(c.Request().Context(), a.Tenant.ID, c.Param("id"), h.Clock())
	if err != nil {
		return err
	}
	h.Sessions.Put(c.Request().Context(), dash.SessFlash, "The invitation of "+inv.Email+" is cancelled: its link no longer works.")
	return dash.SeeOther(c, "/admin/members")
}

// flashRefusal shows a refused change of the team on the next page, or
// returns the error when it is not one the owner can act on.
func (h *Team) flashRefusal(c echo.Context, err error) error {
	_, fields, msg, ok := dash.FormStatus(err)
	if !ok {
		return err
	}
	if fe, isField := fields["role"]; isField {
		msg = fe
	}
	h.Sessions.Put(c.Request().Context(), dash.SessFlashError, msg)
	return dash.SeeOther(c, "/admin/members")
}

// SaveMemberRole gives a member another role; the last owner keeps theirs.
// An owner who gives up their own ownership goes to the dashboard's home.
func (h *Team) SaveMemberRole(c echo.Context) error {
	a := dash.AdminFrom(c)
	m, err := h.Manage.ChangeRole(c.Request().Context(), a.Tenant.ID, c.Param("id"), c.FormValue("role"), h.Clock())
	if err != nil {
		return h.flashRefusal(c, err)
	}
	h.Sessions.Put(c.Request().Context(), dash.SessFlash, m.Email+" is now "+strings.ToLower(views.RoleName(m.Role))+".")
	if m.UserID == a.User.ID && m.Role != auth.RoleOwner {
		return dash.SeeOther(c, "/admin")
	}
	return dash.SeeOther(c, "/admin/members")
}

// RemoveMember takes a member off the team: they lose the tenant at once.
func (h *Team) RemoveMember(c echo.Context) error {
	a := dash.AdminFrom(c)
	m, err := h.Manage.RemoveMember(c.Request().Context(), a.Tenant.ID, c.Param("id"), h.Clock())
	if err != nil {
		return h.flashRefusal(c, err)
	}
	h.Sessions.Put(c.Request().Context(), dash.SessFlash, m.Email+" is no longer on the team.")
	if m.UserID == a.User.ID {
		return dash.SeeOther(c, "/admin")
	}
	return dash.SeeOther(c, "/admin/members")
}

// Accepting invitations: at most acceptAddressLimit tries an hour from one
// client address and acceptLinkLimit with one link, so that a link that
// leaked cannot be used to guess its account's password.
const (
	acceptAddressLimit = 20
	acceptLinkLimit    = 5
	acceptWindow       = time.Hour
)

// linkProblem renders the page of a link that does not work, saying why
// in words; an error of another kind is returned as it is.
func (h *Team) linkProblem(c echo.Context, err error) error {
	msg, status := "", http.StatusGone
	switch {
	case errors.Is(err, accounts.ErrInvitationUsed):
		msg = "This invitation was accepted already. Sign in with the account that accepted it."
	case errors.Is(err, accounts.ErrInvitationRevoked):
		msg = "This invitation was cancelled. Ask the person who invited you for a new one."
	case errors.Is(err, accounts.ErrInvitationExpired):
		msg = "This invitation ran out: links work for seven days. Ask the person who invited you for a new one."
	case parley.ErrorKind(err) == parley.KindNotFound:
		msg, status = "This invitation link is not one we know. Check that you copied all of it, or ask for a new one.", http.StatusNotFound
	default:
		return err
	}
	return handlers.Render(c, status, views.InvitationPage(views.InvitationView{Problem: msg}))
}

// invitation reads the link's invitation and says why it cannot be used.
func (h *Team) invitation(c echo.Context, token string) (accounts.Invitation, error) {
	if token == "" {
		return accounts.Invitation{}, parley.Errorf(parley.KindNotFound, "Invitation not found")
	}
	inv, err := h.DB.InvitationByHash(c.Request().Context(), auth.HashResetToken(token))
	switch {
	case err != nil:
		return inv, err
	case inv.AcceptedAt != nil:
		return inv, accounts.ErrInvitationUsed
	case inv.RevokedAt != nil:
		return inv, accounts.ErrInvitationRevoked
	case !h.Clock().Before(inv.ExpiresAt):
		return inv, accounts.ErrInvitationExpired
	}
	return inv, nil
}

// invitationView is the page of a working link.
func (h *Team) invitationView(c echo.Context, token string, inv accounts.Invitation) (views.InvitationView, error) {
	v := views.InvitationView{CSRF: dash.CSRFToken(c), Token: token, TenantName: inv.TenantName, Role: inv.Role,
		Email: inv.Email, InvitedBy: inv.InviterEmail}
	_, err := h.DB.UserByEmail(c.Request().Context(), inv.Email)
	switch {
	case err == nil:
		v.HasAccount = true
	case parley.ErrorKind(err) != parley.KindNotFound:
		return v, err
	}
	return v, nil
}

// ShowInvitationPage is the page an invitation's link opens.
func (h *Team) ShowInvitationPage(c echo.Context) error {
	c.Response().Header().Set("Referrer-Policy", "no-referrer")
	token := c.QueryParam("token")
	inv, err := h.invitation(c, token)
	if err != nil {
		return h.linkProblem(c, err)
	}
	v, err := h.invitationView(c, token, inv)
	if err != nil {
		return err
	}
	return handlers.Render(c, http.StatusOK, views.InvitationPage(v))
}

// AcceptInvitation joins the team: with the password of the address's
// account, or with a new account of the password chosen. The browser is
// then signed in to the tenant.
func (h *Team) AcceptInvitation(c echo.Context) error {
	ctx := c.Request().Context()
	c.Response().Header().Set("Referrer-Policy", "no-referrer")
	token, password, confirm := c.FormValue("token"), c.FormValue("password"), c.FormValue("confirm")
	inv, err := h.invitation(c, token)
	if err == nil {
		var counted bool
		_, counted, err = h.DB.HitWithin(ctx, []db.Window{
			{Key: "invite:ip:" + c.RealIP(), Length: acceptWindow, Limit: acceptAddressLimit},
			{Key: "invite:link:" + inv.ID, Length: acceptWindow, Limit: acceptLinkLimit},
		}, h.Clock())
		if err != nil {
			return err
		}
		if !counted {
			return &parley.Error{Kind: parley.KindRateLimited, Message: "Too many tries with this invitation: wait an hour and try again"}
		}
	}
	if err != nil {
		return h.linkProblem(c, err)
	}
	v, err := h.invitationView(c, token, inv)
	if err != nil {
		return err
	}
	v.Errors = views.Errors{}
	var hash string
	if !v.HasAccount {
		if field, msg := auth.NewPasswordProblem(password, confirm); field != "" {
			v.Errors[field] = msg
		}
		if len(v.Errors) > 0 {
			return handlers.Render(c, http.StatusUnprocessableEntity, views.InvitationPage(v))
		}
		if hash, err = h.Passwords.Hash(password); err != nil {
			return err
		}
	}
	errWrongPassword := errors.New("wrong password")
	u, inv, err := h.DB.AcceptInvitation(ctx, auth.HashResetToken(token), accounts.Acceptance{PasswordHash: hash, Now: h.Clock()},
		func(existing *accounts.User) error {
			if existing != nil && !h.Passwords.Check(existing.PasswordHash, password) {
				return errWrongPassword
			}
			if existing == nil && hash == "" {
				// The account went away since the page was shown.
				return errWrongPassword
			}
			return nil
		}, audit.Entry{Action: audit.ActionInvitationAccepted, Address: c.RealIP()})
	switch {
	case errors.Is(err, errWrongPassword):
		v.Errors["password"] = "This is not the password of " + v.Email + ". Try again, or reset it with “Forgot your password?”."
		return handlers.Render(c, http.StatusUnprocessableEntity, views.InvitationPage(v))
	case err != nil:
		return h.linkProblem(c, err)
	}
	// Signed in as a sign-in does: an account with two-step sign-in
	// passes its second step first.
	h.Sessions.Put(ctx, dash.SessFlash, "Welcome to the team of "+inv.TenantName+".")
	return security.SignInTo(c, h.Base, u, inv.TenantID, "/admin")
}
