package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
)

// Visitor limits, chosen here and documented in the OpenAPI document.
const (
	maxVisitorEmail       = 254
	maxVisitorName        = 255
	maxVisitorPhone       = 32
	maxVisitorProvider    = 50
	maxVisitorExternalID  = 255
	maxVisitorMetadata    = 16 << 10
	maxMemoryValue        = 2000
	defaultVisitorsLimit  = 50
	maxVisitorsLimit      = 200
	maxVisitorSearchChars = 200
)

var (
	emailPattern     = regexp.MustCompile(`^[^\s@]+@[^\s@]+\.[^\s@]+$`)
	phonePattern     = regexp.MustCompile(`^\+?[0-9 ().-]{3,31}$`)
	memoryKeyPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)
)

type visitorBody struct {
	Email        parley.Opt[string]          `json:"email"`
	DisplayName  parley.Opt[string]          `json:"displayName"`
	Phone        parley.Opt[string]          `json:"phone"`
	AuthProvider parley.Opt[string]          `json:"authProvider"`
	ExternalID   parley.Opt[string]          `json:"externalId"`
	Metadata     parley.Opt[json.RawMessage] `json:"metadata"`
}

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

func (h *Handler) decodeVisitor(c echo.Context, creating bool) (db.VisitorWrite, error) {
	raw, err := decodeObject(c, maxJSONBody)
	if err != nil {
		return db.VisitorWrite{}, err
	}
	var b visitorBody
	errs := decodeFields(raw, &b)
	w := validateVisitor(b, errs, creating)
	return w, errs.Err()
}

// validateVisitor normalises a decoded visitor body and adds its problems to
// errs; the API and the dashboard both save visitors through it.
func validateVisitor(b visitorBody, errs parley.FieldErrors, creating bool) db.VisitorWrite {
	for _, o := range []*parley.Opt[string]{&b.Email, &b.DisplayName, &b.Phone, &b.AuthProvider, &b.ExternalID} {
		if o.Set && !o.Null {
			o.Value = strings.TrimSpace(o.Value)
		}
		parley.NullIfEmpty(o)
	}
	if creating && b.Email.Value == "" && b.ExternalID.Value == "" && errs["email"] == "" && errs["externalId"] == "" {
		errs.Add("email", "email or externalId is required")
	}
	if b.Email.Set && !b.Email.Null {
		b.Email.Value = strings.ToLower(b.Email.Value)
		if utf8.RuneCountInString(b.Email.Value) > maxVisitorEmail || !emailPattern.MatchString(b.Email.Value) {
			errs.Add("email", "must be an email address of at most 254 characters")
		}
	}
	parley.CheckLen(errs, "displayName", b.DisplayName, maxVisitorName)
	if b.Phone.Set && !b.Phone.Null && (utf8.RuneCountInString(b.Phone.Value) > maxVisitorPhone || !phonePattern.MatchString(b.Phone.Value)) {
		errs.Add("phone", "must be a phone number such as +33 1 23 45 67 89, at most 32 characters")
	}
	parley.CheckLen(errs, "authProvider", b.AuthProvider, maxVisitorProvider)
	parley.CheckLen(errs, "externalId", b.ExternalID, maxVisitorExternalID)
	if b.Metadata.Set && !b.Metadata.Null {
		m := bytes.TrimSpace(b.Metadata.Value)
		switch {
		case len(m) == 0 || m[0] != '{':
			errs.Add("metadata", "must be a JSON object")
		case len(m) > maxVisitorMetadata:
			errs.Add("metadata", "must be at most 16 KiB of JSON")
		}
	}
	return db.VisitorWrite{Email: b.Email, DisplayName: b.DisplayName, Phone: b.Phone, AuthProvider: b.AuthProvider,
		ExternalID: b.ExternalID, Metadata: b.Metadata}
}

