package parley

import (
	"encoding/json"
	"time"
)

// Tool is an action the agent can take in a conversation.
type Tool struct {
	ID            string          `db:"id"`
	TenantID      string          `db:"tenant_id"`
	SegmentID     *string         `db:"segment_id"`
	SegmentSlug   *string         `db:"segment_slug"`
	Name          string          `db:"name"`
	Description   string          `db:"description"`
	Type          string          `db:"type"`
	Config        json.RawMessage `db:"config"`
	IsActive      bool            `db:"is_active"`
	Position      float64         `db:"position"`
	WebhookURL    *string         `db:"webhook_url"`
	WebhookSecret []byte          `db:"webhook_secret"`
	CreatedAt     time.Time       `db:"created_at"`
	UpdatedAt     time.Time       `db:"updated_at"`
}
