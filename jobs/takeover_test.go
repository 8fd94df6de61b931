package jobs

import (
	"bytes"
	"context"
	"io"
	"mime/quotedprintable"
	netmail "net/mail"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/mail"
	"github.com/parley/parley/mail/mailtest"
)

// Nobody there (issue 36): an escalation nobody takes within the wait, and
// a person who stops answering, give the conversation back to the
// assistant; a person who comes first wins and the job does nothing.
func TestTakeoverJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := mailtest.Start(t, mailtest.Options{})
	cfg, err := mail.ParseURL(srv.URL("Parley <no-reply@parley.test>"))
	if err != nil {
		t.Fatal(err)
	}
	sender := mail.NewSender(cfg)

	type bundle struct {
		f       *dbtest.ConvFixture
		c       parley.Conversation
		members []string
	}
	setup := func(t *testing.T) bundle {
		t.Helper()
		f := dbtest.SetupConversations(t)
		var members []string
		for _, who := range []string{"ana", "bo"} {
			email := who + "@" + f.Tenant.Slug + ".test"
			if _, err := f.Store.Pool().Exec(ctx, `WITH u AS (INSERT INTO users (email, password_hash) VALUES ($1, 'x') RETURNING id)
				INSERT INTO tenant_members (tenant_id, user_id) SELECT $2, id FROM u`, email, f.Tenant.ID); err != nil {
				t.Fatal(err)
			}
			members = append(members, email)
		}
		return bundle{f: f, c: f.Start(t, parley.ConversationStart{SessionID: "waiting", Channel: parley.ChannelWeb}), members: members}
	}
	// work runs one job of args through its worker (River's own test
	// runner: the job row is real, in a transaction rolled back after).
	work := func(t *testing.T, store *db.DB, w river.Worker[db.TakeoverWaitArgs], args db.TakeoverWaitArgs) *rivertest.WorkResult {
		t.Helper()
		tw := rivertest.NewWorker(t, riverpgxv5.New(store.Pool()), &river.Config{}, w)
		tx, err := store.Pool().Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		res, err := tw.Work(ctx, t, tx, args, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	workIdle := func(t *testing.T, store *db.DB, now time.Time, args db.TakeoverIdleArgs) *rivertest.WorkResult {
		t.Helper()
		tw := rivertest.NewWorker(t, riverpgxv5.New(store.Pool()), &river.Config{},
			&TakeoverIdleWorker{DB: store, Now: func() time.Time { return now }})
		tx, err := store.Pool().Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		res, err := tw.Work(ctx, t, tx, args, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	waitWorker := func(store *db.DB, now time.Time) *TakeoverWaitWorker {
		return &TakeoverWaitWorker{DB: store, Mail: Mail{Sender: sender, BaseURL: "https://parley.example", Now: func() time.Time { return now }}}
	}
	conv := func(t *testing.T, b bundle) parley.Conversation {
		t.Helper()
		c, err := b.f.Store.Conversation(ctx, b.f.Tenant.ID, b.c.ID)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	lastMessage := func(t *testing.T, b bundle) (role, content string) {
		t.Helper()
		if err := b.f.Store.Pool().QueryRow(ctx, `SELECT role, content FROM messages WHERE conversation_id = $1
			ORDER BY created_at DESC, id DESC LIMIT 1`, b.c.ID).Scan(&role, &content); err != nil {
			t.Fatal(err)
		}
		return role, content
	}
	// scheduled is the job of kind scheduled for the conversation, and when.
	scheduled := func(t *testing.T, b bundle, kind string) (at time.Time, n int) {
		t.Helper()
		if err := b.f.Store.Pool().QueryRow(ctx, `SELECT coalesce(max(scheduled_at), 'epoch'), count(*) FROM river_job
			WHERE kind = $1 AND args->>'conversationId' = $2`, kind, b.c.ID).Scan(&at, &n); err != nil {
			t.Fatal(err)
		}
		return at, n
	}
	escalate := func(t *testing.T, b bundle) db.TakeoverWaitArgs {
		t.Helper()
		mv, err := b.f.Store.MoveConversation(ctx, b.f.Tenant.ID, b.c.ID, parley.StatusEscalated, parley.Holder{})
		if err != nil {
			t.Fatal(err)
		}
		return db.TakeoverWaitArgs{TenantID: b.f.Tenant.ID, ConversationID: b.c.ID, EscalatedAt: *mv.Conversation.EscalatedAt}
	}

	t.Run("NobodyCameWithinTheWait", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		if _, err := b.f.Store.Pool().Exec(ctx, `INSERT INTO tools (tenant_id, name, description, type, config)
			VALUES ($1, 'Contact', 'Leave your details', 'SUBMIT_FORM',
			'{"fields":[{"name":"name","label":"Name","type":"text"},{"name":"email","label":"Email","type":"email","required":true}]}')`,
			b.f.Tenant.ID); err != nil {
			t.Fatal(err)
		}
		args := escalate(t, b)
		// Scheduled for the end of the tenant's wait (180 s by default), once
		// however often it is asked for.
		for range 2 {
			if err := b.f.Store.ScheduleTakeoverJob(ctx, b.f.Tenant.ID, b.c.ID); err != nil {
				t.Fatal(err)
			}
		}
		if at, n := scheduled(t, b, "takeover_wait"); n != 1 || !at.Equal(args.EscalatedAt.Add(180*time.Second)) {
			t.Fatalf("%d jobs, scheduled at %v, want one at %v", n, at, args.EscalatedAt.Add(180*time.Second))
		}
		// A second early (the clock set): the job waits for the deadline.
		res := work(t, b.f.Store, waitWorker(b.f.Store, args.EscalatedAt.Add(179*time.Second)), args)
		if res.EventKind != river.EventKindJobSnoozed || conv(t, b).Status != parley.StatusEscalated {
			t.Fatalf("early: %s, status %s", res.EventKind, conv(t, b).Status)
		}
		res = work(t, b.f.Store, waitWorker(b.f.Store, args.EscalatedAt.Add(180*time.Second)), args)
		if res.EventKind != river.EventKindJobCompleted {
			t.Fatalf("at the deadline: %s", res.EventKind)
		}
		if c := conv(t, b); c.Status != parley.StatusBot || c.Assignee != nil || c.MessageCount != 2 {
			t.Fatalf("conversation %s, assignee %v, %d messages", c.Status, c.Assignee, c.MessageCount)
		}
		role, content := lastMessage(t, b)
		if role != "assistant" || !strings.Contains(content, "nobody from the team could join") ||
			!strings.Contains(content, "(Name, Email) and someone will write back to you by email") {
			t.Fatalf("the visitor was told %s: %q", role, content)
		}
		// Again (River's retry of a run that failed after committing): nothing more.
		res = work(t, b.f.Store, waitWorker(b.f.Store, args.EscalatedAt.Add(time.Hour)), args)
		if res.EventKind != river.EventKindJobCompleted || conv(t, b).MessageCount != 2 {
			t.Fatalf("again: %s, %d messages", res.EventKind, conv(t, b).MessageCount)
		}
		// The members' email, enqueued with the move, says so with a link.
		if _, n := scheduled(t, b, "takeover_nobody_came_email"); n != 1 {
			t.Fatalf("%d emails enqueued", n)
		}
		mw := rivertest.NewWorker(t, riverpgxv5.New(b.f.Store.Pool()), &river.Config{},
			&NobodyCameMailWorker{DB: b.f.Store, Mail: Mail{Sender: sender, BaseURL: "https://parley.example"}})
		tx, err := b.f.Store.Pool().Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		if res, err := mw.Work(ctx, t, tx, db.NobodyCameMailArgs{TenantID: b.f.Tenant.ID, ConversationID: b.c.ID}, nil); err != nil ||
			res.EventKind != river.EventKindJobCompleted {
			t.Fatalf("%v %+v", err, res)
		}
		for _, to := range b.members {
			msg, err := netmail.ReadMessage(bytes.NewReader(srv.Wait(t, to, 1, 5*time.Second).Data))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(quotedprintable.NewReader(msg.Body))
			if !strings.Contains(msg.Header.Get("Subject"), "nobody came") ||
				!strings.Contains(string(body), "https://parley.example/admin/conversations/"+b.c.ID+"\r\n") ||
				!strings.Contains(string(body), "hello") {
				t.Errorf("mail to %s: %q\n%s", to, msg.Header.Get("Subject"), body)
			}
		}
	})

	t.Run("WithoutALeadFormAskForAnEmail", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		args := escalate(t, b)
		// Without SMTP nobody is mailed: no email job.
		w := waitWorker(b.f.Store, args.EscalatedAt.Add(time.Hour))
		w.Mail.Sender = nil
		if res := work(t, b.f.Store, w, args); res.EventKind != river.EventKindJobCompleted {
			t.Fatal(res.EventKind)
		}
		if _, content := lastMessage(t, b); !strings.Contains(content, "Tell me your email address and someone will reply to you by email") {
			t.Fatalf("told %q", content)
		}
		if _, n := scheduled(t, b, "takeover_nobody_came_email"); n != 0 {
			t.Fatalf("%d emails enqueued", n)
		}
	})

	t.Run("APersonTookItFirst", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		args := escalate(t, b)
		if _, err := b.f.Store.MoveConversation(ctx, b.f.Tenant.ID, b.c.ID, parley.StatusHuman, parley.Holder{Name: "Ana"}); err != nil {
			t.Fatal(err)
		}
		res := work(t, b.f.Store, waitWorker(b.f.Store, args.EscalatedAt.Add(time.Hour)), args)
		if c := conv(t, b); res.EventKind != river.EventKindJobCompleted || c.Status != parley.StatusHuman || c.MessageCount != 1 {
			t.Fatalf("%s: conversation %s with %d messages", res.EventKind, c.Status, c.MessageCount)
		}
		// Handed back and escalated again: the old escalation's job does
		// nothing either (the new one has a job of its own).
		if _, err := b.f.Store.MoveConversation(ctx, b.f.Tenant.ID, b.c.ID, parley.StatusBot, parley.Holder{}); err != nil {
			t.Fatal(err)
		}
		escalate(t, b)
		work(t, b.f.Store, waitWorker(b.f.Store, args.EscalatedAt.Add(time.Hour)), args)
		if c := conv(t, b); c.Status != parley.StatusEscalated || c.MessageCount != 1 {
			t.Fatalf("conversation %s with %d messages", c.Status, c.MessageCount)
		}
		if _, n := scheduled(t, b, "takeover_nobody_came_email"); n != 0 {
			t.Fatalf("%d emails enqueued", n)
		}
	})

	t.Run("ThePersonStoppedAnswering", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		if _, err := b.f.Store.UpdateTenant(ctx, b.f.Tenant.ID, db.TenantPatch{HumanIdleSeconds: parley.Some(300)}); err != nil {
			t.Fatal(err)
		}
		mv, err := b.f.Store.MoveConversation(ctx, b.f.Tenant.ID, b.c.ID, parley.StatusHuman, parley.Holder{Name: "Ana"})
		if err != nil {
			t.Fatal(err)
		}
		takenAt := *mv.Conversation.TakenAt
		if err := b.f.Store.ScheduleTakeoverJob(ctx, b.f.Tenant.ID, b.c.ID); err != nil {
			t.Fatal(err)
		}
		if at, n := scheduled(t, b, "takeover_idle"); n != 1 || !at.Equal(takenAt.Add(300*time.Second)) {
			t.Fatalf("%d jobs at %v, want one at %v", n, at, takenAt.Add(300*time.Second))
		}
		m, _, err := b.f.Store.AddHumanMessage(ctx, b.f.Tenant.ID, b.c.ID, parley.Holder{Name: "Ana"}, "Let me check")
		if err != nil {
			t.Fatal(err)
		}
		args := db.TakeoverIdleArgs{TenantID: b.f.Tenant.ID, ConversationID: b.c.ID, TakenAt: takenAt}
		// The reply moved the deadline: at the take's, the job waits on.
		if res := workIdle(t, b.f.Store, takenAt.Add(300*time.Second), args); res.EventKind != river.EventKindJobSnoozed ||
			conv(t, b).Status != parley.StatusHuman {
			t.Fatalf("%s, status %s", res.EventKind, conv(t, b).Status)
		}
		if res := workIdle(t, b.f.Store, m.CreatedAt.Add(300*time.Second), args); res.EventKind != river.EventKindJobCompleted {
			t.Fatal(res.EventKind)
		}
		c := conv(t, b)
		if c.Status != parley.StatusBot || c.Assignee != nil || c.TakenAt != nil {
			t.Fatalf("conversation %s held by %v since %v", c.Status, c.Assignee, c.TakenAt)
		}
		if role, content := lastMessage(t, b); role != "assistant" || !strings.HasPrefix(content, "Ana had to step away, so I'm back") {
			t.Fatalf("told %s %q", role, content)
		}
	})

	t.Run("HandedBackByThePerson", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		mv, err := b.f.Store.MoveConversation(ctx, b.f.Tenant.ID, b.c.ID, parley.StatusHuman, parley.Holder{Name: "Ana"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.f.Store.MoveConversation(ctx, b.f.Tenant.ID, b.c.ID, parley.StatusClosed, parley.Holder{}); err != nil {
			t.Fatal(err)
		}
		args := db.TakeoverIdleArgs{TenantID: b.f.Tenant.ID, ConversationID: b.c.ID, TakenAt: *mv.Conversation.TakenAt}
		if res := workIdle(t, b.f.Store, mv.Conversation.TakenAt.Add(time.Hour), args); res.EventKind != river.EventKindJobCompleted {
			t.Fatal(res.EventKind)
		}
		if c := conv(t, b); c.Status != parley.StatusClosed || c.MessageCount != 1 {
			t.Fatalf("conversation %s with %d messages", c.Status, c.MessageCount)
		}
	})
}
