package resource

import (
	"encoding/json"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db/visitors"
)

type VisitorJSON struct {
	ID                string          `json:"id"`
	Email             *string         `json:"email"`
	DisplayName       *string         `json:"displayName"`
	Phone             *string         `json:"phone"`
	AuthProvider      *string         `json:"authProvider"`
	ExternalID        *string         `json:"externalId"`
	Metadata          json.RawMessage `json:"metadata"`
	CreatedAt         time.Time       `json:"createdAt"`
	UpdatedAt         time.Time       `json:"updatedAt"`
	ConversationCount *int            `json:"conversationCount,omitempty"`
	MemoryCount       *int            `json:"memoryCount,omitempty"`
}

func NewVisitorJSON(v parley.Visitor) VisitorJSON {
	return VisitorJSON{ID: v.ID, Email: v.Email, DisplayName: v.DisplayName, Phone: v.Phone, AuthProvider: v.AuthProvider,
		ExternalID: v.ExternalID, Metadata: v.Metadata, CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt}
}

func NewVisitorDetailJSON(v visitors.VisitorDetail) VisitorJSON {
	j := NewVisitorJSON(v.Visitor)
	j.ConversationCount, j.MemoryCount = &v.ConversationCount, &v.MemoryCount
	return j
}

type MemoryJSON struct {
	Key       string    `json:"key"`
	Value     string    `json:"value"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// VisitorListJSON is a page of visitors as the listings answer it:
// {visitors, total, limit, offset}.
type VisitorListJSON struct {
	Visitors []VisitorJSON `json:"visitors"`
	Total    int           `json:"total"`
	Limit    int           `json:"limit"`
	Offset   int           `json:"offset"`
}

// NewVisitorListJSON is the page vs of listing l, of total visitors.
func NewVisitorListJSON(l parley.VisitorListing, vs []parley.Visitor, total int) VisitorListJSON {
	out := make([]VisitorJSON, len(vs))
	for i, v := range vs {
		out[i] = NewVisitorJSON(v)
	}
	return VisitorListJSON{Visitors: out, Total: total, Limit: l.Limit, Offset: l.Offset}
}
