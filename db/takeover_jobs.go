package db

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// Nobody there (issue 36): a conversation waiting for a person goes back to
// the assistant when nobody takes it within the tenant's wait, and one a
// person took when they stop answering for the tenant's idle time. Each is
// a River job scheduled for the deadline known when the conversation was
// escalated or taken (ScheduleTakeoverJob), which checks the conversation
// again under its row lock when it runs: a person who took it, replied or
// moved it first wins, and the job does nothing (or, for a reply that moved
// the deadline, waits until the new one). The jobs are this package's
// types so that the store can insert them; package jobs works them.

// TakeoverWaitArgs is the end of an escalated conversation's wait for a
// person: the conversation as it was escalated at EscalatedAt.
type TakeoverWaitArgs struct {
	TenantID       string    `json:"tenantId"`
	ConversationID string    `json:"conversationId"`
	EscalatedAt    time.Time `json:"escalatedAt"`
}

// Kind names the job.
func (TakeoverWaitArgs) Kind() string { return "takeover_wait" }

// TakeoverIdleArgs is the check of a taken conversation's person's
// silence: the conversation as it was taken at TakenAt.
type TakeoverIdleArgs struct {
	TenantID       string    `json:"tenantId"`
	ConversationID string    `json:"conversationId"`
	TakenAt        time.Time `json:"takenAt"`
}

// Kind names the job.
func (TakeoverIdleArgs) Kind() string { return "takeover_idle" }

// NobodyCameMailArgs asks for the tenant's members to be emailed that the
// visitor of one of its conversations waited for a person and nobody came.
type NobodyCameMailArgs struct {
	TenantID       string `json:"tenantId"`
	ConversationID string `json:"conversationId"`
}

// Kind names the job.
func (NobodyCameMailArgs) Kind() string { return "takeover_nobody_came_email" }

// InsertOpts puts the mail on the mail queue (jobs.MailQueue) and gives up
// after five attempts, as the other mail.
func (NobodyCameMailArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: "mail", MaxAttempts: 5}
}

// ScheduleTakeoverJob schedules the check that goes with the conversation's
// state, when it has one: ESCALATED, the end of the wait (escalated_at plus
// the tenant's humanWaitSeconds); HUMAN, the person's silence (their last
// reply, or the take, plus humanIdleSeconds). It is called after the
// escalation, the take or the reply is stored; the same escalation or take
// is scheduled once, however often it is called.
func (d *DB) ScheduleTakeoverJob(ctx context.Context, tenantID, conversationID string) error {
	if !pgbase.LooksLikeUUID(conversationID) {
		return parley.Errorf(parley.KindNotFound, "Conversation not found")
	}
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		var (
			status             string
			escalatedAt        *time.Time
			takenAt, lastReply *time.Time
			wait, idle         int
		)
		err := tx.QueryRow(ctx, `SELECT c.status, c.escalated_at, c.taken_at, t.human_wait_seconds, t.human_idle_seconds,
				`+lastReplySQL+`
			FROM conversations c JOIN tenants t ON t.id = c.tenant_id
			WHERE c.tenant_id = $1 AND c.id = $2`, tenantID, conversationID).
			Scan(&status, &escalatedAt, &takenAt, &wait, &idle, &lastReply)
		if errors.Is(err, pgx.ErrNoRows) {
			return parley.Errorf(parley.KindNotFound, "Conversation not found")
		}
		if err != nil {
			return fmt.Errorf("reading a conversation's state: %w", err)
		}
		var (
			args river.JobArgs
			at   time.Time
		)
		switch {
		case status == parley.StatusEscalated && escalatedAt != nil:
			args, at = TakeoverWaitArgs{TenantID: tenantID, ConversationID: conversationID, EscalatedAt: *escalatedAt},
				escalatedAt.Add(time.Duration(wait)*time.Second)
		case status == parley.StatusHuman && takenAt != nil:
			args, at = TakeoverIdleArgs{TenantID: tenantID, ConversationID: conversationID, TakenAt: *takenAt},
				lastActive(*takenAt, lastReply).Add(time.Duration(idle)*time.Second)
		default:
			return nil
		}
		_, err = d.jobs.InsertTx(ctx, tx, args, &river.InsertOpts{ScheduledAt: at, UniqueOpts: river.UniqueOpts{ByArgs: true}})
		if err != nil {
			return fmt.Errorf("scheduling a conversation's check: %w", err)
		}
		return nil
	})
}