// ListVisitors answers GET /tenants/{slug}/visitors: {visitors, total, limit, offset}.
func (h *Handler) ListVisitors(c echo.Context) error {
	out, err := h.listVisitors(c.Request().Context(), tenantFrom(c).ID, c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

// listVisitors reads the query of a visitors listing (limit, offset, search)
// and answers {visitors, total, limit, offset}.
func (h *Handler) listVisitors(ctx context.Context, tenantID string, params query) (map[string]any, error) {
	limit, err := intParam(params, "limit", defaultVisitorsLimit, 1, maxVisitorsLimit)
	if err != nil {
		return nil, err
	}
	offset, err := intParam(params, "offset", 0, 0, int(^uint(0)>>1))
	if err != nil {
		return nil, err
	}
	search := strings.TrimSpace(params.QueryParam("search"))
	if utf8.RuneCountInString(search) > maxVisitorSearchChars {
		return nil, invalid("search must be at most 200 characters")
	}
	vs, total, err := h.DB.ListVisitors(ctx, tenantID, search, limit, offset)
	if err != nil {
		return nil, err
	}
	out := make([]visitorJSON, len(vs))
	for i, v := range vs {
		out[i] = newVisitorJSON(v)
	}
	return map[string]any{"visitors": out, "total": total, "limit": limit, "offset": offset}, nil
}

// CreateVisitor answers POST /tenants/{slug}/visitors.
func (h *Handler) CreateVisitor(c echo.Context) error {
	w, err := h.decodeVisitor(c, true)
	if err != nil {
		return err
	}
	v, err := h.DB.CreateVisitor(c.Request().Context(), tenantFrom(c).ID, w)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, newVisitorDetailJSON(v))
}

// ShowVisitor answers GET /tenants/{slug}/visitors/{visitorId}.
func (h *Handler) ShowVisitor(c echo.Context) error {
	v, err := h.DB.VisitorDetail(c.Request().Context(), tenantFrom(c).ID, c.Param("visitorId"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newVisitorDetailJSON(v))
}

// UpdateVisitor answers PATCH /tenants/{slug}/visitors/{visitorId}: only sent fields change.
func (h *Handler) UpdateVisitor(c echo.Context) error {
	w, err := h.decodeVisitor(c, false)
	if err != nil {
		return err
	}
	v, err := h.DB.UpdateVisitor(c.Request().Context(), tenantFrom(c).ID, c.Param("visitorId"), w)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newVisitorDetailJSON(v))
}

// DeleteVisitor answers DELETE /tenants/{slug}/visitors/{visitorId}: permanent, with its memory.
func (h *Handler) DeleteVisitor(c echo.Context) error {
	return deleteOne(c, "visitorId", h.DB.DeleteVisitor)
}

// ListMemory answers GET /tenants/{slug}/visitors/{visitorId}/memory: a bare array.
func (h *Handler) ListMemory(c echo.Context) error {
	facts, err := h.DB.ListMemory(c.Request().Context(), tenantFrom(c).ID, c.Param("visitorId"))
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
	f, err := h.DB.Memory(c.Request().Context(), tenantFrom(c).ID, c.Param("visitorId"), c.Param("key"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, memoryJSON(f))
}

// SaveMemory answers POST /tenants/{slug}/visitors/{visitorId}/memory: upsert by key.
// The value is stored as a string; numbers and booleans are accepted and stored in their JSON form.
func (h *Handler) SaveMemory(c echo.Context) error {
	raw, err := decodeObject(c, maxJSONBody)
	if err != nil {
		return err
	}
	errs := parley.FieldErrors{}
	var key string
	if err := json.Unmarshal(raw["key"], &key); err != nil || raw["key"] == nil {
		errs.Add("key", "is required, a string")
	} else {
		checkMemoryKey(errs, key)
	}
	value := ""
	v := bytes.TrimSpace(raw["value"])
	switch {
	case hasNUL(v):
		errs.Add("value", "must not contain NUL characters")
	case len(v) == 0 || string(v) == "null":
		errs.Add("value", "is required")
	case v[0] == '"':
		_ = json.Unmarshal(v, &value)
	case v[0] == '{' || v[0] == '[':
		errs.Add("value", "must be a string, number or boolean")
	default:
		value = string(v)
	}
	checkMemoryValue(errs, value)
	if err := errs.Err(); err != nil {
		return err
	}
	f, err := h.DB.UpsertMemory(c.Request().Context(), tenantFrom(c).ID, c.Param("visitorId"), key, value)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, memoryJSON(f))
}

// DeleteMemory answers DELETE /tenants/{slug}/visitors/{visitorId}/memory/{key}.
func (h *Handler) DeleteMemory(c echo.Context) error {
	key := c.Param("key")
	if err := h.DB.DeleteMemory(c.Request().Context(), tenantFrom(c).ID, c.Param("visitorId"), key); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"deleted": true, "key": key})
}

// checkMemoryKey checks the key of a memory fact.
func checkMemoryKey(errs parley.FieldErrors, key string) {
	if !memoryKeyPattern.MatchString(key) {
		errs.Add("key", "must be 1 to 64 letters, digits, underscores, dots or hyphens (snake_case recommended)")
	}
}

// checkMemoryValue checks the text value of a memory fact.
func checkMemoryValue(errs parley.FieldErrors, value string) {
	if strings.ContainsRune(value, 0) {
		errs.Add("value", parley.NoNUL)
	}
	if strings.TrimSpace(value) == "" && errs["value"] == "" {
		errs.Add("value", "must not be empty")
	}
	if utf8.RuneCountInString(value) > maxMemoryValue {
		errs.Add("value", parley.TooLong(maxMemoryValue))
	}
}
