package jobs

import (
	"context"
	"fmt"

	"github.com/riverqueue/river"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/mail"
)

// SignupMailArgs asks for the mail of an open sign-up (accounts.Signup of
// kind confirmation): the link that confirms the address and creates the
// workspace, or, when the address already has an account, a note saying so.
// The sign-up page enqueues it for any address, so that its answer (and its
// time) says nothing of which addresses have accounts; only the job looks.
type SignupMailArgs struct {
	SignupID string `json:"signupId"`
}

// Kind names the job.
func (SignupMailArgs) Kind() string { return "signup_email" }

// InsertOpts puts the job on MailQueue and gives up after five attempts, as
// the password reset's does.
func (SignupMailArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: MailQueue, MaxAttempts: 5}
}

// SignupMailWorker makes the confirmation link (a new token per attempt:
// only its hash is stored) and mails it.
type SignupMailWorker struct {
	river.WorkerDefaults[SignupMailArgs]
	DB   *db.DB
	Mail Mail
}

// Work mails the link, or the note to a person who has an account already,
// or nothing when the sign-up is gone (used, or deleted).
func (w *SignupMailWorker) Work(ctx context.Context, job *river.Job[SignupMailArgs]) error {
	if err := w.Mail.ready(); err != nil {
		return err
	}
	now := w.Mail.now()
	token, hash := auth.NewResetToken()
	s, err := w.DB.SetSignupToken(ctx, job.Args.SignupID, hash, now)
	if parley.ErrorKind(err) == parley.KindNotFound {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = w.DB.UserByEmail(ctx, s.Email)
	switch {
	case err == nil:
		if err := w.DB.DeleteSignup(ctx, s.ID); err != nil {
			return err
		}
		return w.Mail.Sender.Send(ctx, mail.Message{To: s.Email, Subject: "You already have a Parley account",
			Body: accountExistsMailBody(s.Email, w.Mail.BaseURL)})
	case parley.ErrorKind(err) != parley.KindNotFound:
		return err
	}
	link := w.Mail.BaseURL + "/admin/signup/confirm?token=" + token
	return w.Mail.Sender.Send(ctx, mail.Message{To: s.Email, Subject: "Confirm your email to create your Parley workspace",
		Body: signupMailBody(s.Email, s.WorkspaceName, link)})
}

func signupMailBody(email, workspace, link string) string {
	return fmt.Sprintf(`Hello,

Someone, hopefully you, signed up to Parley with %s to create the
workspace "%s".

To confirm your email and create the workspace, open this link within
24 hours:

%s

The link works once. If you did not sign up, ignore this email: nothing
is created without it.
`, email, workspace, link)
}

func accountExistsMailBody(email, base string) string {
	return fmt.Sprintf(`Hello,

Someone, hopefully you, tried to sign up to Parley with %s, but you
already have an account with this address, so nothing new was created.

Sign in here:

%s/admin/login

If you forgot your password, choose a new one here:

%s/admin/forgot-password

If you did not try to sign up, ignore this email: your account stays as
it is.
`, email, base, base)
}
