package api

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/jsonbody"
	"github.com/parley/parley/handlers/resource"
)

// decodeVisitor reads the body of a visitor write.
func decodeVisitor(c echo.Context) (parley.VisitorInput, error) {
	raw, err := jsonbody.DecodeObject(c, jsonbody.MaxJSONBody)
	if err != nil {
		return parley.VisitorInput{}, err
	}
	var in parley.VisitorInput
	in.Problems = jsonbody.DecodeFields(raw, &in)
	return in, nil
}

// ListVisitors answers GET /tenants/{slug}/visitors: the query's limit,
// offset and search.
func (h *Leads) ListVisitors(c echo.Context) error {
	l := parley.NewVisitorListing()
	handlers.QueryInt(c, "limit", &l.Limit)
	handlers.QueryInt(c, "offset", &l.Offset)
	l.Search = c.QueryParam("search")
	vs, total, err := h.Manage.ListVisitorPage(c.Request().Context(), handlers.TenantFrom(c).ID, l)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, resource.NewVisitorListJSON(l, vs, total))
}

// CreateVisitor answers POST /tenants/{slug}/visitors.
func (h *Leads) CreateVisitor(c echo.Context) error {
	in, err := decodeVisitor(c)
	if err != nil {
		return err
	}
	v, err := h.Manage.CreateVisitor(c.Request().Context(), handlers.TenantFrom(c).ID, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, resource.NewVisitorDetailJSON(v))
}

// ShowVisitor answers GET /tenants/{slug}/visitors/{visitorId}.
func (h *Leads) ShowVisitor(c echo.Context) error {
	v, err := h.Manage.Visitor(c.Request().Context(), handlers.TenantFrom(c).ID, c.Param("visitorId"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, resource.NewVisitorDetailJSON(v))
}

// UpdateVisitor answers PATCH /tenants/{slug}/visitors/{visitorId}: only sent fields change.
func (h *Leads) UpdateVisitor(c echo.Context) error {
	in, err := decodeVisitor(c)
	if err != nil {
		return err
	}
	v, err := h.Manage.UpdateVisitor(c.Request().Context(), handlers.TenantFrom(c).ID, c.Param("visitorId"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, resource.NewVisitorDetailJSON(v))
}

// DeleteVisitor answers DELETE /tenants/{slug}/visitors/{visitorId}: permanent, with its memory.
func (h *Leads) DeleteVisitor(c echo.Context) error {
	return handlers.DeleteOne(c, "visitorId", h.Manage.DeleteVisitor)
}

// ListMemory answers GET /tenants/{slug}/visitors/{visitorId}/memory: a bare array.
func (h *Leads) ListMemory(c echo.Context) error {
	facts, err := h.Manage.ListMemory(c.Request().Context(), handlers.TenantFrom(c).ID, c.Param("visitorId"))
	if err != nil {
		return err
	}
	out := make([]resource.MemoryJSON, len(facts))
	for i, f := range facts {
		out[i] = resource.MemoryJSON(f)
	}
	return c.JSON(http.StatusOK, out)
}

// ShowMemory answers GET /tenants/{slug}/visitors/{visitorId}/memory/{key}.
func (h *Leads) ShowMemory(c echo.Context) error {
	f, err := h.Manage.Memory(c.Request().Context(), handlers.TenantFrom(c).ID, c.Param("visitorId"), c.Param("key"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, resource.MemoryJSON(f))
}

// SaveMemory answers POST /tenants/{slug}/visitors/{visitorId}/memory: upsert by key.
// The value is stored as a string; numbers and booleans are accepted and stored in their JSON form.
func (h *Leads) SaveMemory(c echo.Context) error {
	raw, err := jsonbody.DecodeObject(c, jsonbody.MaxJSONBody)
	if err != nil {
		return err
	}
	in := parley.MemoryInput{Problems: parley.FieldErrors{}}
	if err := json.Unmarshal(raw["key"], &in.Key); err != nil || raw["key"] == nil {
		in.Problems.Add("key", "is required, a string")
	}
	v := bytes.TrimSpace(raw["value"])
	switch {
	case jsonbody.HasNUL(v):
		in.Problems.Add("value", "must not contain NUL characters")
	case len(v) == 0 || string(v) == "null":
		in.Problems.Add("value", "is required")
	case v[0] == '"':
		_ = json.Unmarshal(v, &in.Value)
	case v[0] == '{' || v[0] == '[':
		in.Problems.Add("value", "must be a string, number or boolean")
	default:
		in.Value = string(v)
	}
	f, err := h.Manage.SaveMemory(c.Request().Context(), handlers.TenantFrom(c).ID, c.Param("visitorId"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, resource.MemoryJSON(f))
}

// DeleteMemory answers DELETE /tenants/{slug}/visitors/{visitorId}/memory/{key}.
func (h *Leads) DeleteMemory(c echo.Context) error {
	key := c.Param("key")
	if err := h.Manage.DeleteMemory(c.Request().Context(), handlers.TenantFrom(c).ID, c.Param("visitorId"), key); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, memoryDeletionJSON{Deleted: true, Key: key})
}

// memoryDeletionJSON is what DELETE
// /tenants/{slug}/visitors/{visitorId}/memory/{key} answers.
type memoryDeletionJSON struct {
	Deleted bool   `json:"deleted"`
	Key     string `json:"key"`
}
