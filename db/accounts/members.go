package accounts

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/parley/parley"
	"github.com/parley/parley/db/audit"
	"github.com/parley/parley/db/internal/pgbase"
)

// Member is a person of a tenant's team.
type Member struct {
	UserID   string    `db:"user_id"`
	Email    string    `db:"email"`
	Role     string    `db:"role"`
	JoinedAt time.Time `db:"created_at"`
}

// Invitation is an owner's invitation of an address to the team, with a role.
type Invitation struct {
	ID           string     `db:"id"`
	TenantID     string     `db:"tenant_id"`
	TenantName   string     `db:"tenant_name"`
	Email        string     `db:"email"`
	Role         string     `db:"role"`
	InviterEmail string     `db:"inviter_email"`
	CreatedAt    time.Time  `db:"created_at"`
	ExpiresAt    time.Time  `db:"expires_at"`
	AcceptedAt   *time.Time `db:"accepted_at"`
	RevokedAt    *time.Time `db:"revoked_at"`
}

// The reasons an invitation's link no longer works.
var (
	ErrInvitationUsed    = errors.New("the invitation was accepted already")
	ErrInvitationRevoked = errors.New("the invitation was cancelled")
	ErrInvitationExpired = errors.New("the invitation expired")
)

const invitationColumns = `i.id, i.tenant_id, t.name AS tenant_name, i.email, i.role,
	coalesce(u.email, '') AS inviter_email, i.created_at, i.expires_at, i.accepted_at, i.revoked_at`

const invitationFrom = `FROM invitations i JOIN tenants t ON t.id = i.tenant_id LEFT JOIN users u ON u.id = i.invited_by`

// lockMembers serialises the changes of one tenant's team (the limit and
// the last owner then hold under concurrent requests) without locking the
// tenant's row, which every conversation's insert reads.
func lockMembers(ctx context.Context, tx pgx.Tx, tenantID string) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('members:' || $1::text))`, tenantID); err != nil {
		return fmt.Errorf("locking the team: %w", err)
	}
	return nil
}

// Members lists the tenant's team, owners first, then by email.
func (d *Accounts) Members(ctx context.Context, tenantID string) ([]Member, error) {
	rows, _ := d.pool.Query(ctx, `SELECT m.user_id, u.email, m.role, m.created_at
		FROM tenant_members m JOIN users u ON u.id = m.user_id
		WHERE m.tenant_id = $1
		ORDER BY array_position(ARRAY['owner', 'admin', 'agent'], m.role), lower(u.email)`, tenantID)
	ms, err := pgx.CollectRows(rows, pgx.RowToStructByName[Member])
	if err != nil {
		return nil, fmt.Errorf("listing members: %w", err)
	}
	return ms, nil
}

// Member is one member of the tenant (not found for anyone else, another
// tenant's members included).
func (d *Accounts) Member(ctx context.Context, tenantID, userID string) (Member, error) {
	if !pgbase.LooksLikeUUID(userID) {
		return Member{}, parley.Errorf(parley.KindNotFound, "Member not found")
	}
	return member(ctx, d.pool, tenantID, userID)
}

func member(ctx context.Context, q pgbase.Querier, tenantID, userID string) (Member, error) {
	rows, _ := q.Query(ctx, `SELECT m.user_id, u.email, m.role, m.created_at
		FROM tenant_members m JOIN users u ON u.id = m.user_id
		WHERE m.tenant_id = $1 AND m.user_id = $2`, tenantID, userID)
	m, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Member])
	if err != nil {
		return Member{}, pgbase.NotFound(err, "Member")
	}
	return m, nil
}

// OpenInvitations lists the tenant's invitations still waiting to be
// accepted at now, newest first.
func (d *Accounts) OpenInvitations(ctx context.Context, tenantID string, now time.Time) ([]Invitation, error) {
	rows, _ := d.pool.Query(ctx, `SELECT `+invitationColumns+` `+invitationFrom+`
		WHERE i.tenant_id = $1 AND i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > $2
		ORDER BY i.created_at DESC`, tenantID, now)
	is, err := pgx.CollectRows(rows, pgx.RowToStructByName[Invitation])
	if err != nil {
		return nil, fmt.Errorf("listing invitations: %w", err)
	}
	return is, nil
}

// NewInvitation is an invitation to write: its address and role, who sent
// it, the hash of its link's token, and when it expires. Mail, when set,
// is the job that mails the link, inserted with it.
type NewInvitation struct {
	TenantID  string
	Email     string
	Role      string
	InvitedBy string
	TokenHash []byte
	Now       time.Time
	ExpiresAt time.Time
	Mail      func(invitationID string) river.JobArgs
}

// TeamSize is how many places a tenant's team takes at now: its members
// and its open invitations (those of except aside, an address being
// invited again).
func teamSize(ctx context.Context, tx pgx.Tx, tenantID, except string, now time.Time) (int, error) {
	var n int
	err := tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM tenant_members WHERE tenant_id = $1)
		+ (SELECT count(*) FROM invitations WHERE tenant_id = $1 AND accepted_at IS NULL AND revoked_at IS NULL
			AND expires_at > $2 AND lower(email) <> lower($3))`, tenantID, now, except).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("counting the team: %w", err)
	}
	return n, nil
}

