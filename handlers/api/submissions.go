package api

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db/listing"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/jsonbody"
)

type submissionToolJSON struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

type submissionJSON struct {
	ID             string             `json:"id"`
	CreatedAt      time.Time          `json:"createdAt"`
	UpdatedAt      time.Time          `json:"updatedAt"`
	Channel        string             `json:"channel"`
	Status         string             `json:"status"`
	Input          json.RawMessage    `json:"input"`
	Result         json.RawMessage    `json:"result"`
	ConversationID *string            `json:"conversationId"`
	VisitorUserID  *string            `json:"visitorUserId"`
	PageURL        *string            `json:"pageUrl"`
	ToolID         *string            `json:"toolId"`
	Tool           submissionToolJSON `json:"tool"`
}

func newSubmissionJSON(s parley.Submission) submissionJSON {
	return submissionJSON{ID: s.ID, CreatedAt: s.CreatedAt.UTC(), UpdatedAt: s.UpdatedAt.UTC(), Channel: s.Channel,
		Status: s.Status, Input: s.Input, Result: s.Result, ConversationID: s.ConversationID, VisitorUserID: s.VisitorID,
		PageURL: s.PageURL, ToolID: s.ToolID, Tool: submissionToolJSON{Name: s.ToolName, Type: s.ToolType}}
}

// submissionFilter reads and checks the query of GET /tenants/{slug}/submissions.
// The parameter `type` is ignored on purpose: the filter is `toolType`.
// A search parameter present is checked even when empty.
func submissionFilter(c echo.Context) (listing.SubmissionFilter, error) {
	_, searched := c.QueryParams()["search"]
	return handlers.CheckSubmissionFilter(c, searched)
}

// ListSubmissions answers GET /tenants/{slug}/submissions: {submissions,
// pagination, stats}, stats on page 1 only.
func (h *Leads) ListSubmissions(c echo.Context) error {
	f, err := submissionFilter(c)
	if err != nil {
		return err
	}
	page, err := h.Manage.Submissions(c.Request().Context(), handlers.TenantFrom(c).ID, f)
	if err != nil {
		return err
	}
	out := make([]submissionJSON, len(page.Submissions))
	for i, s := range page.Submissions {
		out[i] = newSubmissionJSON(s)
	}
	return c.JSON(http.StatusOK, submissionListJSON{Submissions: out, Pagination: newPaginationJSON(f.Page, f.Limit, page.Total),
		Stats: page.Stats})
}

// submissionListJSON is what GET /tenants/{slug}/submissions answers; stats
// is left out past page 1.
type submissionListJSON struct {
	Submissions []submissionJSON         `json:"submissions"`
	Pagination  paginationJSON           `json:"pagination"`
	Stats       *listing.SubmissionStats `json:"stats,omitempty"`
}

// UpdateSubmission answers PUT /tenants/{slug}/submissions/{id}: body
// {status}. Any status may follow any other; setting the current one again
// changes nothing and fires no event.
func (h *Leads) UpdateSubmission(c echo.Context) error {
	raw, err := jsonbody.DecodeObject(c, jsonbody.MaxJSONBody)
	if err != nil {
		return err
	}
	// A status missing or not a string is read as "", which the rule refuses.
	var status string
	if err := json.Unmarshal(raw["status"], &status); err != nil {
		status = ""
	}
	sub, err := h.Manage.UpdateSubmissionStatus(c.Request().Context(), handlers.TenantFrom(c).ID, c.Param("id"), status)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newSubmissionJSON(sub))
}

// DeleteSubmission answers DELETE /tenants/{slug}/submissions/{id}: the
// submission and its recorded events go for good, its conversation stays.
func (h *Leads) DeleteSubmission(c echo.Context) error {
	return handlers.DeleteOne(c, "id", h.Manage.DeleteSubmission)
}
