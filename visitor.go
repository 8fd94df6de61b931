package parley

import (
	"encoding/json"
	"time"
)

// Visitor is a person (or agent) who talked to a tenant's bot.
type Visitor struct {
	ID           string          `db:"id"`
	TenantID     string          `db:"tenant_id"`
	Email        *string         `db:"email"`
	DisplayName  *string         `db:"display_name"`
	Phone        *string         `db:"phone"`
	AuthProvider *string         `db:"auth_provider"`
	ExternalID   *string         `db:"external_id"`
	Metadata     json.RawMessage `db:"metadata"`
	CreatedAt    time.Time       `db:"created_at"`
	UpdatedAt    time.Time       `db:"updated_at"`
}

// MemoryFact is one remembered fact about a visitor.
type MemoryFact struct {
	Key       string    `db:"key"`
	Value     string    `db:"value"`
	UpdatedAt time.Time `db:"updated_at"`
}
