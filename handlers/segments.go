package handlers

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
)

// Segment limits; those the spec does not give are chosen here and documented in the OpenAPI document.
const (
	maxSegmentSlug      = 100
	maxSegmentName      = 255
	maxSystemPrompt     = 20000
	maxWelcomeMessage   = 1000
	maxStarters         = 4
	maxStarterText      = 50
	maxStarterEmoji     = 16
	maxFormIntent       = 100
	maxFormConfirmation = 500
)

var (
	segmentSlugPattern = regexp.MustCompile(`^[a-z0-9-]{1,100}$`)
)

// segmentSummaryJSON is a list item: no systemPrompt, with counts.
type segmentSummaryJSON struct {
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

// validateSegmentWrite checks a create (creating true) or partial update.
func validateSegmentWrite(w *db.SegmentWrite, creating bool) parley.FieldErrors {
	errs := parley.FieldErrors{}
	parley.NullIfEmpty(&w.WelcomeMessage)
	if creating && !w.Name.Set {
		errs.Add("name", "is required")
	}
	if parley.NotNull(errs, "name", w.Name) {
		w.Name.Value = strings.TrimSpace(w.Name.Value)
		if w.Name.Value == "" {
			errs.Add("name", "must not be empty")
		}
		parley.CheckLen(errs, "name", w.Name, maxSegmentName)
	}
	if creating && !w.SystemPrompt.Set {
		errs.Add("systemPrompt", "is required")
	}
	if parley.NotNull(errs, "systemPrompt", w.SystemPrompt) {
		if strings.TrimSpace(w.SystemPrompt.Value) == "" {
			errs.Add("systemPrompt", "must not be empty")
		}
		parley.CheckLen(errs, "systemPrompt", w.SystemPrompt, maxSystemPrompt)
	}
	if w.Slug.Set && !w.Slug.Null && !(creating && w.Slug.Value == "") {
		if !segmentSlugPattern.MatchString(w.Slug.Value) {
			errs.Add("slug", "must be 1 to 100 lowercase letters, digits or hyphens")
		}
	} else if w.Slug.Set && w.Slug.Null && !creating {
		errs.Add("slug", "must not be null")
	}
	parley.CheckLen(errs, "welcomeMessage", w.WelcomeMessage, maxWelcomeMessage)
	if w.ConversationStarters.Set && !w.ConversationStarters.Null {
		st := w.ConversationStarters.Value
		if len(st) > maxStarters {
			errs.Add("conversationStarters", fmt.Sprintf("at most %d starters", maxStarters))
		}
		for i := range st {
			st[i].Text = strings.TrimSpace(st[i].Text)
			switch {
			case st[i].Text == "":
				errs.Add("conversationStarters", fmt.Sprintf("starter %d: text is required", i+1))
			case utf8.RuneCountInString(st[i].Text) > maxStarterText:
				errs.Add("conversationStarters", fmt.Sprintf("starter %d: text %s", i+1, parley.TooLong(maxStarterText)))
			case utf8.RuneCountInString(st[i].Emoji) > maxStarterEmoji:
				errs.Add("conversationStarters", fmt.Sprintf("starter %d: emoji %s", i+1, parley.TooLong(maxStarterEmoji)))
			}
		}
	}
	if w.FormConfig.Set && w.FormConfig.Value != nil {
		fc := w.FormConfig.Value
		if utf8.RuneCountInString(fc.Intent) > maxFormIntent {
			errs.Add("formConfig", "intent "+parley.TooLong(maxFormIntent))
		}
		if utf8.RuneCountInString(fc.ConfirmationMessage) > maxFormConfirmation {
			errs.Add("formConfig", "confirmationMessage "+parley.TooLong(maxFormConfirmation))
		}
		if fc.Enabled && len(fc.Fields) == 0 {
			errs.Add("formConfig", "an enabled form needs at least one field")
		}
		if fc.Fields == nil {
			fc.Fields = []parley.FormField{}
		}
		parley.ValidateFormFields(errs, "formConfig", fc.Fields)
	}
	parley.NotNull(errs, "isDefault", w.IsDefault)
	parley.NotNull(errs, "isActive", w.IsActive)
	return errs
}

func (h *Handler) decodeSegmentWrite(c echo.Context, creating bool) (db.SegmentWrite, error) {
	raw, err := decodeObject(c, maxJSONBody)
	if err != nil {
		return db.SegmentWrite{}, err
	}
	return segmentWriteOf(raw, creating)
}

// ListSegments answers GET /tenants/{slug}/segments: a bare array without system prompts.
func (h *Handler) ListSegments(c echo.Context) error {
	out, err := h.segmentSummaries(c.Request().Context(), tenantFrom(c).ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

// ShowSegment answers GET /tenants/{slug}/segments/{id} (id or slug).
func (h *Handler) ShowSegment(c echo.Context) error {
	s, err := h.DB.Segment(c.Request().Context(), tenantFrom(c).ID, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, s)
}

// CreateSegment answers POST /tenants/{slug}/segments.
func (h *Handler) CreateSegment(c echo.Context) error {
	w, err := h.decodeSegmentWrite(c, true)
	if err != nil {
		return err
	}
	t := tenantFrom(c)
	s, err := h.DB.CreateSegment(c.Request().Context(), t.ID, t.PlanInfo().SegmentsLimit, w)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, s)
}

// UpdateSegment answers PUT (and PATCH) /tenants/{slug}/segments/{id}: only sent fields change.
func (h *Handler) UpdateSegment(c echo.Context) error {
	w, err := h.decodeSegmentWrite(c, false)
	if err != nil {
		return err
	}
	s, err := h.DB.UpdateSegment(c.Request().Context(), tenantFrom(c).ID, c.Param("id"), w)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, s)
}

// DeleteSegment answers DELETE /tenants/{slug}/segments/{id}[?cascade=true].
func (h *Handler) DeleteSegment(c echo.Context) error {
	cascade := false
	if v := c.QueryParam("cascade"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return invalid("cascade must be true or false")
		}
		cascade = b
	}
	del, err := h.DB.DeleteSegment(c.Request().Context(), tenantFrom(c).ID, c.Param("id"), cascade)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"deleted": true, "id": del.ID, "corpusEntriesDeleted": del.CorpusEntriesDeleted, "toolsDeleted": del.ToolsDeleted})
}
