package manage

import (
	"context"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db/accounts"
	"github.com/parley/parley/db/audit"
)

// The team of a tenant (issue 37): its members, their roles, and the
// owners' invitations by email. Every change is one transaction with its
// audit entry, by the actor ctx carries (audit.WithActor).

// InvitationLifetime is how long an invitation's link works.
const InvitationLifetime = 7 * 24 * time.Hour

// InviteInput is an owner's invitation: the address and the role.
type InviteInput struct {
	Email string
	Role  string
}

// checkEmail says what is wrong with an address, or "".
func checkEmail(email string) string {
	switch {
	case email == "":
		return "Enter the address to invite, like name@example.com."
	case len(email) > auth.MaxEmail:
		return "This address is too long: 254 characters at most."
	}
	if !auth.NewAccountEmail(email) {
		return "Enter one email address, like name@example.com."
	}
	return ""
}

// checkRole says what is wrong with a role, or "".
func checkRole(role string) string {
	if !auth.ValidRole(role) {
		return "Choose a role: owner, admin or agent."
	}
	return ""
}

// entry is an audit entry of the tenant by the actor ctx carries; without
// one (the command line), by the operator.
func entry(ctx context.Context, tenantID, action string) audit.Entry {
	a, ok := audit.ActorFrom(ctx)
	if !ok {
		a = audit.Actor{Kind: audit.ActorOperator, Name: "operator"}
	}
	return audit.Entry{TenantID: tenantID, Actor: a, Action: action}
}

// Invite invites in.Email to the tenant's team with in.Role, within the
// plan's team limit (parley.Plan.MembersLimit: members and open invitations
// together), replacing the address's open invitation. It returns the
// link's token (shown to the owner when no mail goes; mail, when set, is
// the job that mails a link of its own).
func (s *Service) Invite(ctx context.Context, t parley.Tenant, in InviteInput, inviterID string, mail func(id string) river.JobArgs, now time.Time) (string, accounts.Invitation, error) {
	in.Email = strings.TrimSpace(in.Email)
	fe := parley.FieldErrors{}
	if p := checkEmail(in.Email); p != "" {
		fe["email"] = p
	}
	if p := checkRole(in.Role); p != "" {
		fe["role"] = p
	}
	if err := fe.Err(); err != nil {
		return "", accounts.Invitation{}, err
	}
	token, hash := auth.NewResetToken()
	e := entry(ctx, t.ID, audit.ActionMemberInvited)
	e.Target, e.Details = in.Email, map[string]any{"role": in.Role}
	inv, err := s.DB.Invite(ctx, accounts.NewInvitation{
		TenantID: t.ID, Email: in.Email, Role: in.Role, InvitedBy: inviterID, TokenHash: hash,
		Now: now, ExpiresAt: now.Add(InvitationLifetime), Mail: mail,
	}, t.PlanInfo().MembersLimit, e)
	if err != nil {
		return "", accounts.Invitation{}, err
	}
	return token, inv, nil
}

// RenewInvitation gives an open invitation a new link, for seven days from
// now (the old link stops working), and returns its token; mail, when set,
// mails the new one.
func (s *Service) RenewInvitation(ctx context.Context, tenantID, id string, mail func(id string) river.JobArgs, now time.Time) (string, accounts.Invitation, error) {
	token, hash := auth.NewResetToken()
	var job river.JobArgs
	if mail != nil {
		job = mail(id)
	}
	inv, err := s.DB.RenewInvitation(ctx, tenantID, id, hash, now, now.Add(InvitationLifetime), job)
	return token, inv, err
}

// RevokeInvitation cancels an open invitation: its link stops working.
func (s *Service) RevokeInvitation(ctx context.Context, tenantID, id string, now time.Time) (accounts.Invitation, error) {
	return s.DB.RevokeInvitation(ctx, tenantID, id, now, entry(ctx, tenantID, audit.ActionInvitationRevoked))
}

// ChangeRole gives a member of the tenant a new role; the last owner keeps
// theirs.
func (s *Service) ChangeRole(ctx context.Context, tenantID, userID, role string, now time.Time) (accounts.Member, error) {
	if p := checkRole(role); p != "" {
		return accounts.Member{}, parley.FieldErrors{"role": p}.Err()
	}
	return s.DB.ChangeRole(ctx, tenantID, userID, role, auth.RoleHolds, now, entry(ctx, tenantID, audit.ActionMemberRoleChanged))
}

// RemoveMember takes a member off the tenant's team and ends what they
// hold on it (their OAuth grants at once, the tenant in their dashboard
// sessions at their next request); the last owner stays.
func (s *Service) RemoveMember(ctx context.Context, tenantID, userID string, now time.Time) (accounts.Member, error) {
	return s.DB.RemoveMember(ctx, tenantID, userID, now, entry(ctx, tenantID, audit.ActionMemberRemoved))
}
