package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// Event types recorded in the events table. EventWebhookTest is sent to one
// endpoint on demand ("Send test event"); no endpoint subscribes to it.
//
// A conversation's events follow its status, one per change: escalated (it
// waits for a person), taken (a person holds it), handed back (the
// assistant answers it again) and closed; EventMessageCreated is a
// person's message, or a visitor's that the assistant leaves to a person.
const (
	EventSubmissionCreated = "submission.created"
	EventSubmissionUpdated = "submission.updated"
	EventWebhookTest       = "webhook.test"

	EventConversationEscalated  = "conversation.escalated"
	EventConversationTaken      = "conversation.taken"
	EventConversationHandedBack = "conversation.handed_back"
	EventConversationClosed     = "conversation.closed"
	EventMessageCreated         = "message.created"
)

// Event is a recorded webhook event; Payload is the frozen webhook body. It
// names the submission or the conversation it is about.
type Event struct {
	ID             string          `db:"id"`
	TenantID       string          `db:"tenant_id"`
	Type           string          `db:"type"`
	SubmissionID   *string         `db:"submission_id"`
	ConversationID *string         `db:"conversation_id"`
	Payload        json.RawMessage `db:"payload"`
	CreatedAt      time.Time       `db:"created_at"`
}

// NewEvent is an event to record: Data is the payload's data, which
// RecordEvent wraps in the spec's envelope (Payload).
type NewEvent struct {
	TenantID       string
	Type           string
	SubmissionID   *string
	ConversationID *string
	At             time.Time
	Data           any
}

// Payload is the spec's webhook body, {event, createdAt, data}, of an
// event whose data is D.
type Payload[D any] struct {
	Event     string    `json:"event"`
	CreatedAt time.Time `json:"createdAt"`
	Data      D         `json:"data"`
}

// RecordEvent inserts, in tx, the event with its frozen payload and its
// deliveries (EnqueueDeliveries, their jobs inserted with client).
func RecordEvent(ctx context.Context, tx pgx.Tx, client *river.Client[pgx.Tx], e NewEvent) (Event, error) {
	payload, err := json.Marshal(Payload[any]{Event: e.Type, CreatedAt: e.At.UTC(), Data: e.Data})
	if err != nil {
		return Event{}, fmt.Errorf("encoding %s payload: %w", e.Type, err)
	}
	rows, _ := tx.Query(ctx, `INSERT INTO events (tenant_id, type, submission_id, conversation_id, payload, created_at)
		VALUES ($1, $2, $3, $4, $5, $6) RETURNING `+eventColumns,
		e.TenantID, e.Type, e.SubmissionID, e.ConversationID, payload, e.At)
	ev, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Event])
	if err != nil {
		return Event{}, fmt.Errorf("recording %s event: %w", e.Type, err)
	}
	if err := EnqueueDeliveries(ctx, tx, client, ev); err != nil {
		return Event{}, err
	}
	return ev, nil
}

// Subscribed reports, in tx, whether an enabled endpoint of the tenant
// subscribes to the event typ: an event none receives need not be recorded.
func Subscribed(ctx context.Context, tx pgx.Tx, tenantID, typ string) (bool, error) {
	var ok bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM webhook_endpoints
		WHERE tenant_id = $1 AND enabled AND $2 = ANY(events))`, tenantID, typ).Scan(&ok); err != nil {
		return false, fmt.Errorf("looking for endpoints of %s: %w", typ, err)
	}
	return ok, nil
}

// eventColumns are the columns of an Event.
const eventColumns = `id, tenant_id, type, submission_id, conversation_id, payload, created_at`
