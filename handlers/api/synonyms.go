package api

import (
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/jsonbody"
	"github.com/parley/parley/handlers/resource"
)

// decodeSynonymTerms reads the body of a synonym create or replace,
// {"terms": [...]}; other members are ignored, so a client may send back
// what it read. The terms themselves are checked by manage.
func decodeSynonymTerms(c echo.Context) ([]string, error) {
	raw, err := jsonbody.DecodeObject(c, jsonbody.MaxJSONBody)
	if err != nil {
		return nil, err
	}
	msg, ok := raw["terms"]
	if !ok {
		return nil, resource.FieldError("terms", "is required")
	}
	if jsonbody.HasNUL(msg) {
		return nil, resource.FieldError("terms", "must not contain NUL characters")
	}
	var terms []string
	// null decodes to nil: an array is required all the same.
	if err := json.Unmarshal(msg, &terms); err != nil || terms == nil {
		return nil, resource.FieldError("terms", "must be an array of strings")
	}
	return terms, nil
}

// ListSynonyms answers GET /tenants/{slug}/synonyms: a bare array of the
// tenant's synonym groups, oldest first (at most parley.MaxSynonymGroups).
func (h *Knowledge) ListSynonyms(c echo.Context) error {
	groups, err := h.Manage.ListSynonyms(c.Request().Context(), handlers.TenantFrom(c).ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, groups)
}

// ShowSynonyms answers GET /tenants/{slug}/synonyms/{id}.
func (h *Knowledge) ShowSynonyms(c echo.Context) error {
	g, err := h.Manage.Synonyms(c.Request().Context(), handlers.TenantFrom(c).ID, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, g)
}

// CreateSynonyms answers POST /tenants/{slug}/synonyms: 201 with the group,
// 429 LIMIT_REACHED past parley.MaxSynonymGroups.
func (h *Knowledge) CreateSynonyms(c echo.Context) error {
	terms, err := decodeSynonymTerms(c)
	if err != nil {
		return err
	}
	g, err := h.Manage.CreateSynonyms(c.Request().Context(), handlers.TenantFrom(c).ID, terms)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, g)
}

// UpdateSynonyms answers PUT and PATCH /tenants/{slug}/synonyms/{id}: the
// group's terms are replaced by those of the body.
func (h *Knowledge) UpdateSynonyms(c echo.Context) error {
	terms, err := decodeSynonymTerms(c)
	if err != nil {
		return err
	}
	g, err := h.Manage.UpdateSynonyms(c.Request().Context(), handlers.TenantFrom(c).ID, c.Param("id"), terms)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, g)
}

// DeleteSynonyms answers DELETE /tenants/{slug}/synonyms/{id}: {deleted: true, id}.
func (h *Knowledge) DeleteSynonyms(c echo.Context) error {
	return handlers.DeleteOne(c, "id", h.Manage.DeleteSynonyms)
}
