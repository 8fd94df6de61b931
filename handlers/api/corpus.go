package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/jsonbody"
	"github.com/parley/parley/handlers/resource"
	"github.com/parley/parley/manage"
)

// The corpus's REST limits beyond the entry's own (parley.MaxCorpus*):
// a bulk request's entries.
const maxBulkEntries = 50

// ListCorpus answers GET /tenants/{slug}/corpus: the query's page, limit,
// search and segmentSlug (or segment).
func (h *Knowledge) ListCorpus(c echo.Context) error {
	l := manage.NewCorpusListing()
	handlers.QueryInt(c, "page", &l.Page)
	handlers.QueryInt(c, "limit", &l.Limit)
	l.Search, l.Segment = c.QueryParam("search"), handlers.NonBlankOr(c.QueryParam("segmentSlug"), c.QueryParam("segment"))
	res, err := h.Manage.ListCorpus(c.Request().Context(), handlers.TenantFrom(c).ID, l)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, resource.NewCorpusListJSON(l, res))
}

// decodeCorpus reads a corpus write's body.
func decodeCorpus(c echo.Context) (parley.CorpusInput, error) {
	raw, err := jsonbody.DecodeObject(c, jsonbody.MaxJSONBody)
	if err != nil {
		return parley.CorpusInput{}, err
	}
	return resource.CorpusInputOf(raw), nil
}

// CreateCorpus answers POST /tenants/{slug}/corpus: with externalId an
// idempotent upsert (200 created:false when an entry was updated).
func (h *Knowledge) CreateCorpus(c echo.Context) error {
	in, err := decodeCorpus(c)
	if err != nil {
		return err
	}
	e, created, err := h.Manage.CreateCorpus(c.Request().Context(), handlers.TenantFrom(c), in)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return c.JSON(status, resource.CorpusUpsertJSON{Corpus: resource.NewCorpusJSON(e), Created: created})
}

// ShowCorpus answers GET /tenants/{slug}/corpus/{id}.
func (h *Knowledge) ShowCorpus(c echo.Context) error {
	e, err := h.Manage.CorpusEntry(c.Request().Context(), handlers.TenantFrom(c).ID, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, resource.CorpusEnvelopeJSON{Corpus: resource.NewCorpusJSON(e)})
}

// UpdateCorpus answers PUT and PATCH /tenants/{slug}/corpus/{id}: both partial.
func (h *Knowledge) UpdateCorpus(c echo.Context) error {
	in, err := decodeCorpus(c)
	if err != nil {
		return err
	}
	e, err := h.Manage.UpdateCorpus(c.Request().Context(), handlers.TenantFrom(c).ID, c.Param("id"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, resource.CorpusEnvelopeJSON{Corpus: resource.NewCorpusJSON(e)})
}

// DeleteCorpus answers DELETE /tenants/{slug}/corpus/{id}.
func (h *Knowledge) DeleteCorpus(c echo.Context) error {
	return handlers.DeleteOne(c, "id", h.Manage.DeleteCorpus)
}
