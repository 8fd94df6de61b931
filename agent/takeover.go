package agent

import (
	"context"
	"strings"
	"time"

	"github.com/parley/parley"
)

// DefaultPersonWait is how long an escalated conversation waits for a
// person to take it before the assistant answers the visitor again, for a
// tenant without a wait of its own (humanWaitSeconds, whose default is the
// same).
const DefaultPersonWait = 3 * time.Minute

// TakeoverJobs schedules the check that goes with a conversation's state
// (db.ScheduleTakeoverJob): the end of an escalation's wait, the person's
// silence in a taken conversation. *db.DB satisfies it.
type TakeoverJobs interface {
	ScheduleTakeoverJob(ctx context.Context, tenantID, conversationID string) error
}

// personWait is how long the tenant's escalated conversations wait for a
// person: its humanWaitSeconds (a column whose default is
// DefaultPersonWait), or DefaultPersonWait for a tenant made without it.
func (e *Engine) personWait(t parley.Tenant) time.Duration {
	if t.HumanWaitSeconds > 0 {
		return time.Duration(t.HumanWaitSeconds) * time.Second
	}
	return DefaultPersonWait
}

// stepAside decides whether the assistant answers the turn, after its
// message is stored. While a person holds the conversation (HUMAN), or it
// waits for one (ESCALATED, for the tenant's wait since it was escalated),
// the model is not called: the message is announced to the inbox and to the
// webhooks (message.created), and the turn ends without an answer. A
// closed conversation, or an escalated one that waited too long (the
// wait's job had not run yet), goes back to the assistant, which answers.
// Voice calls are the assistant's throughout: a person cannot answer a
// call in text.
func (e *Engine) stepAside(ctx context.Context, t *turn) (*TurnOutput, error) {
	if t.in.Channel == parley.ChannelVoice {
		return nil, nil
	}
	c := t.conv
	switch c.Status {
	case parley.StatusHuman:
	case parley.StatusEscalated:
		if c.EscalatedAt == nil || e.now().Sub(*c.EscalatedAt) >= e.personWait(t.in.Tenant) {
			return nil, e.resume(ctx, t)
		}
	case parley.StatusClosed:
		return nil, e.resume(ctx, t)
	default:
		return nil, nil
	}
	if err := e.Store.AnnounceVisitorMessage(ctx, t.in.Tenant.ID, c.ID, t.userMessage.ID); err != nil {
		return nil, err
	}
	return &TurnOutput{ConversationID: c.ID, MessageCount: c.MessageCount, Status: c.Status, Assignee: c.Assignee}, nil
}

// resume gives the turn's conversation back to the assistant.
func (e *Engine) resume(ctx context.Context, t *turn) error {
	mv, err := e.Store.MoveConversation(ctx, t.in.Tenant.ID, t.conv.ID, parley.StatusBot, parley.Holder{})
	if err != nil {
		return err
	}
	t.conv.Status, t.conv.Assignee, t.conv.AssignedUserID = mv.Conversation.Status, nil, nil
	return nil
}

// scheduleWait schedules the end of the wait of the conversation the turn
// escalated (Engine.Takeover). A failure is logged: the escalation is
// stored, and the visitor's next message past the wait still brings the
// assistant back (stepAside).
func (e *Engine) scheduleWait(ctx context.Context, t *turn) {
	if e.Takeover == nil || t.in.Channel == parley.ChannelVoice {
		return
	}
	if err := e.Takeover.ScheduleTakeoverJob(ctx, t.in.Tenant.ID, t.conv.ID); err != nil {
		t.in.logger(e).Error("scheduling the end of an escalation's wait", "conversation", t.conv.ID, "err", err)
	}
}

// teamAway says whether nobody of the tenant's team can answer now: outside
// its hours for a person (humanHours), in its time zone. Hours in the
// calendar's office hours read the calendar connector (the turn's, else
// the store's); without one, as with mode always, a person may answer at
// any hour. Voice calls are never turned away here.
func (e *Engine) teamAway(ctx context.Context, t *turn) bool {
	tenant := t.in.Tenant
	var hours parley.OfficeHours
	switch tenant.HumanHours.Mode {
	case parley.HoursWeekly:
		hours = tenant.HumanHours.Days
	case parley.HoursCalendar:
		c := t.reads.calendar
		if c == nil && e.Calendar != nil {
			var err error
			if c, err = e.Calendar.CalendarConnector(ctx, tenant.ID); err != nil {
				t.in.logger(e).Error("reading the calendar's office hours", "err", err)
			}
		}
		if c == nil {
			return false
		}
		hours = c.OfficeHours
	default:
		return false
	}
	loc, err := time.LoadLocation(tenant.Timezone)
	if err != nil || tenant.Timezone == "" {
		loc = time.UTC
	}
	return !openAt(hours, e.now().In(loc))
}

// openAt says whether hours are open at now (in their time zone).
func openAt(hours parley.OfficeHours, now time.Time) bool {
	day, ok := hours[strings.ToLower(now.Weekday().String())]
	if !ok {
		return false
	}
	start, end, err := day.Minutes()
	m := now.Hour()*60 + now.Minute()
	return err == nil && m >= start && m < end
}
