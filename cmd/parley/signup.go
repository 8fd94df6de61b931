package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/mail"
)

// signupInvite makes the operator's invitation to create a workspace
// (PARLEY_SIGNUP=invite): a link that works once, for seven days, stored by
// its token's hash. It prints the link, and mails it when PARLEY_SMTP_URL is
// set.
func signupInvite(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("signup invite", stderr)
	email := fs.String("email", "", "the address of the person invited to create a workspace")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !auth.NewAccountEmail(*email) {
		return fmt.Errorf("--email: %q is not an email address (like name@example.com)", *email)
	}
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	if cfg.Signup != "invite" {
		fmt.Fprintf(stderr, "note: PARLEY_SIGNUP is %s here; the link works once the server runs with PARLEY_SIGNUP=invite\n", cfg.Signup)
	}
	return withDB(ctx, func(store *db.DB) error {
		token, hash := auth.NewResetToken()
		s, err := store.CreateSignupInvitation(ctx, *email, hash, time.Now())
		if err != nil {
			return err
		}
		link := cfg.BaseURL + "/admin/signup?invitation=" + token
		out := map[string]any{"email": s.Email, "link": link, "expiresAt": s.ExpiresAt.UTC(), "mailed": false}
		if cfg.SMTP != nil {
			err := mail.NewSender(*cfg.SMTP).Send(ctx, mail.Message{To: s.Email, Subject: "You are invited to create a Parley workspace",
				Body: invitationMailBody(link)})
			if err != nil {
				// The link works anyway: the operator can hand it over.
				fmt.Fprintf(stderr, "the invitation was not mailed (%v): hand the link over yourself\n", err)
			} else {
				out["mailed"] = true
			}
		}
		return printJSON(stdout, out)
	})
}

func invitationMailBody(link string) string {
	return fmt.Sprintf(`Hello,

You are invited to create a workspace on Parley, to put an AI assistant
on your website.

To create it, open this link within 7 days, then choose a password and
your workspace's name:

%s

The link works once. If you did not expect this invitation, ignore this
email.
`, link)
}
