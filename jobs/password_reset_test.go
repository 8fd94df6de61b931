package jobs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"mime/quotedprintable"
	netmail "net/mail"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"

	"github.com/parley/parley/db/accounts"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/mail"
	"github.com/parley/parley/mail/mailtest"
)

func TestPasswordResetWorker(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.New(t)
	srv := mailtest.Start(t, mailtest.Options{})
	cfg, err := mail.ParseURL(srv.URL("Parley <no-reply@parley.test>"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	m := Mail{Sender: mail.NewSender(cfg), BaseURL: "https://parley.example", Now: func() time.Time { return now }}
	work := func(t *testing.T, m Mail, email string) (*rivertest.WorkResult, error) {
		t.Helper()
		tw := rivertest.NewWorker(t, riverpgxv5.New(store.Pool()), &river.Config{}, &PasswordResetWorker{DB: store, Mail: m})
		tx, err := store.Pool().Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		return tw.Work(ctx, t, tx, PasswordResetArgs{Email: email}, nil)
	}
	newUser := func(t *testing.T) (id, email string) {
		t.Helper()
		email = fmt.Sprintf("owner-%d@jobs.test", time.Now().UnixNano())
		if err := store.Pool().QueryRow(ctx, `INSERT INTO users (email, password_hash) VALUES ($1, 'x') RETURNING id`, email).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id, email
	}
	resets := func(t *testing.T, userID string) []accounts.PasswordReset {
		t.Helper()
		rows, err := store.Pool().Query(ctx, `SELECT created_at, expires_at FROM password_resets WHERE user_id = $1`, userID)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []accounts.PasswordReset
		for rows.Next() {
			var r accounts.PasswordReset
			if err := rows.Scan(&r.CreatedAt, &r.ExpiresAt); err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		return out
	}

	t.Run("MailsALinkValidAnHour", func(t *testing.T) {
		t.Parallel()
		id, email := newUser(t)
		res, err := work(t, m, strings.ToUpper(email))
		if err != nil || res.EventKind != river.EventKindJobCompleted {
			t.Fatalf("%v %+v", err, res)
		}
		msg, err := netmail.ReadMessage(bytes.NewReader(srv.Wait(t, email, 1, 5*time.Second).Data))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(quotedprintable.NewReader(msg.Body))
		token := regexp.MustCompile(`https://parley\.example/admin/reset-password\?token=([A-Za-z0-9_-]{43})\r\n`).FindSubmatch(body)
		if token == nil {
			t.Fatalf("no link in\n%s", body)
		}
		rs := resets(t, id)
		if len(rs) != 1 || !rs[0].CreatedAt.Equal(now) || !rs[0].ExpiresAt.Equal(now.Add(time.Hour)) {
			t.Fatalf("stored %+v", rs)
		}
		sum := sha256.Sum256(token[1])
		if _, err := store.PasswordResetByHash(ctx, sum[:]); err != nil {
			t.Errorf("the link is not stored by its token's SHA-256: %v", err)
		}
	})

	t.Run("NoAccountNoMail", func(t *testing.T) {
		t.Parallel()
		res, err := work(t, m, "nobody@jobs.test")
		if err != nil || res.EventKind != river.EventKindJobCompleted {
			t.Fatalf("%v %+v", err, res)
		}
		if n := len(srv.To("nobody@jobs.test")); n != 0 {
			t.Errorf("%d messages", n)
		}
	})

	t.Run("WithoutSMTPCancelled", func(t *testing.T) {
		t.Parallel()
		_, email := newUser(t)
		res, err := work(t, Mail{BaseURL: m.BaseURL}, email)
		if err != nil || res.EventKind != river.EventKindJobCancelled {
			t.Fatalf("%v %+v", err, res)
		}
	})

	t.Run("RefusedFailsForARetry", func(t *testing.T) {
		t.Parallel()
		refusing := mailtest.Start(t, mailtest.Options{})
		rc, _ := mail.ParseURL(refusing.URL("no-reply@parley.test"))
		refusing.RejectNext(1)
		id, email := newUser(t)
		res, err := work(t, Mail{Sender: mail.NewSender(rc), BaseURL: m.BaseURL, Now: m.Now}, email)
		if err == nil || res.EventKind != river.EventKindJobFailed || !strings.Contains(err.Error(), "451") {
			t.Fatalf("%v %+v", err, res)
		}
		if n := len(resets(t, id)); n != 1 {
			t.Errorf("%d links stored", n)
		}
	})
}
