package handlers

// The embedding endpoint's state as the REST API and the dashboard show it.

import (
	"context"
	"time"
)

// EmbeddingsJSON is the tenant's embedding endpoint and how far its
// knowledge base is embedded: by its own endpoint ("tenant"), the
// operator's ("operator"), or not at all ("none").
type EmbeddingsJSON struct {
	URL            *string    `json:"embeddingsUrl"`
	Model          *string    `json:"embeddingsModel"`
	Dimensions     *int       `json:"embeddingsDimensions"`
	HasAPIKey      bool       `json:"hasApiKey"`
	Source         string     `json:"source"`
	VectorModel    *string    `json:"vectorModel"`
	Entries        int        `json:"entries"`
	Embedded       int        `json:"embeddedEntries"`
	LastError      *string    `json:"lastError"`
	LastErrorAt    *time.Time `json:"lastErrorAt"`
	LastEmbeddedAt *time.Time `json:"lastEmbeddedAt"`
	// ETag is the settings' entity tag (the REST API's ETag header).
	ETag string `json:"-"`
}

// EmbeddingsState reads the tenant's settings and status as embeddingsJSON.
func (h *Base) EmbeddingsState(ctx context.Context, tenantID string) (EmbeddingsJSON, error) {
	operator := ""
	if h.Engine != nil && h.Engine.Embeddings != nil {
		operator = h.Engine.Embeddings.Model()
	}
	st, err := h.Manage.EmbeddingState(ctx, tenantID, operator)
	if err != nil {
		return EmbeddingsJSON{}, err
	}
	s := st.Settings
	out := EmbeddingsJSON{URL: s.URL, Model: s.Model, Dimensions: s.Dimensions, HasAPIKey: s.SealedAPIKey != nil, Source: st.Source,
		Entries: st.Status.Entries, Embedded: st.Status.Embedded, LastError: st.Status.LastError,
		LastErrorAt: st.Status.FailedAt, LastEmbeddedAt: st.Status.EmbeddedAt, ETag: s.ETag()}
	if st.Model != "" {
		out.VectorModel = &st.Model
	}
	return out, nil
}
