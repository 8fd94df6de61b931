package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/handlers/jsonbody"
)

// Submissions list limits: the spec's, and the search cap chosen here
// (documented in the OpenAPI document).
const (
	defaultSubmissionsLimit  = 30
	maxSubmissionsLimit      = 100
	minSubmissionSearchChars = 2
	maxSubmissionSearchChars = 200
)

var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// submissionChannels are where a submission can come from.
var submissionChannels = []string{parley.ChannelWeb, parley.ChannelVoice, parley.ChannelAPI, parley.ChannelForm}

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

// queryError is the 400 of an invalid value of a known query parameter.
func queryError(name, problem string) error {
	return &parley.Error{Kind: parley.KindInvalid, Message: name + " " + problem, Details: map[string]string{name: problem}}
}

// timeParam reads an RFC 3339 date-time or a YYYY-MM-DD date (midnight UTC);
// with endOfDay a date means the midnight after it, so that an exclusive
// upper bound still takes the whole day in.
func timeParam(q echo.Context, name string, endOfDay bool) (time.Time, error) {
	return timeParamIn(q, name, endOfDay, time.UTC)
}

// timeParamIn is timeParam with a date meaning midnight in loc.
func timeParamIn(q echo.Context, name string, endOfDay bool, loc *time.Location) (time.Time, error) {
	v := q.QueryParam(name)
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	t, err := time.ParseInLocation(time.DateOnly, v, loc)
	if err != nil {
		return time.Time{}, queryError(name, "must be an RFC 3339 date-time or a YYYY-MM-DD date")
	}
	if endOfDay {
		t = t.AddDate(0, 0, 1)
	}
	return t, nil
}

// submissionFilter reads and checks the query of GET /tenants/{slug}/submissions.
// The parameter `type` is ignored on purpose: the filter is `toolType`.
// A search parameter present is checked even when empty.
func submissionFilter(c echo.Context) (db.SubmissionFilter, error) {
	_, searched := c.QueryParams()["search"]
	return checkSubmissionFilter(c, searched)
}

// checkSubmissionFilter reads and checks the query of a submissions list; the
// search is read and checked only when searched.
func checkSubmissionFilter(c echo.Context, searched bool) (db.SubmissionFilter, error) {
	var f db.SubmissionFilter
	var err error
	if f.Page, err = intParam(c, "page", 1, 1, parley.MaxPage); err != nil {
		return f, err
	}
	if f.Limit, err = intParam(c, "limit", defaultSubmissionsLimit, 1, maxSubmissionsLimit); err != nil {
		return f, err
	}
	if v := c.QueryParam("toolType"); v != "" {
		f.ToolType = strings.ToUpper(v)
		if !slices.Contains(parley.UserToolTypes, f.ToolType) && !slices.Contains(parley.SyntheticToolTypes, f.ToolType) {
			return f, queryError("toolType", "must be one of "+strings.Join(append(slices.Clone(parley.UserToolTypes), parley.SyntheticToolTypes...), ", "))
		}
	}
	if f.ToolID = c.QueryParam("toolId"); f.ToolID != "" && !uuidPattern.MatchString(f.ToolID) {
		return f, queryError("toolId", "must be a uuid")
	}
	if f.Status = c.QueryParam("status"); f.Status != "" && !slices.Contains(parley.SubmissionStatuses, f.Status) {
		return f, queryError("status", "must be NEW, CONTACTED or RESOLVED")
	}
	if f.Channel = c.QueryParam("channel"); f.Channel != "" && !slices.Contains(submissionChannels, f.Channel) {
		return f, queryError("channel", "must be web, voice, api or form")
	}
	if searched {
		f.Search = strings.TrimSpace(c.QueryParam("search"))
		if n := utf8.RuneCountInString(f.Search); n < minSubmissionSearchChars || n > maxSubmissionSearchChars {
			return f, queryError("search", fmt.Sprintf("must be %d to %d characters", minSubmissionSearchChars, maxSubmissionSearchChars))
		}
	}
	if f.From, err = timeParam(c, "from", false); err != nil {
		return f, err
	}
	if f.To, err = timeParam(c, "to", true); err != nil {
		return f, err
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.To.After(f.From) {
		return f, queryError("to", "must be after from")
	}
	return f, nil
}

// ListSubmissions answers GET /tenants/{slug}/submissions: {submissions,
// pagination, stats}, stats on page 1 only.
func (h *Handler) ListSubmissions(c echo.Context) error {
	f, err := submissionFilter(c)
	if err != nil {
		return err
	}
	page, err := h.Manage.Submissions(c.Request().Context(), TenantFrom(c).ID, f)
	if err != nil {
		return err
	}
	out := make([]submissionJSON, len(page.Submissions))
	for i, s := range page.Submissions {
		out[i] = newSubmissionJSON(s)
	}
	body := map[string]any{
		"submissions": out,
		"pagination":  map[string]int{"page": f.Page, "limit": f.Limit, "total": page.Total, "pages": (page.Total + f.Limit - 1) / f.Limit},
	}
	if page.Stats != nil {
		body["stats"] = page.Stats
	}
	return c.JSON(http.StatusOK, body)
}

// UpdateSubmission answers PUT /tenants/{slug}/submissions/{id}: body
// {status}. Any status may follow any other; setting the current one again
// changes nothing and fires no event.
func (h *Handler) UpdateSubmission(c echo.Context) error {
	raw, err := jsonbody.DecodeObject(c, jsonbody.MaxJSONBody)
	if err != nil {
		return err
	}
	// A status missing or not a string is read as "", which the rule refuses.
	var status string
	if err := json.Unmarshal(raw["status"], &status); err != nil {
		status = ""
	}
	sub, err := h.Manage.UpdateSubmissionStatus(c.Request().Context(), TenantFrom(c).ID, c.Param("id"), status)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newSubmissionJSON(sub))
}

// DeleteSubmission answers DELETE /tenants/{slug}/submissions/{id}: the
// submission and its recorded events go for good, its conversation stays.
func (h *Handler) DeleteSubmission(c echo.Context) error {
	return deleteOne(c, "id", h.Manage.DeleteSubmission)
}
