package admin_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/web/webtest"
)

// invite sends the Team page's form as the signed-in owner c and returns the
// link shown to pass on (no mail server here).
func invite(t *testing.T, c *webtest.AdminClient, email, role string) string {
	t.Helper()
	c.Get("/admin/members")
	p := c.Submit("/admin/members", url.Values{"email": {email}, "role": {role}})
	if p.Status != http.StatusSeeOther || p.Location() != "/admin/members" {
		t.Fatalf("inviting %s as %s: %d %q %s", email, role, p.Status, p.Location(), p.Text(".field-error, #invite-error"))
	}
	p = c.Get("/admin/members")
	link := p.Text("#invitation-link")
	if !strings.Contains(link, "/admin/invitation?token=") {
		t.Fatalf("no link to pass on after inviting %s: %q", email, link)
	}
	if again := c.Get("/admin/members"); again.Text("#invitation-link") != "" {
		t.Error("the invitation's link is shown twice")
	}
	return link
}

// linkPath is the path of an invitation's link.
func linkPath(t *testing.T, link string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	return u.RequestURI()
}

// refusalCount counts the tenant's refusals of the person with email
// recorded as refused (denied).
func refusalCount(t *testing.T, b *webtest.Bundle, tenantID, email string) int {
	t.Helper()
	var n int
	if err := b.DB.Pool().QueryRow(t.Context(), `SELECT count(*) FROM audit_log
		WHERE tenant_id = $1 AND action = 'access.denied' AND denied AND actor_name = $2`, tenantID, email).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestTeamInvitation(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	ten := b.OwnedTenant(t, "starter")
	owner := b.NewAdminClient(t)
	owner.SignIn(ten)
	email := "agent-" + ten.Slug + "@example.test"
	link := invite(t, owner, email, "agent")

	p := owner.Get("/admin/members")
	if got := p.Text("#invitations td"); got != email {
		t.Errorf("waiting invitation %q, want %s", got, email)
	}
	if got := auditCount(t, b, ten.ID, "member.invited", ten.OwnerEmail); got != 1 {
		t.Errorf("%d audit entries of the invitation", got)
	}

	agent := b.NewAdminClient(t)
	page := agent.Get(linkPath(t, link))
	if page.Status != http.StatusOK || !strings.Contains(page.Text("#invitation-intro"), ten.OwnerEmail) {
		t.Fatalf("invitation page: %d %q", page.Status, page.Text("#invitation-intro"))
	}
	token := page.Doc.Find(`input[name="token"]`).AttrOr("value", "")

	t.Run("BadPasswords", func(t *testing.T) {
		for _, tc := range []struct{ password, confirm, field string }{
			{"short", "short", "password"},
			{"long enough password", "another password", "confirm"},
			{strings.Repeat("x", 73), strings.Repeat("x", 73), "password"},
		} {
			p := agent.As(t).Submit("/admin/invitation", url.Values{"token": {token}, "password": {tc.password}, "confirm": {tc.confirm}})
			if p.Status != http.StatusUnprocessableEntity || p.Text("#err-"+tc.field) == "" {
				t.Errorf("%q/%q: %d, %s error %q", tc.password, tc.confirm, p.Status, tc.field, p.Text("#err-"+tc.field))
			}
		}
	})

	p = agent.Submit("/admin/invitation", url.Values{"token": {token}, "password": {"agent's own password"}, "confirm": {"agent's own password"}})
	if p.Status != http.StatusSeeOther || p.Location() != "/admin" {
		t.Fatalf("accepting: %d %q %s", p.Status, p.Location(), p.Text(".field-error"))
	}
	// An agent's home is the conversations.
	if p := agent.Get("/admin"); p.Status != http.StatusSeeOther || p.Location() != "/admin/conversations" {
		t.Errorf("agent's GET /admin: %d %q", p.Status, p.Location())
	}
	p = agent.Get("/admin/conversations")
	if p.Status != http.StatusOK {
		t.Fatalf("agent's inbox: %d", p.Status)
	}
	var nav []string
	p.Doc.Find(`nav[aria-label="Main"] a`).Each(func(_ int, s *goquery.Selection) {
		nav = append(nav, s.AttrOr("href", ""))
	})
	if want := []string{"/admin/conversations", "/admin/submissions", "/admin/visitors", "/admin/account"}; fmt.Sprint(nav) != fmt.Sprint(want) {
		t.Errorf("agent's navigation %v, want %v", nav, want)
	}
	if p := agent.Get("/admin/settings"); p.Status != http.StatusForbidden || !strings.Contains(p.Body, "Admin role") {
		t.Errorf("agent's settings: %d", p.Status)
	}
	if got := refusalCount(t, b, ten.ID, email); got != 1 {
		t.Errorf("%d audit entries of the refusal", got)
	}
	if got := auditCount(t, b, ten.ID, "member.joined", email); got != 1 {
		t.Errorf("%d audit entries of the joining", got)
	}

	t.Run("LinkWorksOnce", func(t *testing.T) {
		other := b.NewAdminClient(t)
		if p := other.Get(linkPath(t, link)); p.Status != http.StatusGone || !strings.Contains(p.Text("#invitation-problem"), "accepted already") {
			t.Errorf("used link: %d %q", p.Status, p.Text("#invitation-problem"))
		}
		other.Get("/admin/login")
		if p := other.Submit("/admin/invitation", url.Values{"token": {token}, "password": {"x password 2"}, "confirm": {"x password 2"}}); p.Status != http.StatusGone {
			t.Errorf("used link accepted again: %d", p.Status)
		}
		if p := other.Get("/admin/invitation?token=nonsense"); p.Status != http.StatusNotFound {
			t.Errorf("unknown link: %d", p.Status)
		}
	})

	t.Run("AlreadyMember", func(t *testing.T) {
		owner := owner.As(t)
		owner.Get("/admin/members")
		p := owner.Submit("/admin/members", url.Values{"email": {strings.ToUpper(email)}, "role": {"admin"}})
		if p.Status != http.StatusConflict || p.Text("#err-email") == "" {
			t.Errorf("inviting a member: %d %q", p.Status, p.Text("#err-email"))
		}
	})

	t.Run("RoleChangeAndRemoval", func(t *testing.T) {
		owner := owner.As(t)
		agent := agent.As(t)
		owner.Get("/admin/members")
		p := owner.Submit("/admin/members/"+memberID(t, owner, email)+"/role", url.Values{"role": {"admin"}})
		if p.Status != http.StatusSeeOther {
			t.Fatalf("role change: %d", p.Status)
		}
		if p := agent.Get("/admin/settings"); p.Status != http.StatusOK {
			t.Errorf("an admin's settings: %d", p.Status)
		}
		if p := agent.Get("/admin/tokens"); p.Status != http.StatusForbidden {
			t.Errorf("an admin's API tokens: %d", p.Status)
		}
		owner.Get("/admin/members")
		p = owner.Submit("/admin/members/"+memberID(t, owner, email)+"/remove", nil)
		if p.Status != http.StatusSeeOther {
			t.Fatalf("removal: %d", p.Status)
		}
		// The removed person's session loses the tenant at its next request.
		if p := agent.Get("/admin/conversations"); p.Status != http.StatusForbidden {
			t.Errorf("a removed member's inbox: %d", p.Status)
		}
		if p := agent.Get("/admin/login"); p.Status != http.StatusOK {
			t.Errorf("a removed member's session still holds: sign-in page %d", p.Status)
		}
		if got := auditCount(t, b, ten.ID, "member.removed", ten.OwnerEmail); got != 1 {
			t.Errorf("%d audit entries of the removal", got)
		}
	})
}

// memberID reads a member's id from the Team page.
func memberID(t *testing.T, c *webtest.AdminClient, email string) string {
	t.Helper()
	p := c.Get("/admin/members")
	id := ""
	p.Doc.Find("#members tbody tr").Each(func(_ int, s *goquery.Selection) {
		if strings.HasPrefix(strings.TrimSpace(s.Find("td").First().Text()), email) {
			id = strings.TrimPrefix(s.AttrOr("id", ""), "member-")
		}
	})
	if id == "" {
		t.Fatalf("%s is not on the Team page", email)
	}
	return id
}

func TestTeamRules(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	ten := b.OwnedTenant(t, "starter") // 5 places
	other := b.OwnedTenant(t, "starter")
	owner := b.NewAdminClient(t)
	owner.SignIn(ten)

	t.Run("BadInput", func(t *testing.T) {
		owner := owner.As(t)
		for _, tc := range []struct{ email, role, field string }{
			{"", "agent", "email"},
			{"not an address", "agent", "email"},
			{"a@b", "agent", "email"},
			{strings.Repeat("a", 243) + "@example.com", "agent", "email"},
			{"x@example.com", "superuser", "role"},
			{"x@example.com", "", "role"},
		} {
			owner.Get("/admin/members")
			p := owner.Submit("/admin/members", url.Values{"email": {tc.email}, "role": {tc.role}})
			if p.Status != http.StatusUnprocessableEntity || p.Text("#err-"+tc.field) == "" {
				t.Errorf("%q as %q: %d, %s error %q", tc.email, tc.role, p.Status, tc.field, p.Text("#err-"+tc.field))
			}
		}
	})

	t.Run("LastOwner", func(t *testing.T) {
		owner := owner.As(t)
		id := memberID(t, owner, ten.OwnerEmail)
		for _, path := range []string{"/admin/members/" + id + "/role", "/admin/members/" + id + "/remove"} {
			owner.Get("/admin/members")
			p := owner.Submit(path, url.Values{"role": {"agent"}})
			if p.Status != http.StatusSeeOther {
				t.Fatalf("%s: %d", path, p.Status)
			}
			if p := owner.Get("/admin/members"); !strings.Contains(p.Text(".flash.error"), "at least one owner") {
				t.Errorf("%s: flash %q", path, p.Text(".flash.error"))
			}
		}
	})

	t.Run("AnotherTenantsMember", func(t *testing.T) {
		owner := owner.As(t)
		o := b.NewAdminClient(t)
		o.SignIn(other)
		id := memberID(t, o, other.OwnerEmail)
		owner.Get("/admin/members")
		for _, path := range []string{"/admin/members/" + id + "/role", "/admin/members/" + id + "/remove",
			"/admin/members/invitations/" + id + "/revoke", "/admin/members/invitations/" + id + "/renew"} {
			if p := owner.Submit(path, url.Values{"role": {"agent"}}); p.Status != http.StatusNotFound {
				t.Errorf("%s of another tenant: %d", path, p.Status)
			}
		}
	})

	t.Run("Limit", func(t *testing.T) {
		owner := owner.As(t)
		// The owner takes one place of five: four invitations fit, a fifth does not.
		first := ""
		for i := range 4 {
			link := invite(t, owner, fmt.Sprintf("p%d-%s@example.test", i, ten.Slug), "agent")
			if i == 0 {
				first = link
			}
		}
		owner.Get("/admin/members")
		p := owner.Submit("/admin/members", url.Values{"email": {"p5-" + ten.Slug + "@example.test"}, "role": {"agent"}})
		if p.Status != http.StatusTooManyRequests || !strings.Contains(p.Text("#invite-error"), "5 of 5") {
			t.Errorf("sixth place: %d %q", p.Status, p.Text("#invite-error"))
		}
		// Inviting a waiting address again replaces its invitation (its
		// first link stops working) and takes no new place.
		again := invite(t, owner, "p0-"+ten.Slug+"@example.test", "admin")
		c := b.NewAdminClient(t)
		if p := c.Get(linkPath(t, first)); p.Status != http.StatusGone || !strings.Contains(p.Text("#invitation-problem"), "cancelled") {
			t.Errorf("a replaced link: %d %q", p.Status, p.Text("#invitation-problem"))
		}
		if p := c.Get(linkPath(t, again)); p.Status != http.StatusOK || !strings.Contains(p.Text("#invitation-intro"), "Admin") {
			t.Errorf("the new link: %d %q", p.Status, p.Text("#invitation-intro"))
		}
		// Cancelling it frees its place, and its link stops working.
		p = owner.Get("/admin/members")
		id := ""
		p.Doc.Find("#invitations tbody tr").Each(func(_ int, s *goquery.Selection) {
			if strings.HasPrefix(s.Find("td").First().Text(), "p0-") {
				id = strings.TrimPrefix(s.AttrOr("id", ""), "invitation-")
			}
		})
		if p := owner.Submit("/admin/members/invitations/"+id+"/revoke", nil); p.Status != http.StatusSeeOther {
			t.Fatalf("cancel: %d", p.Status)
		}
		if p := c.Get(linkPath(t, again)); p.Status != http.StatusGone {
			t.Errorf("a cancelled link: %d", p.Status)
		}
		invite(t, owner, "p5-"+ten.Slug+"@example.test", "agent")
	})

	t.Run("Expiry", func(t *testing.T) {
		b := webtest.SetupAdmin(t, nil)
		advance := webtest.ManualClock(b)
		ten := b.OwnedTenant(t, "starter")
		owner := b.NewAdminClient(t)
		owner.SignIn(ten)
		link := invite(t, owner, "late-"+ten.Slug+"@example.test", "agent")
		c := b.NewAdminClient(t)
		advance(7*24*time.Hour - time.Minute)
		if p := c.Get(linkPath(t, link)); p.Status != http.StatusOK {
			t.Errorf("a link of nearly seven days: %d", p.Status)
		}
		advance(time.Minute)
		if p := c.Get(linkPath(t, link)); p.Status != http.StatusGone || !strings.Contains(p.Text("#invitation-problem"), "ran out") {
			t.Errorf("a link of seven days: %d %q", p.Status, p.Text("#invitation-problem"))
		}
	})
}

// TestTeamExistingAccount: a person with an account (an owner of another
// tenant) joins with their own password, and switches between the two.
func TestTeamExistingAccount(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	ten := b.OwnedTenant(t, "starter")
	theirs := b.OwnedTenant(t, "starter")
	owner := b.NewAdminClient(t)
	owner.SignIn(ten)
	link := invite(t, owner, theirs.OwnerEmail, "admin")
	c := b.NewAdminClient(t)
	p := c.Get(linkPath(t, link))
	if p.Doc.Find("#confirm").Length() != 0 || p.Doc.Find("#password").Length() != 1 {
		t.Fatal("an existing account is asked to choose a password")
	}
	token := p.Doc.Find(`input[name="token"]`).AttrOr("value", "")
	if p := c.Submit("/admin/invitation", url.Values{"token": {token}, "password": {"not their password"}}); p.Status != http.StatusUnprocessableEntity || p.Text("#err-password") == "" {
		t.Errorf("wrong password: %d %q", p.Status, p.Text("#err-password"))
	}
	if p := c.Submit("/admin/invitation", url.Values{"token": {token}, "password": {theirs.Password}}); p.Status != http.StatusSeeOther {
		t.Fatalf("accepting with their password: %d %s", p.Status, p.Text(".field-error"))
	}
	p = c.Get("/admin")
	if p.Status != http.StatusOK || p.Doc.Find("#tenant-switch option").Length() != 2 {
		t.Fatalf("two tenants to switch between: %d, %d options", p.Status, p.Doc.Find("#tenant-switch option").Length())
	}
	if got := p.Doc.Find("#tenant-switch option[selected]").AttrOr("value", ""); got != ten.Slug {
		t.Errorf("signed in to %q, want the tenant joined, %s", got, ten.Slug)
	}
	// In the tenant joined they are an admin; in their own, its owner.
	if p := c.Get("/admin/members"); p.Status != http.StatusForbidden {
		t.Errorf("an admin's Team page: %d", p.Status)
	}
	c.Submit("/admin/tenant", url.Values{"tenant": {theirs.Slug}})
	if p := c.Get("/admin/members"); p.Status != http.StatusOK {
		t.Errorf("their own tenant's Team page: %d", p.Status)
	}
}

// TestTeamInvitationTwoFactor: an invited person whose account has
// two-step sign-in on joins with their password, and is signed in only
// after the code, into the tenant they joined: an invitation's link is no
// way around the second step.
func TestTeamInvitationTwoFactor(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	ten := b.OwnedTenant(t, "starter")
	theirs := b.OwnedTenant(t, "starter")
	them := b.NewAdminClient(t)
	them.SignIn(theirs)
	secret, _ := setUpTwoFactor(t, them, b.Srv.Base.Now())

	owner := b.NewAdminClient(t)
	owner.SignIn(ten)
	link := invite(t, owner, theirs.OwnerEmail, "agent")
	c := b.NewAdminClient(t)
	p := c.Get(linkPath(t, link))
	token := p.Doc.Find(`input[name="token"]`).AttrOr("value", "")
	p = c.Submit("/admin/invitation", url.Values{"token": {token}, "password": {theirs.Password}})
	if p.Status != http.StatusSeeOther || p.Location() != "/admin/login/code" {
		t.Fatalf("accepting with two-step sign-in on: %d to %q, want the code step", p.Status, p.Location())
	}
	if p := c.Get("/admin/conversations"); p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Location(), "/admin/login") {
		t.Fatalf("before the code: %d to %q, want the sign-in", p.Status, p.Location())
	}
	c.Get("/admin/login/code")
	// The next time step's code: the setup used the current one.
	code := auth.TOTPCode(secret, auth.TOTPStepAt(b.Srv.Base.Now())+1)
	if p := c.Submit("/admin/login/code", url.Values{"code": {code}}); p.Status != http.StatusSeeOther {
		t.Fatalf("code step: %d %s", p.Status, p.Text(".field-error, .flash.error"))
	}
	p = c.Get("/admin/conversations")
	if p.Status != http.StatusOK {
		t.Fatalf("after the code: %d to %q", p.Status, p.Location())
	}
	if got := p.Doc.Find("#tenant-switch option[selected]").AttrOr("value", ""); got != ten.Slug {
		t.Errorf("signed in to %q, want the tenant joined, %s", got, ten.Slug)
	}
}
