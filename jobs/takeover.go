package jobs

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/mail"
)

// Nobody there (issue 36): the end of an escalated conversation's wait for
// a person, and a person's silence in a conversation they took. Both jobs
// are scheduled for their deadline (db.ScheduleTakeoverJob) and check the
// conversation again under its row lock (db.ReturnUnansweredEscalation,
// db.ReturnIdleConversation): a person who took, replied or moved it first
// wins, and the job does nothing; a deadline moved later (a reply, a longer
// setting) snoozes the job until then.

// TakeoverWaitWorker gives an escalated conversation that nobody took
// within the tenant's wait back to the assistant, tells the visitor and
// offers the lead form, and has the tenant's members emailed.
type TakeoverWaitWorker struct {
	river.WorkerDefaults[db.TakeoverWaitArgs]
	DB *db.DB
	// Mail says whether members can be emailed (Mail.Sender set: their
	// email is enqueued with the move), and its Now is the clock the wait
	// is measured by (the server's, which tests set).
	Mail Mail
}

// Work returns the conversation when its wait is over, snoozes until it is.
func (w *TakeoverWaitWorker) Work(ctx context.Context, job *river.Job[db.TakeoverWaitArgs]) error {
	a := job.Args
	c, err := w.DB.Conversation(ctx, a.TenantID, a.ConversationID)
	if parley.ErrorKind(err) == parley.KindNotFound || (err == nil && c.Status != parley.StatusEscalated) {
		return nil
	}
	if err != nil {
		return err
	}
	fields, err := w.DB.LeadForm(ctx, a.TenantID, c.SegmentID)
	if err != nil {
		return err
	}
	now := w.Mail.now()
	chk, err := w.DB.ReturnUnansweredEscalation(ctx, a, now, NobodyCameMessage(fields), w.Mail.Sender != nil)
	if err != nil {
		return err
	}
	return snoozeUntil(chk, now)
}

// TakeoverIdleWorker gives a conversation whose person has not replied for
// the tenant's idle time back to the assistant, telling the visitor.
type TakeoverIdleWorker struct {
	river.WorkerDefaults[db.TakeoverIdleArgs]
	DB *db.DB
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Work returns the conversation when its person has been silent too long,
// snoozes until they will have been.
func (w *TakeoverIdleWorker) Work(ctx context.Context, job *river.Job[db.TakeoverIdleArgs]) error {
	a := job.Args
	c, err := w.DB.Conversation(ctx, a.TenantID, a.ConversationID)
	if parley.ErrorKind(err) == parley.KindNotFound || (err == nil && c.Status != parley.StatusHuman) {
		return nil
	}
	if err != nil {
		return err
	}
	now := time.Now()
	if w.Now != nil {
		now = w.Now()
	}
	chk, err := w.DB.ReturnIdleConversation(ctx, a, now, AssistantBackMessage(c.Assignee))
	if err != nil {
		return err
	}
	return snoozeUntil(chk, now)
}

// snoozeUntil is the end of a check: done, or snoozed until the deadline
// still ahead.
func snoozeUntil(chk db.TakeoverCheck, now time.Time) error {
	if chk.Returned || chk.Due.IsZero() {
		return nil
	}
	return river.JobSnooze(max(chk.Due.Sub(now), time.Second))
}

// NobodyCameMessage is what the visitor is told when nobody took the
// conversation within the wait: plainly that nobody could join, and how a
// person will get back to them: the lead form's fields asked here (the
// assistant takes them with the SUBMIT_FORM tool), else their email
// address.
func NobodyCameMessage(fields []parley.FormField) string {
	return "Sorry, nobody from the team could join the conversation right now. " + parley.LeadOffer(fields) +
		" Meanwhile, I'm here if I can help."
}

// AssistantBackMessage is what the visitor is told when the person who
// took the conversation (assignee, nil when unknown) stopped answering.
func AssistantBackMessage(assignee *string) string {
	who := "The team member"
	if assignee != nil && *assignee != "" {
		who = *assignee
	}
	return who + " had to step away, so I'm back to help you: ask me anything, or ask for a person again if you need one."
}

// NobodyCameMailWorker emails the tenant's members that a visitor waited
// for a person and nobody came, with a link to the conversation in the
// dashboard.
type NobodyCameMailWorker struct {
	river.WorkerDefaults[db.NobodyCameMailArgs]
	DB   *db.DB
	Mail Mail
}

// Work mails every member; a conversation deleted meanwhile mails nobody.
func (w *NobodyCameMailWorker) Work(ctx context.Context, job *river.Job[db.NobodyCameMailArgs]) error {
	if err := w.Mail.ready(); err != nil {
		return err
	}
	n, err := w.DB.NobodyCameMail(ctx, job.Args.TenantID, job.Args.ConversationID)
	if parley.ErrorKind(err) == parley.KindNotFound {
		return nil
	}
	if err != nil {
		return err
	}
	link := w.Mail.BaseURL + "/admin/conversations/" + n.ConversationID
	for _, to := range n.Emails {
		m := mail.Message{To: to, Subject: "A visitor of " + n.TenantName + " waited for a person, and nobody came",
			Body: nobodyCameBody(n, link)}
		if err := w.Mail.Sender.Send(ctx, m); err != nil {
			return fmt.Errorf("mailing %s: %w", to, err)
		}
	}
	return nil
}

func nobodyCameBody(n db.NobodyCame, link string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Hello,\n\nA visitor of %s asked to talk to a person", n.TenantName)
	if n.EscalatedAt != nil {
		loc, err := time.LoadLocation(n.Timezone)
		if err != nil {
			loc = time.UTC
		}
		fmt.Fprintf(&b, " on %s", n.EscalatedAt.In(loc).Format("Monday 2 January at 15:04 (MST)"))
	}
	b.WriteString(", and nobody from the team took the conversation in time.\n" +
		"The assistant told them that nobody could join and offered to take their details,\n" +
		"so that someone gets back to them.\n")
	if n.FirstUserMessage != nil && *n.FirstUserMessage != "" {
		first := []rune(strings.TrimSpace(*n.FirstUserMessage))
		if len(first) > 300 {
			first = append(first[:300], '…')
		}
		fmt.Fprintf(&b, "\nTheir first message:\n\n  %s\n", strings.ReplaceAll(string(first), "\n", "\n  "))
	}
	fmt.Fprintf(&b, "\nRead the conversation and answer them:\n\n%s\n\n"+
		"You get this email as a member of %s on Parley. How long visitors wait for\n"+
		"a person, and when a person can answer, are in the dashboard's settings\n"+
		"(Live chat with your team).\n", link, n.TenantName)
	return b.String()
}

// now is the mail's clock (the server's).
func (m Mail) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}
