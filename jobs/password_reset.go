package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/mail"
)

// Mail is what the jobs that send email need.
type Mail struct {
	// Sender is the SMTP server of PARLEY_SMTP_URL; nil when it is unset,
	// and then no mail job is enqueued.
	Sender *mail.Sender
	// BaseURL is the service's public address, for the links mailed.
	BaseURL string
	// Now is the clock of the links' lifetimes (the server's, which tests
	// set); nil means time.Now.
	Now func() time.Time
}

// errNoMail cancels a mail job on a server without PARLEY_SMTP_URL: no
// attempt would ever send it.
var errNoMail = river.JobCancel(errors.New("PARLEY_SMTP_URL is not set: no mail can be sent"))

// ready is errNoMail when the server sends no mail, else nil.
func (m Mail) ready() error {
	if m.Sender == nil {
		return errNoMail
	}
	return nil
}

// PasswordResetArgs asks for a password-reset link to be mailed to the
// dashboard user with that email, if there is one. The sign-in page
// enqueues it for any address, so that its answer (and its time) says
// nothing of which addresses have accounts; only the job looks.
type PasswordResetArgs struct {
	Email string `json:"email"`
}

// Kind names the job.
func (PasswordResetArgs) Kind() string { return "password_reset_email" }

// MailQueue is the River queue of the jobs that send email, apart from
// other work so that a slow mail server holds up nothing else.
const MailQueue = "mail"

// InsertOpts puts the job on MailQueue and gives up after five attempts
// (River's backoff spreads them over about six minutes): a link arriving
// much later would be stale.
func (PasswordResetArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: MailQueue, MaxAttempts: 5}
}

// PasswordResetWorker makes the link (a new token per attempt: only its
// hash is stored, so a retry cannot send the previous one again) and mails
// it.
type PasswordResetWorker struct {
	river.WorkerDefaults[PasswordResetArgs]
	DB   *db.DB
	Mail Mail
}

// Work mails the link, or nothing when no user has that address.
func (w *PasswordResetWorker) Work(ctx context.Context, job *river.Job[PasswordResetArgs]) error {
	if err := w.Mail.ready(); err != nil {
		return err
	}
	u, err := w.DB.UserByEmail(ctx, job.Args.Email)
	if parley.ErrorKind(err) == parley.KindNotFound {
		return nil
	}
	if err != nil {
		return err
	}
	now := w.Mail.now()
	token, hash := auth.NewResetToken()
	if err := w.DB.CreatePasswordReset(ctx, u.ID, hash, now, now.Add(auth.ResetLinkLifetime)); err != nil {
		return err
	}
	link := w.Mail.BaseURL + "/admin/reset-password?token=" + token
	return w.Mail.Sender.Send(ctx, mail.Message{To: u.Email, Subject: "Reset your Parley password", Body: resetMailBody(u.Email, link)})
}

func resetMailBody(email, link string) string {
	return fmt.Sprintf(`Hello,

Someone, hopefully you, asked to reset the password of the Parley dashboard
account %s.

To choose a new password, open this link within the hour:

%s

The link works once. If you did not ask for it, ignore this email: your
password stays as it is.
`, email, link)
}
