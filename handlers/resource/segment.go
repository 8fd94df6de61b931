package resource

import (
	"context"
	"encoding/json"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/handlers/jsonbody"
)

// SegmentSummaryJSON is a list item: no systemPrompt, with counts.
type SegmentSummaryJSON struct {
	ID                   string             `json:"id"`
	Slug                 string             `json:"slug"`
	Name                 string             `json:"name"`
	WelcomeMessage       *string            `json:"welcomeMessage"`
	ConversationStarters []parley.Starter   `json:"conversationStarters"`
	FormConfig           *parley.FormConfig `json:"formConfig"`
	IsDefault            bool               `json:"isDefault"`
	IsActive             bool               `json:"isActive"`
	CorpusCount          int                `json:"corpusCount"`
	ConversationsCount   int                `json:"conversationsCount"`
	CreatedAt            time.Time          `json:"createdAt"`
	UpdatedAt            time.Time          `json:"updatedAt"`
}

// SegmentInputOf decodes the fields of a segment write: the REST body or an
// MCP tool's arguments.
func SegmentInputOf(raw map[string]json.RawMessage) parley.SegmentInput {
	var in parley.SegmentInput
	in.Problems = jsonbody.DecodeFields(raw, &in)
	return in
}

// SegmentSummaries are the tenant's segments in store as GET
// /tenants/{slug}/segments and the MCP tool list_segments list them.
func SegmentSummaries(ctx context.Context, store *db.DB, tenantID string) ([]SegmentSummaryJSON, error) {
	segs, err := store.ListSegments(ctx, tenantID)
	if err != nil {
		return nil, err
	}
	out := make([]SegmentSummaryJSON, len(segs))
	for i, s := range segs {
		out[i] = SegmentSummaryJSON{
			ID: s.ID, Slug: s.Slug, Name: s.Name, WelcomeMessage: s.WelcomeMessage,
			ConversationStarters: s.ConversationStarters, FormConfig: s.FormConfig,
			IsDefault: s.IsDefault, IsActive: s.IsActive, CorpusCount: s.CorpusCount,
			ConversationsCount: s.ConversationsCount, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt,
		}
	}
	return out, nil
}
