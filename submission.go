package parley

import (
	"encoding/json"
	"time"
)

// Submission is what a lead tool captured (a form, a quote, a booking, ...).
// Its links become null when the tool, conversation or visitor is deleted.
type Submission struct {
	ID             string          `db:"id"`
	TenantID       string          `db:"tenant_id"`
	ToolID         *string         `db:"tool_id"`
	ToolType       string          `db:"tool_type"`
	ToolName       string          `db:"tool_name"`
	ConversationID *string         `db:"conversation_id"`
	VisitorID      *string         `db:"visitor_id"`
	Channel        string          `db:"channel"`
	Status         string          `db:"status"`
	Input          json.RawMessage `db:"input"`
	Result         json.RawMessage `db:"result"`
	PageURL        *string         `db:"page_url"`
	CreatedAt      time.Time       `db:"created_at"`
	UpdatedAt      time.Time       `db:"updated_at"`
}

// NewSubmission is a submission to create. Input is a JSON object under the
// tenant's own field names; Result a JSON object (nil for either is {}).
// Channel is web, voice, api or form.
type NewSubmission struct {
	TenantID       string
	ToolID         *string
	ToolType       string
	ToolName       string
	ConversationID *string
	VisitorID      *string
	Channel        string
	Input          json.RawMessage
	Result         json.RawMessage
	PageURL        *string
	// Contact, when set with a VisitorID, is what the visitor gave of
	// themselves in a lead form: the visitor takes it with the submission.
	Contact *FormContact
}

// FormContact is the name and email a visitor typed into a lead form
// (either may be empty).
type FormContact struct{ Name, Email string }

// Submission statuses.
const (
	SubmissionNew       = "NEW"
	SubmissionContacted = "CONTACTED"
	SubmissionResolved  = "RESOLVED"
)