// Invite writes the invitation within the team's limit (members and open
// invitations together), replacing the address's open one, with its audit
// entry and its mail job, in one transaction. An address of a member is a
// conflict.
func (d *Accounts) Invite(ctx context.Context, in NewInvitation, limit int, e audit.Entry) (Invitation, error) {
	var inv Invitation
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		if err := lockMembers(ctx, tx, in.TenantID); err != nil {
			return err
		}
		var member bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM tenant_members m JOIN users u ON u.id = m.user_id
			WHERE m.tenant_id = $1 AND lower(u.email) = lower($2))`, in.TenantID, in.Email).Scan(&member); err != nil {
			return fmt.Errorf("finding the member: %w", err)
		}
		if member {
			return &parley.Error{Kind: parley.KindConflict, Message: in.Email + " is already a member of the team: change their role instead",
				Details: map[string]string{"email": "This address is already a member of the team."}}
		}
		n, err := teamSize(ctx, tx, in.TenantID, in.Email, in.Now)
		if err != nil {
			return err
		}
		if n >= limit {
			return &parley.Error{Kind: parley.KindRateLimited, Code: "LIMIT_REACHED",
				Message: fmt.Sprintf("Team limit of the plan reached (%d of %d, invitations included): upgrade the plan, or remove a member or cancel an invitation", n, limit),
				Details: map[string]int{"current": n, "limit": limit}}
		}
		if _, err := tx.Exec(ctx, `UPDATE invitations SET revoked_at = $3
			WHERE tenant_id = $1 AND lower(email) = lower($2) AND accepted_at IS NULL AND revoked_at IS NULL`,
			in.TenantID, in.Email, in.Now); err != nil {
			return fmt.Errorf("replacing the open invitation: %w", err)
		}
		var id string
		if err := tx.QueryRow(ctx, `INSERT INTO invitations (tenant_id, email, role, token_hash, invited_by, created_at, expires_at)
			VALUES ($1, $2, $3, $4, nullif($5, '')::uuid, $6, $7) RETURNING id`,
			in.TenantID, in.Email, in.Role, in.TokenHash, in.InvitedBy, in.Now, in.ExpiresAt).Scan(&id); err != nil {
			return fmt.Errorf("inserting the invitation: %w", err)
		}
		rows, _ := tx.Query(ctx, `SELECT `+invitationColumns+` `+invitationFrom+` WHERE i.id = $1`, id)
		if inv, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Invitation]); err != nil {
			return fmt.Errorf("reading the invitation: %w", err)
		}
		e.TargetID = id
		if err := audit.RecordIn(ctx, tx, e); err != nil {
			return err
		}
		if in.Mail != nil {
			if _, err := d.jobs.InsertTx(ctx, tx, in.Mail(id), nil); err != nil {
				return fmt.Errorf("queueing the invitation's mail: %w", err)
			}
		}
		return nil
	})
	return inv, err
}

// RenewInvitation gives an open invitation a new link (hash) and a new
// expiry: the old link stops working. Mail, when set, mails the new one.
func (d *Accounts) RenewInvitation(ctx context.Context, tenantID, id string, hash []byte, now, expires time.Time, mail river.JobArgs) (Invitation, error) {
	if !pgbase.LooksLikeUUID(id) {
		return Invitation{}, parley.Errorf(parley.KindNotFound, "Invitation not found")
	}
	var inv Invitation
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE invitations SET token_hash = $3, expires_at = $5
			WHERE tenant_id = $1 AND id = $2 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $4`,
			tenantID, id, hash, now, expires)
		if err != nil {
			return fmt.Errorf("renewing the invitation: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return parley.Errorf(parley.KindNotFound, "Invitation not found")
		}
		rows, _ := tx.Query(ctx, `SELECT `+invitationColumns+` `+invitationFrom+` WHERE i.id = $1`, id)
		if inv, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Invitation]); err != nil {
			return fmt.Errorf("reading the invitation: %w", err)
		}
		if mail != nil {
			if _, err := d.jobs.InsertTx(ctx, tx, mail, nil); err != nil {
				return fmt.Errorf("queueing the invitation's mail: %w", err)
			}
		}
		return nil
	})
	return inv, err
}