// lastReplySQL is the latest message of the person holding the conversation
// c since they took it (NULL for none).
const lastReplySQL = `(SELECT max(m.created_at) FROM messages m
	WHERE m.tenant_id = c.tenant_id AND m.conversation_id = c.id AND m.role = 'human' AND m.created_at >= c.taken_at)`

// lastActive is when the person holding a conversation last showed up:
// their last reply since the take, else the take.
func lastActive(takenAt time.Time, lastReply *time.Time) time.Time {
	if lastReply != nil && lastReply.After(takenAt) {
		return *lastReply
	}
	return takenAt
}

// TakeoverCheck is what a check of a conversation's wait or a person's
// silence did: Returned, the conversation went back to the assistant with
// Message told to the visitor; else Due, when not zero, is the deadline
// still ahead (the escalation or take is current, the tenant's setting or a
// reply moved it); else the conversation moved on and nothing is left to do.
type TakeoverCheck struct {
	Returned bool
	Message  parley.Message
	Due      time.Time
}

// ReturnUnansweredEscalation gives the conversation of a back to the
// assistant when, at now, it is still the same escalation (ESCALATED since
// a.EscalatedAt) and its wait is over: the visitor is told say, the change
// announced, and, when mailMembers, the tenant's members' email
// (NobodyCameMailArgs) enqueued, all in one transaction under the conversation's row lock, so that a
// person taking it at the same moment either comes first (nothing happens)
// or takes it from the assistant.
func (d *DB) ReturnUnansweredEscalation(ctx context.Context, a TakeoverWaitArgs, now time.Time, say string, mailMembers bool) (TakeoverCheck, error) {
	var out TakeoverCheck
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		var (
			status      string
			escalatedAt *time.Time
			wait        int
		)
		found, err := scanLocked(ctx, tx, a.TenantID, a.ConversationID, `c.status, c.escalated_at, t.human_wait_seconds`,
			&status, &escalatedAt, &wait)
		if err != nil || !found || status != parley.StatusEscalated || escalatedAt == nil || !escalatedAt.Equal(a.EscalatedAt) {
			return err
		}
		if due := escalatedAt.Add(time.Duration(wait) * time.Second); now.Before(due) {
			out.Due = due
			return nil
		}
		if out.Message, err = returnToAssistant(ctx, tx, a.TenantID, a.ConversationID, say); err != nil {
			return err
		}
		out.Returned = true
		if !mailMembers {
			return nil
		}
		if _, err := d.jobs.InsertTx(ctx, tx, NobodyCameMailArgs{TenantID: a.TenantID, ConversationID: a.ConversationID}, nil); err != nil {
			return fmt.Errorf("enqueuing the nobody-came email: %w", err)
		}
		return nil
	})
	return out, err
}

// ReturnIdleConversation gives the conversation of a back to the assistant
// when, at now, the same person still holds it (HUMAN since a.TakenAt) and
// has not replied for the tenant's idle time: the visitor is told say and
// the change announced, in one transaction under the row lock.
func (d *DB) ReturnIdleConversation(ctx context.Context, a TakeoverIdleArgs, now time.Time, say string) (TakeoverCheck, error) {
	var out TakeoverCheck
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		var (
			status             string
			takenAt, lastReply *time.Time
			idle               int
		)
		found, err := scanLocked(ctx, tx, a.TenantID, a.ConversationID, `c.status, c.taken_at, t.human_idle_seconds, `+lastReplySQL,
			&status, &takenAt, &idle, &lastReply)
		if err != nil || !found || status != parley.StatusHuman || takenAt == nil || !takenAt.Equal(a.TakenAt) {
			return err
		}
		if due := lastActive(*takenAt, lastReply).Add(time.Duration(idle) * time.Second); now.Before(due) {
			out.Due = due
			return nil
		}
		if out.Message, err = returnToAssistant(ctx, tx, a.TenantID, a.ConversationID, say); err != nil {
			return err
		}
		out.Returned = true
		return nil
	})
	return out, err
}

