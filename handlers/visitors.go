package handlers

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
)

// The limits of a visitors listing, which the dashboard's list keeps to.
const (
	maxVisitorsLimit      = parley.MaxVisitorsPage
	maxVisitorSearchChars = parley.MaxVisitorSearch
)

type visitorJSON struct {
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

func newVisitorJSON(v parley.Visitor) visitorJSON {
	return visitorJSON{ID: v.ID, Email: v.Email, DisplayName: v.DisplayName, Phone: v.Phone, AuthProvider: v.AuthProvider,
		ExternalID: v.ExternalID, Metadata: v.Metadata, CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt}
}

func newVisitorDetailJSON(v db.VisitorDetail) visitorJSON {
	j := newVisitorJSON(v.Visitor)
	j.ConversationCount, j.MemoryCount = &v.ConversationCount, &v.MemoryCount
	return j
}

type memoryJSON struct {
	Key       string    `json:"key"`
	Value     string    `json:"value"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// decodeVisitor reads the body of a visitor write.
func decodeVisitor(c echo.Context) (parley.VisitorInput, error) {
	raw, err := DecodeObject(c, MaxJSONBody)
	if err != nil {
		return parley.VisitorInput{}, err
	}
	var in parley.VisitorInput
	in.Problems = DecodeFields(raw, &in)
	return in, nil
}

// ListVisitors answers GET /tenants/{slug}/visitors: the query's limit,
// offset and search.
func (h *Handler) ListVisitors(c echo.Context) error {
	l := parley.NewVisitorListing()
	queryInt(c, "limit", &l.Limit)
	queryInt(c, "offset", &l.Offset)
	l.Search = c.QueryParam("search")
	vs, total, err := h.Manage.ListVisitorPage(c.Request().Context(), tenantFrom(c).ID, l)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, visitorsJSON(l, vs, total))
}

// visitorsJSON is a page of visitors as the listings answer it: {visitors,
// total, limit, offset}.
func visitorsJSON(l parley.VisitorListing, vs []parley.Visitor, total int) map[string]any {
	out := make([]visitorJSON, len(vs))
	for i, v := range vs {
		out[i] = newVisitorJSON(v)
	}
	return map[string]any{"visitors": out, "total": total, "limit": l.Limit, "offset": l.Offset}
}

// CreateVisitor answers POST /tenants/{slug}/visitors.
func (h *Handler) CreateVisitor(c echo.Context) error {
	in, err := decodeVisitor(c)
	if err != nil {
		return err
	}
	v, err := h.Manage.CreateVisitor(c.Request().Context(), tenantFrom(c).ID, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, newVisitorDetailJSON(v))
}

// ShowVisitor answers GET /tenants/{slug}/visitors/{visitorId}.
func (h *Handler) ShowVisitor(c echo.Context) error {
	v, err := h.Manage.Visitor(c.Request().Context(), tenantFrom(c).ID, c.Param("visitorId"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newVisitorDetailJSON(v))
}

// UpdateVisitor answers PATCH /tenants/{slug}/visitors/{visitorId}: only sent fields change.
func (h *Handler) UpdateVisitor(c echo.Context) error {
	in, err := decodeVisitor(c)
	if err != nil {
		return err
	}
	v, err := h.Manage.UpdateVisitor(c.Request().Context(), tenantFrom(c).ID, c.Param("visitorId"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newVisitorDetailJSON(v))
}

// DeleteVisitor answers DELETE /tenants/{slug}/visitors/{visitorId}: permanent, with its memory.
func (h *Handler) DeleteVisitor(c echo.Context) error {
	return deleteOne(c, "visitorId", h.Manage.DeleteVisitor)
}

// ListMemory answers GET /tenants/{slug}/visitors/{visitorId}/memory: a bare array.
func (h *Handler) ListMemory(c echo.Context) error {
	facts, err := h.Manage.ListMemory(c.Request().Context(), tenantFrom(c).ID, c.Param("visitorId"))
	if err != nil {
		return err
	}
	out := make([]memoryJSON, len(facts))
	for i, f := range facts {
		out[i] = memoryJSON(f)
	}
	return c.JSON(http.StatusOK, out)
}

// ShowMemory answers GET /tenants/{slug}/visitors/{visitorId}/memory/{key}.
func (h *Handler) ShowMemory(c echo.Context) error {
	f, err := h.Manage.Memory(c.Request().Context(), tenantFrom(c).ID, c.Param("visitorId"), c.Param("key"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, memoryJSON(f))
}

// SaveMemory answers POST /tenants/{slug}/visitors/{visitorId}/memory: upsert by key.
// The value is stored as a string; numbers and booleans are accepted and stored in their JSON form.
func (h *Handler) SaveMemory(c echo.Context) error {
	raw, err := DecodeObject(c, MaxJSONBody)
	if err != nil {
		return err
	}
	in := parley.MemoryInput{Problems: parley.FieldErrors{}}
	if err := json.Unmarshal(raw["key"], &in.Key); err != nil || raw["key"] == nil {
		in.Problems.Add("key", "is required, a string")
	}
	v := bytes.TrimSpace(raw["value"])
	switch {
	case HasNUL(v):
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
	f, err := h.Manage.SaveMemory(c.Request().Context(), tenantFrom(c).ID, c.Param("visitorId"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, memoryJSON(f))
}

// DeleteMemory answers DELETE /tenants/{slug}/visitors/{visitorId}/memory/{key}.
func (h *Handler) DeleteMemory(c echo.Context) error {
	key := c.Param("key")
	if err := h.Manage.DeleteMemory(c.Request().Context(), tenantFrom(c).ID, c.Param("visitorId"), key); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"deleted": true, "key": key})
}
