package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/jsonbody"
)

// A tenant's own embedding endpoint (issue 34): GET, PUT and DELETE
// /tenants/{slug}/embeddings, and the dashboard's page (admin_embeddings.go)
// with the same rules.

// embeddingsBody is the JSON of an embedding endpoint save.
type embeddingsBody struct {
	URL        parley.Opt[string] `json:"embeddingsUrl"`
	APIKey     parley.Opt[string] `json:"embeddingsApiKey"`
	Model      parley.Opt[string] `json:"embeddingsModel"`
	Dimensions parley.Opt[int]    `json:"embeddingsDimensions"`
}

// input is the management operations' input of b; problems are what
// decoding found.
func (b embeddingsBody) input(problems parley.FieldErrors) parley.EmbeddingsInput {
	return parley.EmbeddingsInput{URL: b.URL, APIKey: b.APIKey, Model: b.Model, Dimensions: b.Dimensions, Problems: problems}
}

// ShowEmbeddings answers GET /tenants/{slug}/embeddings. The ETag is of
// the settings; the progress beside them moves without a write (no 304).
func (h *Knowledge) ShowEmbeddings(c echo.Context) error {
	out, err := h.EmbeddingsState(c.Request().Context(), handlers.TenantFrom(c).ID)
	if err != nil {
		return err
	}
	return handlers.JSONWithETag(c, http.StatusOK, out.ETag, out)
}

// UpdateEmbeddings answers PUT /tenants/{slug}/embeddings: the tenant's
// knowledge base is embedded at its endpoint from now on (the job is
// enqueued with the save). An absent embeddingsApiKey keeps the stored
// key; null or "" removes it. Under an If-Match, only on the settings as
// the client read them.
func (h *Knowledge) UpdateEmbeddings(c echo.Context) error {
	ctx := handlers.Conditional(c)
	t := handlers.TenantFrom(c)
	raw, err := jsonbody.DecodeObject(c, jsonbody.MaxJSONBody)
	if err != nil {
		return err
	}
	var b embeddingsBody
	problems := jsonbody.DecodeFields(raw, &b)
	if _, err := h.Manage.SaveEmbeddingSettings(ctx, t.ID, b.input(problems)); err != nil {
		return err
	}
	return h.ShowEmbeddings(c)
}

// DeleteEmbeddings answers DELETE /tenants/{slug}/embeddings: the tenant's
// knowledge base goes back to the operator's endpoint, if any.
func (h *Knowledge) DeleteEmbeddings(c echo.Context) error {
	ctx := c.Request().Context()
	t := handlers.TenantFrom(c)
	if err := h.Manage.ClearEmbeddingSettings(ctx, t.ID); err != nil {
		return err
	}
	out, err := h.EmbeddingsState(ctx, t.ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, embeddingsDeletionJSON{true, out})
}

// embeddingsDeletionJSON is the answer of DELETE /tenants/{slug}/embeddings:
// deleted, and the state the knowledge base is left in.
type embeddingsDeletionJSON struct {
	Deleted bool `json:"deleted"`
	handlers.EmbeddingsJSON
}
