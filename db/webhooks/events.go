package webhooks

import (
	"encoding/json"
	"time"
)

// Event types recorded in the events table. EventWebhookTest is sent to one
// endpoint on demand ("Send test event"); no endpoint subscribes to it.
const (
	EventSubmissionCreated = "submission.created"
	EventSubmissionUpdated = "submission.updated"
	EventWebhookTest       = "webhook.test"
)

// Event is a recorded webhook event; Payload is the frozen webhook body.
type Event struct {
	ID           string          `db:"id"`
	TenantID     string          `db:"tenant_id"`
	Type         string          `db:"type"`
	SubmissionID *string         `db:"submission_id"`
	Payload      json.RawMessage `db:"payload"`
	CreatedAt    time.Time       `db:"created_at"`
}