// scanLocked locks one of the tenant's conversations (c, with its tenant t)
// and scans cols into dest; found is false when there is none.
func scanLocked(ctx context.Context, tx pgx.Tx, tenantID, id, cols string, dest ...any) (found bool, err error) {
	if !pgbase.LooksLikeUUID(id) {
		return false, nil
	}
	err = tx.QueryRow(ctx, `SELECT `+cols+` FROM conversations c JOIN tenants t ON t.id = c.tenant_id
		WHERE c.tenant_id = $1 AND c.id = $2 FOR UPDATE OF c`, tenantID, id).Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("locking a conversation: %w", err)
	}
	return true, nil
}

// returnToAssistant moves the locked conversation back to the assistant
// (BOT, held by nobody), stores say as the assistant's message, and
// announces both.
func returnToAssistant(ctx context.Context, tx pgx.Tx, tenantID, id, say string) (parley.Message, error) {
	if _, err := tx.Exec(ctx, `UPDATE conversations SET status = 'BOT', assigned_user_id = NULL, assignee = NULL,
			taken_at = NULL, updated_at = now()
		WHERE tenant_id = $1 AND id = $2`, tenantID, id); err != nil {
		return parley.Message{}, fmt.Errorf("returning a conversation to the assistant: %w", err)
	}
	m, err := appendMessage(ctx, tx, tenantID, id, "assistant", say, nil, 0, "")
	if err != nil {
		return parley.Message{}, err
	}
	return m, notifyConversation(ctx, tx, tenantID, id)
}

// LeadForm returns the fields of the lead form a visitor of the tenant's
// segment (nil: no segment) is offered in the conversation: its first
// active SUBMIT_FORM tool, the segment's own before those of every
// segment; none when it has no such tool.
func (d *DB) LeadForm(ctx context.Context, tenantID string, segmentID *string) ([]parley.FormField, error) {
	var cfg parley.SubmitFormConfig
	err := d.pool.QueryRow(ctx, `SELECT config FROM tools
		WHERE tenant_id = $1 AND type = 'SUBMIT_FORM' AND is_active AND (segment_id IS NULL OR segment_id = $2)
		ORDER BY segment_id IS NULL, position, created_at, id LIMIT 1`, tenantID, segmentID).Scan(&cfg)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the lead form: %w", err)
	}
	return cfg.Fields, nil
}

// NobodyCame is what the email to a tenant's members about a visitor who
// waited for nobody says: the tenant, the conversation, the visitor's
// first message, and the members' addresses.
type NobodyCame struct {
	TenantName       string
	Timezone         string
	ConversationID   string
	FirstUserMessage *string
	EscalatedAt      *time.Time
	Emails           []string
}

// NobodyCameMail reads what the nobody-came email of the conversation says;
// a conversation gone (deleted) is NotFound.
func (d *DB) NobodyCameMail(ctx context.Context, tenantID, conversationID string) (NobodyCame, error) {
	n := NobodyCame{ConversationID: conversationID}
	if !pgbase.LooksLikeUUID(conversationID) {
		return n, parley.Errorf(parley.KindNotFound, "Conversation not found")
	}
	err := d.pool.QueryRow(ctx, `SELECT t.name, t.timezone, c.first_user_message, c.escalated_at,
			ARRAY(SELECT u.email FROM tenant_members tm JOIN users u ON u.id = tm.user_id
				WHERE tm.tenant_id = t.id ORDER BY tm.created_at, u.email)
		FROM conversations c JOIN tenants t ON t.id = c.tenant_id
		WHERE c.tenant_id = $1 AND c.id = $2`, tenantID, conversationID).
		Scan(&n.TenantName, &n.Timezone, &n.FirstUserMessage, &n.EscalatedAt, &n.Emails)
	if err != nil {
		return n, pgbase.NotFound(err, "Conversation")
	}
	return n, nil
}