// SetInvitationToken gives the open invitation id the link of hash (its
// mail job makes a new one per attempt): it reports false when the
// invitation no longer waits, and no mail should go.
func (d *Accounts) SetInvitationToken(ctx context.Context, id string, hash []byte, now time.Time) (Invitation, bool, error) {
	tag, err := d.pool.Exec(ctx, `UPDATE invitations SET token_hash = $2
		WHERE id = $1 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $3`, id, hash, now)
	if err != nil {
		return Invitation{}, false, fmt.Errorf("setting the invitation's link: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return Invitation{}, false, nil
	}
	rows, _ := d.pool.Query(ctx, `SELECT `+invitationColumns+` `+invitationFrom+` WHERE i.id = $1`, id)
	inv, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Invitation])
	if err != nil {
		return Invitation{}, false, fmt.Errorf("reading the invitation: %w", err)
	}
	return inv, true, nil
}

// RevokeInvitation cancels the tenant's open invitation id, with its audit
// entry: its link stops working.
func (d *Accounts) RevokeInvitation(ctx context.Context, tenantID, id string, now time.Time, e audit.Entry) (Invitation, error) {
	if !pgbase.LooksLikeUUID(id) {
		return Invitation{}, parley.Errorf(parley.KindNotFound, "Invitation not found")
	}
	var inv Invitation
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		var email string
		err := tx.QueryRow(ctx, `UPDATE invitations SET revoked_at = $3
			WHERE tenant_id = $1 AND id = $2 AND accepted_at IS NULL AND revoked_at IS NULL RETURNING email`,
			tenantID, id, now).Scan(&email)
		if err != nil {
			return pgbase.NotFound(err, "Invitation")
		}
		inv = Invitation{ID: id, TenantID: tenantID, Email: email, RevokedAt: &now}
		e.Target, e.TargetID = email, id
		return audit.RecordIn(ctx, tx, e)
	})
	return inv, err
}

// InvitationByHash is the invitation of a link's token hash, whatever its
// state (the page says why a link no longer works).
func (d *Accounts) InvitationByHash(ctx context.Context, hash []byte) (Invitation, error) {
	rows, _ := d.pool.Query(ctx, `SELECT `+invitationColumns+` `+invitationFrom+` WHERE i.token_hash = $1`, hash)
	inv, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Invitation])
	if err != nil {
		return Invitation{}, pgbase.NotFound(err, "Invitation")
	}
	return inv, nil
}

// Acceptance is who accepts an invitation: the account of its address, or,
// when there is none, a new one with PasswordHash.
type Acceptance struct {
	PasswordHash string
	Now          time.Time
}

// AcceptInvitation uses the link of hash: it makes its address's account a
// member with the invitation's role (creating the account with
// a.PasswordHash when the address has none; a member already keeps their
// role), marks the invitation accepted and records check's audit entry, in
// one transaction. A used, cancelled or expired link is ErrInvitationUsed,
// ErrInvitationRevoked or ErrInvitationExpired; check, given the account
// found (nil for none), may refuse (a wrong password).
func (d *Accounts) AcceptInvitation(ctx context.Context, hash []byte, a Acceptance, check func(*User) error, e audit.Entry) (User, Invitation, error) {
	var u User
	var inv Invitation
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, `SELECT `+invitationColumns+` `+invitationFrom+` WHERE i.token_hash = $1 FOR UPDATE OF i`, hash)
		var err error
		if inv, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Invitation]); err != nil {
			return pgbase.NotFound(err, "Invitation")
		}
		switch {
		case inv.AcceptedAt != nil:
			return ErrInvitationUsed
		case inv.RevokedAt != nil:
			return ErrInvitationRevoked
		case !a.Now.Before(inv.ExpiresAt):
			return ErrInvitationExpired
		}
		rows, _ = tx.Query(ctx, `SELECT id, email, password_hash, created_at FROM users WHERE lower(email) = lower($1)`, inv.Email)
		found, err := pgx.CollectRows(rows, pgx.RowToStructByName[User])
		if err != nil {
			return fmt.Errorf("finding the account: %w", err)
		}
		var existing *User
		if len(found) == 1 {
			existing = &found[0]
		}
		if err := check(existing); err != nil {
			return err
		}
		if existing != nil {
			u = *existing
		} else {
			if a.PasswordHash == "" {
				return errors.New("accepting an invitation without an account needs a password")
			}
			rows, _ := tx.Query(ctx, `INSERT INTO users (email, password_hash) VALUES ($1, $2)
				RETURNING id, email, password_hash, created_at`, inv.Email, a.PasswordHash)
			if u, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[User]); err != nil {
				return fmt.Errorf("creating the account: %w", err)
			}
		}
		if err := lockMembers(ctx, tx, inv.TenantID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO tenant_members (tenant_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (tenant_id, user_id) DO NOTHING`, inv.TenantID, u.ID, inv.Role, a.Now); err != nil {
			return fmt.Errorf("adding the member: %w", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE invitations SET accepted_at = $2, accepted_by = $3 WHERE id = $1`,
			inv.ID, a.Now, u.ID); err != nil {
			return fmt.Errorf("marking the invitation accepted: %w", err)
		}
		e.TenantID, e.Target, e.TargetID = inv.TenantID, inv.Email, u.ID
		e.Actor = audit.Actor{Kind: audit.ActorPerson, ID: u.ID, Name: u.Email}
		e.Details = map[string]any{"role": inv.Role}
		return audit.RecordIn(ctx, tx, e)
	})
	return u, inv, err
}

