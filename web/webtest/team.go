package webtest

import (
	"context"
	"fmt"
	"testing"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/db/accounts"
	"github.com/parley/parley/db/audit"
	"github.com/parley/parley/manage"
)

// Member is a person of a tenant's team with a role, and their password.
type Member struct {
	ID, Email, Password, Role string
}

// AddMember puts a new person on ten's team with role, through an owner's
// invitation accepted as the invitation's page does.
func (b *Bundle) AddMember(t *testing.T, ten Tenant, role string) Member {
	t.Helper()
	ctx := context.Background()
	n := TenantSeq.Add(1)
	m := Member{Email: fmt.Sprintf("%s-%d@%s.test", role, n, ten.Slug), Password: fmt.Sprintf("password-%s-%d", role, n), Role: role}
	tenant, err := b.DB.TenantByID(ctx, ten.ID)
	if err != nil {
		t.Fatal(err)
	}
	now := b.Srv.Base.Clock()
	token, _, err := b.Srv.Base.Manage.Invite(ctx, tenant, manage.InviteInput{Email: m.Email, Role: role}, "", nil, now)
	if err != nil {
		t.Fatalf("inviting a %s: %v", role, err)
	}
	hash, err := b.Srv.Base.Passwords.Hash(m.Password)
	if err != nil {
		t.Fatal(err)
	}
	u, _, err := b.DB.AcceptInvitation(ctx, auth.HashResetToken(token), accounts.Acceptance{PasswordHash: hash, Now: now},
		func(*accounts.User) error { return nil }, audit.Entry{Action: audit.ActionInvitationAccepted})
	if err != nil {
		t.Fatalf("accepting the invitation of a %s: %v", role, err)
	}
	m.ID = u.ID
	return m
}

// SignInAs signs the client in as m and fails the test otherwise.
func (c *AdminClient) SignInAs(m Member) AdminPage {
	c.T.Helper()
	p := c.Login(m.Email, m.Password, "")
	if p.Status != 303 {
		c.T.Fatalf("signing in as %s: %d to %q: %s", m.Email, p.Status, p.Location(), p.Text("#login-error"))
	}
	return p
}
