package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/mail"
)

// InvitationMailArgs asks for an invitation to a tenant's team to be
// mailed: the owner's invitation, inserted with it.
type InvitationMailArgs struct {
	InvitationID string `json:"invitationId"`
}

// Kind names the job.
func (InvitationMailArgs) Kind() string { return "invitation_email" }

// InsertOpts puts the job on MailQueue with five attempts, as the reset
// link's.
func (InvitationMailArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: MailQueue, MaxAttempts: 5}
}

// InvitationMailWorker gives the invitation a new link (each attempt its
// own: only hashes are stored, so a retry cannot send a link it does not
// hold) and mails it, unless the invitation was accepted, cancelled or
// ran out since.
type InvitationMailWorker struct {
	river.WorkerDefaults[InvitationMailArgs]
	DB   *db.DB
	Mail Mail
}

// Work mails the invitation.
func (w *InvitationMailWorker) Work(ctx context.Context, job *river.Job[InvitationMailArgs]) error {
	if err := w.Mail.ready(); err != nil {
		return err
	}
	now := w.Mail.now()
	token, hash := auth.NewResetToken()
	inv, open, err := w.DB.SetInvitationToken(ctx, job.Args.InvitationID, hash, now)
	if err != nil || !open {
		return err
	}
	link := w.Mail.BaseURL + "/admin/invitation?token=" + token
	return w.Mail.Sender.Send(ctx, mail.Message{To: inv.Email, Subject: "Join " + inv.TenantName + " on Parley",
		Body: invitationMailBody(inv.InviterEmail, inv.TenantName, inv.Role, link, inv.ExpiresAt)})
}

func invitationMailBody(inviter, tenant, role, link string, expires time.Time) string {
	who := "You are invited"
	if inviter != "" {
		who = inviter + " invited you"
	}
	return fmt.Sprintf(`Hello,

%s to the team of %s on Parley, as %s.

To join, open this link before %s:

%s

The link works once. If you did not expect this invitation, ignore this email.
`, who, tenant, role, expires.UTC().Format("2 January 2006 15:04 UTC"), link)
}