// ErrLastOwner refuses the change that would leave a tenant without an owner.
var ErrLastOwner = &parley.Error{Kind: parley.KindConflict,
	Message: "A team needs at least one owner: make someone else an owner first"}

// memberChanging locks the tenant's team and reads the member about to
// change; an owner who would not stay one (stillOwner false) must leave
// another owner behind (ErrLastOwner).
func memberChanging(ctx context.Context, tx pgx.Tx, tenantID, userID string, stillOwner bool) (Member, error) {
	if err := lockMembers(ctx, tx, tenantID); err != nil {
		return Member{}, err
	}
	m, err := member(ctx, tx, tenantID, userID)
	if err != nil || m.Role != "owner" || stillOwner {
		return m, err
	}
	var others int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM tenant_members WHERE tenant_id = $1 AND role = 'owner' AND user_id <> $2`,
		tenantID, userID).Scan(&others); err != nil {
		return Member{}, fmt.Errorf("counting owners: %w", err)
	}
	if others == 0 {
		return Member{}, ErrLastOwner
	}
	return m, nil
}

// revokeGrants ends the OAuth grants the member gave on the tenant.
func revokeGrants(ctx context.Context, tx pgx.Tx, tenantID, userID string, now time.Time) error {
	if _, err := tx.Exec(ctx, `UPDATE oauth_grants SET revoked_at = $3
		WHERE tenant_id = $1 AND user_id = $2 AND revoked_at IS NULL`, tenantID, userID, now); err != nil {
		return fmt.Errorf("revoking the member's grants: %w", err)
	}
	return nil
}

// ChangeRole gives the member a new role, with its audit entry: the last
// owner keeps theirs (ErrLastOwner). A member given a role that does not
// hold their old one (holds is auth.RoleHolds) loses the OAuth grants they
// gave on the tenant, which hold the old role's scopes.
func (d *Accounts) ChangeRole(ctx context.Context, tenantID, userID, role string, holds func(role, least string) bool, now time.Time, e audit.Entry) (Member, error) {
	if !pgbase.LooksLikeUUID(userID) {
		return Member{}, parley.Errorf(parley.KindNotFound, "Member not found")
	}
	var m Member
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		var err error
		if m, err = memberChanging(ctx, tx, tenantID, userID, role == "owner"); err != nil || m.Role == role {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE tenant_members SET role = $3 WHERE tenant_id = $1 AND user_id = $2`,
			tenantID, userID, role); err != nil {
			return fmt.Errorf("changing the role: %w", err)
		}
		if !holds(role, m.Role) {
			if err := revokeGrants(ctx, tx, tenantID, userID, now); err != nil {
				return err
			}
		}
		e.Target, e.TargetID = m.Email, userID
		e.Details = map[string]any{"from": m.Role, "to": role}
		m.Role = role
		return audit.RecordIn(ctx, tx, e)
	})
	return m, err
}

// RemoveMember takes the member off the team, with its audit entry, and
// revokes the OAuth grants they gave on the tenant, in one transaction: the
// last owner stays (ErrLastOwner). Their dashboard sessions lose the tenant
// at their next request (the dashboard reads the memberships each time).
func (d *Accounts) RemoveMember(ctx context.Context, tenantID, userID string, now time.Time, e audit.Entry) (Member, error) {
	if !pgbase.LooksLikeUUID(userID) {
		return Member{}, parley.Errorf(parley.KindNotFound, "Member not found")
	}
	var m Member
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		var err error
		if m, err = memberChanging(ctx, tx, tenantID, userID, false); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM tenant_members WHERE tenant_id = $1 AND user_id = $2`, tenantID, userID); err != nil {
			return fmt.Errorf("removing the member: %w", err)
		}
		if err := revokeGrants(ctx, tx, tenantID, userID, now); err != nil {
			return err
		}
		e.Target, e.TargetID = m.Email, userID
		e.Details = map[string]any{"role": m.Role}
		return audit.RecordIn(ctx, tx, e)
	})
	return m, err
}
