package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/db/accounts"
	"github.com/parley/parley/mail/mailtest"
)

func TestSignupInvite(t *testing.T) {
	store := cliEnv(t)
	ctx := context.Background()
	smtp := mailtest.Start(t, mailtest.Options{})
	t.Setenv("PARLEY_BASE_URL", "https://parley.example.com")
	t.Setenv("PARLEY_SIGNUP", "invite")
	t.Setenv("PARLEY_SMTP_URL", smtp.URL("Parley <no-reply@parley.test>"))
	email := uniqueSlug("invitee") + "@example.com"

	out, errOut, err := runCLI(t, "signup", "invite", "--email", email)
	if err != nil {
		t.Fatalf("signup invite: %v\n%s", err, errOut)
	}
	var got struct {
		Email     string    `json:"email"`
		Link      string    `json:"link"`
		ExpiresAt time.Time `json:"expiresAt"`
		Mailed    bool      `json:"mailed"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("printed %q: %v", out, err)
	}
	token, ok := strings.CutPrefix(got.Link, "https://parley.example.com/admin/signup?invitation=")
	if !ok || got.Email != email || !got.Mailed {
		t.Fatalf("printed %+v", got)
	}
	if d := time.Until(got.ExpiresAt); d < accounts.InvitationLifetime-time.Minute || d > accounts.InvitationLifetime {
		t.Errorf("expires in %s, want 7 days", d)
	}
	s, err := store.SignupByHash(ctx, auth.HashResetToken(token))
	if err != nil || s.Kind != accounts.SignupInvitation || s.Email != email {
		t.Errorf("stored %+v (%v)", s, err)
	}
	if _, err := store.SignupByHash(ctx, []byte(token)); err == nil {
		t.Error("the token is stored as it is")
	}
	m := smtp.Wait(t, email, 1, 10*time.Second)
	if !strings.Contains(strings.ReplaceAll(string(m.Data), "=\r\n", ""), "invitation=3D"+token) {
		t.Errorf("the email does not hold the link:\n%s", m.Data)
	}

	t.Run("WithoutMail", func(t *testing.T) {
		t.Setenv("PARLEY_SMTP_URL", "")
		t.Setenv("PARLEY_SIGNUP", "")
		out, errOut, err := runCLI(t, "signup", "invite", "--email", uniqueSlug("nomail")+"@example.com")
		if err != nil || !strings.Contains(out, `"mailed": false`) || !strings.Contains(errOut, "PARLEY_SIGNUP is closed") {
			t.Errorf("%v: %s / %s", err, out, errOut)
		}
	})

	t.Run("BadEmail", func(t *testing.T) {
		for _, e := range []string{"", "nope", "Ann <ann@example.com>"} {
			_, _, err := runCLI(t, "signup", "invite", "--email", e)
			wantErr(t, err, "--email")
		}
	})
}
