package security

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db/audit"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/views"
)

// roleWords are the roles in the owner's words.
var roleWords = map[string]string{auth.RoleOwner: "Owner", auth.RoleAdmin: "Admin", auth.RoleAgent: "Agent"}

// isOwner reports whether the signed-in person owns the current tenant.
func isOwner(a *handlers.AdminContext) bool {
	for _, m := range a.Memberships {
		if m.TenantID == a.Tenant.ID {
			return auth.RoleHolds(m.Role, auth.RoleOwner)
		}
	}
	return false
}

// required is whether the current tenant requires two-step sign-in.
func required(a *handlers.AdminContext) bool {
	for _, m := range a.Memberships {
		if m.TenantID == a.Tenant.ID {
			return m.RequireTwoFactor
		}
	}
	return false
}

// securityView fills the owner's page: the requirement, and each member
// with their two-step sign-in.
func (h *Security) securityView(c echo.Context) (views.SecurityView, error) {
	a := dash.AdminFrom(c)
	v := views.SecurityView{Required: required(a)}
	ms, err := h.DB.MembersTwoFactor(c.Request().Context(), a.Tenant.ID)
	if err != nil {
		return v, err
	}
	for _, m := range ms {
		v.Members = append(v.Members, views.SecurityMember{Email: m.Email, Role: roleWords[m.Role], TwoFactor: m.TwoFactor})
		if m.UserID == a.User.ID {
			v.OwnTwoFactor = m.TwoFactor
		}
	}
	return v, nil
}

// ShowSecurityPage renders the tenant's sign-in rules, to an owner.
func (h *Security) ShowSecurityPage(c echo.Context) error {
	if !isOwner(dash.AdminFrom(c)) {
		return parley.Errorf(parley.KindForbidden, "Only an owner sets the sign-in rules")
	}
	v, err := h.securityView(c)
	if err != nil {
		return err
	}
	return h.renderSecurity(c, http.StatusOK, v)
}

func (h *Security) renderSecurity(c echo.Context, status int, v views.SecurityView) error {
	return handlers.Render(c, status, views.SecurityPage(dash.Page(c, h.Sessions, "Sign-in security", "security"), v))
}

// SaveSecurity sets whether the tenant requires two-step sign-in of its
// members; an owner requires it only with it on for themselves.
func (h *Security) SaveSecurity(c echo.Context) error {
	ctx := c.Request().Context()
	a := dash.AdminFrom(c)
	if !isOwner(a) {
		return parley.Errorf(parley.KindForbidden, "Only an owner sets the sign-in rules")
	}
	v, err := h.securityView(c)
	if err != nil {
		return err
	}
	on := c.FormValue("require") == "on"
	if on && !v.OwnTwoFactor {
		v.Error = "Set up two-step sign-in for your own account first, so that you cannot lock yourself out."
		return h.renderSecurity(c, http.StatusUnprocessableEntity, v)
	}
	if on != v.Required {
		if err := h.DB.SetTenantRequiresTwoFactor(ctx, a.Tenant.ID, on); err != nil {
			return err
		}
		h.record(c, a.Tenant.ID, a.User, audit.ActionTwoFactorRequired, map[string]any{"required": on})
	}
	if on {
		h.Sessions.Put(ctx, dash.SessFlash, "Two-step sign-in is required: members without it set it up the next time they open the dashboard.")
	} else {
		h.Sessions.Put(ctx, dash.SessFlash, "Two-step sign-in is up to each member.")
	}
	return c.Redirect(http.StatusSeeOther, "/admin/security")
}
