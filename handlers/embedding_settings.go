package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
)

// A tenant's own embedding endpoint (issue 34): GET, PUT and DELETE
// /tenants/{slug}/embeddings, and the dashboard's page (admin_embeddings.go)
// with the same rules.

const (
	maxEmbeddingsModel  = 200
	maxEmbeddingsAPIKey = 500
	maxEmbeddingsDims   = 8192
)

// embeddingsBody is the JSON of an embedding endpoint save.
type embeddingsBody struct {
	URL        parley.Opt[string] `json:"embeddingsUrl"`
	APIKey     parley.Opt[string] `json:"embeddingsApiKey"`
	Model      parley.Opt[string] `json:"embeddingsModel"`
	Dimensions parley.Opt[int]    `json:"embeddingsDimensions"`
}

// validateEmbeddingSettings checks an embedding endpoint save against the
// stored settings cur, adding its problems to errs. It returns the
// dimensions (nil: the model's own) and the key change (unset keeps the
// stored key). A key is sent as a bearer token, so it goes over https only:
// an http URL is refused while a key is, or stays, set. The API and the
// dashboard share it.
func (h *Handler) validateEmbeddingSettings(ctx context.Context, b embeddingsBody, cur db.EmbeddingSettings, errs parley.FieldErrors) (*int, parley.Opt[[]byte]) {
	b.URL.Value, b.Model.Value = strings.TrimSpace(b.URL.Value), strings.TrimSpace(b.Model.Value)
	if !b.URL.Set || b.URL.Null || b.URL.Value == "" {
		errs.Add("embeddingsUrl", "is required (use DELETE to remove the endpoint)")
	} else {
		parley.CheckHTTPURL(errs, "embeddingsUrl", b.URL, false)
		h.checkOutboundURL(ctx, errs, "embeddingsUrl", b.URL.Value)
	}
	switch {
	case !b.Model.Set || b.Model.Null || b.Model.Value == "":
		errs.Add("embeddingsModel", "is required: the model's name at the endpoint, such as text-embedding-3-small")
	case utf8.RuneCountInString(b.Model.Value) > maxEmbeddingsModel:
		errs.Add("embeddingsModel", parley.TooLong(maxEmbeddingsModel))
	case strings.IndexFunc(b.Model.Value, unicode.IsControl) >= 0:
		errs.Add("embeddingsModel", "must not contain control characters")
	}
	var dims *int
	if b.Dimensions.Set && !b.Dimensions.Null {
		if n := b.Dimensions.Value; n < 1 || n > maxEmbeddingsDims {
			errs.Add("embeddingsDimensions", fmt.Sprintf("must be between 1 and %d, or null for the model's own", maxEmbeddingsDims))
		} else {
			dims = &n
		}
	}
	var key parley.Opt[[]byte]
	hasKey := cur.SealedAPIKey != nil
	if b.APIKey.Set {
		switch {
		case b.APIKey.Null || b.APIKey.Value == "":
			key, hasKey = parley.Opt[[]byte]{Set: true, Null: true}, false
		case utf8.RuneCountInString(b.APIKey.Value) > maxEmbeddingsAPIKey:
			errs.Add("embeddingsApiKey", parley.TooLong(maxEmbeddingsAPIKey))
		case strings.IndexFunc(b.APIKey.Value, unicode.IsControl) >= 0:
			errs.Add("embeddingsApiKey", "must not contain control characters")
		default:
			key, hasKey = parley.Some(h.Box.Seal([]byte(b.APIKey.Value))), true
		}
	}
	if _, bad := errs["embeddingsUrl"]; !bad && hasKey {
		if u, err := url.Parse(b.URL.Value); err == nil && u.Scheme != "https" {
			errs.Add("embeddingsUrl", "must use https while an API key is set: the key would travel in clear text")
		}
	}
	return dims, key
}

// embeddingsJSON is the tenant's embedding endpoint and how far its
// knowledge base is embedded: by its own endpoint ("tenant"), the
// operator's ("operator"), or not at all ("none").
type embeddingsJSON struct {
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
}

// embeddingsState reads the tenant's settings and status as embeddingsJSON.
func (h *Handler) embeddingsState(ctx context.Context, tenantID string) (embeddingsJSON, error) {
	s, err := h.DB.EmbeddingSettings(ctx, tenantID)
	if err != nil {
		return embeddingsJSON{}, err
	}
	out := embeddingsJSON{URL: s.URL, Model: s.Model, Dimensions: s.Dimensions, HasAPIKey: s.SealedAPIKey != nil, Source: "none"}
	model := s.ModelKey()
	switch {
	case model != "":
		out.Source = "tenant"
	case h.Engine != nil && h.Engine.Embeddings != nil:
		out.Source, model = "operator", h.Engine.Embeddings.Model()
	}
	if model == "" {
		return out, nil
	}
	out.VectorModel = &model
	st, err := h.DB.EmbeddingStatus(ctx, tenantID, model)
	if err != nil {
		return out, err
	}
	out.Entries, out.Embedded, out.LastError, out.LastErrorAt, out.LastEmbeddedAt = st.Entries, st.Embedded, st.LastError, st.FailedAt, st.EmbeddedAt
	return out, nil
}

// ShowEmbeddings answers GET /tenants/{slug}/embeddings.
func (h *Handler) ShowEmbeddings(c echo.Context) error {
	out, err := h.embeddingsState(c.Request().Context(), tenantFrom(c).ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

// UpdateEmbeddings answers PUT /tenants/{slug}/embeddings: the tenant's
// knowledge base is embedded at its endpoint from now on (the job is
// enqueued with the save). An absent embeddingsApiKey keeps the stored
// key; null or "" removes it.
func (h *Handler) UpdateEmbeddings(c echo.Context) error {
	ctx := c.Request().Context()
	t := tenantFrom(c)
	raw, err := decodeObject(c, maxJSONBody)
	if err != nil {
		return err
	}
	var b embeddingsBody
	errs := decodeFields(raw, &b)
	cur, err := h.DB.EmbeddingSettings(ctx, t.ID)
	if err != nil {
		return err
	}
	dims, key := h.validateEmbeddingSettings(ctx, b, cur, errs)
	if err := errs.Err(); err != nil {
		return err
	}
	if _, err := h.DB.SaveEmbeddingSettings(ctx, t.ID, strings.TrimSpace(b.URL.Value), strings.TrimSpace(b.Model.Value), dims, key); err != nil {
		return err
	}
	return h.ShowEmbeddings(c)
}

// DeleteEmbeddings answers DELETE /tenants/{slug}/embeddings: the tenant's
// knowledge base goes back to the operator's endpoint, if any.
func (h *Handler) DeleteEmbeddings(c echo.Context) error {
	ctx := c.Request().Context()
	t := tenantFrom(c)
	if err := h.DB.ClearEmbeddingSettings(ctx, t.ID); err != nil {
		return err
	}
	out, err := h.embeddingsState(ctx, t.ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, struct {
		Deleted bool `json:"deleted"`
		embeddingsJSON
	}{true, out})
}
