package admin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db/listing"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/views"
)

// maxShownMessages is how many of the originating conversation's last
// messages a submission's page shows.
const maxShownMessages = 200

// maxSummaryValue is the length of one value in a list row's summary.
const maxSummaryValue = 60

// submissionToolTypes are the choices of the type filter: the types that
// produce submissions, by their names for owners. (An address may still
// carry any type the API accepts.)
var submissionToolTypes = func() []views.Option {
	var opts []views.Option
	for _, t := range parley.SubmissionToolTypes {
		opts = append(opts, views.Option{Value: t, Label: views.ToolTypeName(t)})
	}
	return opts
}()

// inputFields reads a submission's input (or result) in its stored order,
// each value formatted for reading.
func inputFields(raw json.RawMessage) []views.SubmissionField {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var fields []views.SubmissionField
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			break
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			break
		}
		fields = append(fields, views.SubmissionField{Key: key, Label: views.FieldLabel(key), Value: fieldText(v)})
	}
	return fields
}

// fieldText shows a collected value for reading: strings as they are, null
// as nothing, yes or no, numbers as written, lists one item a line (or
// joined when short), objects as "Label: value" lines.
func fieldText(v json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var x any
	if dec.Decode(&x) != nil {
		return string(v)
	}
	return valueText(x, "")
}

func valueText(x any, indent string) string {
	switch x := x.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		if x {
			return "Yes"
		}
		return "No"
	case json.Number:
		return x.String()
	case []any:
		scalars := true
		parts := make([]string, len(x))
		for i, e := range x {
			switch e.(type) {
			case []any, map[string]any:
				scalars = false
			}
			parts[i] = valueText(e, indent+"  ")
		}
		if scalars {
			return strings.Join(parts, ", ")
		}
		for i := range parts {
			parts[i] = indent + "• " + strings.TrimPrefix(parts[i], indent+"  ")
		}
		return strings.Join(parts, "\n")
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		lines := make([]string, 0, len(keys))
		for _, k := range keys {
			val := valueText(x[k], indent+"  ")
			if strings.Contains(val, "\n") {
				lines = append(lines, indent+views.FieldLabel(k)+":\n"+val)
			} else {
				lines = append(lines, indent+views.FieldLabel(k)+": "+val)
			}
		}
		return strings.Join(lines, "\n")
	}
	return fmt.Sprint(x)
}

// labelFields gives the fields the labels of the form they were collected
// with, where that form declares them.
func labelFields(fields []views.SubmissionField, form []parley.FormField) {
	for i, f := range fields {
		for _, ff := range form {
			if ff.Name == f.Key && strings.TrimSpace(ff.Label) != "" {
				fields[i].Label = strings.TrimSpace(ff.Label)
			}
		}
	}
}

// formFieldsOf finds the form a submission was collected with: its SUBMIT_FORM
// tool's, or for the standalone form the segment form that declares every
// collected field. Nil when neither is known any more.
func (h *core) formFieldsOf(c echo.Context, s parley.Submission, fields []views.SubmissionField) ([]parley.FormField, error) {
	ctx := c.Request().Context()
	if s.ToolID != nil {
		t, err := h.DB.Tool(ctx, s.TenantID, *s.ToolID)
		if parley.ErrorKind(err) == parley.KindNotFound {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		var cfg parley.SubmitFormConfig
		if t.Type != parley.ToolSubmitForm || json.Unmarshal(t.Config, &cfg) != nil {
			return nil, nil
		}
		return cfg.Fields, nil
	}
	if s.Channel != parley.ChannelForm {
		return nil, nil
	}
	segs, err := h.DB.ListSegments(ctx, s.TenantID)
	if err != nil {
		return nil, err
	}
	for _, seg := range segs {
		if seg.FormConfig == nil {
			continue
		}
		declared := func(f views.SubmissionField) bool {
			return slices.ContainsFunc(seg.FormConfig.Fields, func(ff parley.FormField) bool { return ff.Name == f.Key })
		}
		if len(fields) > 0 && !slices.ContainsFunc(fields, func(f views.SubmissionField) bool { return !declared(f) }) {
			return seg.FormConfig.Fields, nil
		}
	}
	return nil, nil
}

// submissionSummary is a row's glimpse of what was collected: the email, name
// and phone when the fields have such names, else the first two values.
func submissionSummary(fields []views.SubmissionField) string {
	var parts []string
	used := map[string]bool{}
	for _, want := range []string{"email", "name", "phone"} {
		for _, f := range fields {
			if !used[f.Key] && f.Value != "" && strings.Contains(strings.ToLower(f.Key), want) {
				parts, used[f.Key] = append(parts, shortValue(f.Value)), true
				break
			}
		}
	}
	if len(parts) == 0 {
		for _, f := range fields {
			if f.Value != "" {
				parts = append(parts, shortValue(f.Value))
			}
			if len(parts) == 2 {
				break
			}
		}
	}
	return strings.Join(parts, " · ")
}

// shortValue puts a value on one line of at most maxSummaryValue characters.
func shortValue(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > maxSummaryValue {
		s = string([]rune(s)[:maxSummaryValue-1]) + "…"
	}
	return s
}

func submissionRow(s parley.Submission) views.SubmissionRow {
	return views.SubmissionRow{ID: s.ID, CreatedAt: s.CreatedAt.UTC().Format(dash.DateTime), ToolName: s.ToolName,
		ToolType: s.ToolType, Channel: s.Channel, Summary: submissionSummary(inputFields(s.Input)), Status: s.Status,
		InChat: s.ConversationID != nil}
}

func submissionStatus(s parley.Submission, errMsg string) views.SubmissionStatus {
	return views.SubmissionStatus{ID: s.ID, Status: s.Status, Error: errMsg, UpdatedAt: s.UpdatedAt.UTC().Format(dash.DateTime)}
}

// ShowSubmissionsPage is the inbox: the counters, the filters (checked as the
// API checks them, an empty search box meaning no search) and a page of
// submissions, newest first.
func (h *Leads) ShowSubmissionsPage(c echo.Context) error {
	ctx := c.Request().Context()
	tenantID := dash.AdminFrom(c).Tenant.ID
	v := views.SubmissionsView{ToolTypes: submissionToolTypes, Filter: views.SubmissionsFilter{
		Status: c.QueryParam("status"), Channel: c.QueryParam("channel"), ToolType: strings.ToUpper(c.QueryParam("toolType")),
		From: c.QueryParam("from"), To: c.QueryParam("to"), Search: strings.TrimSpace(c.QueryParam("search")),
		Limit: c.QueryParam("limit"),
	}}
	status := http.StatusOK
	f, err := handlers.CheckSubmissionFilter(c, v.Filter.Search != "")
	if err != nil {
		var ok bool
		if v.Errors, status, ok = dash.FailedForm(err); !ok {
			return err
		}
		for k := range v.Errors {
			v.Errors[k] = err.Error() // the API's own message, which names the parameter
		}
	} else {
		page, err := h.Manage.Submissions(ctx, tenantID, f)
		if err != nil {
			return err
		}
		v.Page, v.Total, v.Pages = f.Page, page.Total, (page.Total+f.Limit-1)/f.Limit
		for _, s := range page.Submissions {
			v.Rows = append(v.Rows, submissionRow(s))
		}
		if page.Stats != nil {
			v.Stats = views.SubmissionsStats(*page.Stats)
		}
	}
	if v.Stats.ByChannel == nil {
		// Computed with page 1 only, and of the filter's tool type when that is valid.
		sf := listing.SubmissionFilter{Page: 1, Limit: 1}
		if v.Errors["toolType"] == "" {
			sf.ToolType = v.Filter.ToolType
		}
		first, err := h.Manage.Submissions(ctx, tenantID, sf)
		if err != nil {
			return err
		}
		v.Stats = views.SubmissionsStats(*first.Stats)
	}
	return handlers.Render(c, status, views.SubmissionsPage(dash.Page(c, h.Sessions, "Submissions", "submissions"), v))
}

// submissionDetail loads what a submission's page shows.
func (h *core) submissionDetail(c echo.Context) (views.SubmissionDetail, error) {
	ctx := c.Request().Context()
	tenantID := dash.AdminFrom(c).Tenant.ID
	s, err := h.Manage.Submission(ctx, tenantID, c.Param("id"))
	if err != nil {
		return views.SubmissionDetail{}, err
	}
	d := views.SubmissionDetail{ID: s.ID, ToolName: s.ToolName, ToolType: s.ToolType, Channel: s.Channel,
		PageURL: handlers.Deref(s.PageURL), CreatedAt: s.CreatedAt.UTC().Format(dash.DateTime), Status: submissionStatus(s, ""),
		Fields: inputFields(s.Input), Result: inputFields(s.Result), RawInput: prettyJSON(s.Input), RawResult: prettyJSON(s.Result)}
	form, err := h.formFieldsOf(c, s, d.Fields)
	if err != nil {
		return views.SubmissionDetail{}, err
	}
	labelFields(d.Fields, form)
	if s.VisitorID != nil {
		v, err := h.DB.VisitorDetail(ctx, tenantID, *s.VisitorID)
		switch {
		case err == nil:
			d.VisitorID, d.VisitorLabel = v.ID, visitorLabel(v)
		case parley.ErrorKind(err) != parley.KindNotFound: // erased meanwhile: shown as anonymous
			return views.SubmissionDetail{}, err
		}
	}
	if s.ConversationID != nil {
		conv, err := h.DB.Conversation(ctx, tenantID, *s.ConversationID)
		switch {
		case err == nil:
			turns, err := h.DB.RecentTurns(ctx, tenantID, conv.ID, maxShownMessages)
			if err != nil {
				return views.SubmissionDetail{}, err
			}
			d.ConversationID, d.ConversationStarted, d.MessageCount = conv.ID, conv.CreatedAt.UTC().Format(dash.DateTime), conv.MessageCount
			for _, t := range turns {
				d.Messages = append(d.Messages, views.SubmissionMessage{Role: t.Role, Content: t.Content, At: t.Timestamp.UTC().Format(dash.DateTime)})
			}
			d.MessageCount = max(d.MessageCount, len(d.Messages))
		case parley.ErrorKind(err) != parley.KindNotFound: // deleted meanwhile: shown as gone
			return views.SubmissionDetail{}, err
		}
	}
	return d, nil
}

// ShowSubmissionPage renders one of the tenant's submissions.
func (h *Leads) ShowSubmissionPage(c echo.Context) error {
	d, err := h.submissionDetail(c)
	if err != nil {
		return err
	}
	return handlers.Render(c, http.StatusOK, views.SubmissionPage(dash.Page(c, h.Sessions, "Submission", "submissions"), d))
}

// safeSubmissionsNext keeps the return address of a status change on the submissions pages.
func safeSubmissionsNext(next string) string {
	if (next == "/admin/submissions" || strings.HasPrefix(next, "/admin/submissions?") || strings.HasPrefix(next, "/admin/submissions/")) &&
		!strings.Contains(next, "\\") {
		return next
	}
	return "/admin/submissions"
}

// SaveSubmissionStatus moves a submission to the chosen status, with the
// API's rules and its submission.updated event. htmx gets the list row, or
// the detail page's control, re-rendered; a refusal shows in its error slot.
// Without htmx the browser goes back where it was, with a flash message.
func (h *Leads) SaveSubmissionStatus(c echo.Context) error {
	ctx := c.Request().Context()
	tenantID := dash.AdminFrom(c).Tenant.ID
	id := c.Param("id")
	sub, err := h.Manage.UpdateSubmissionStatus(ctx, tenantID, id, c.FormValue("status"))
	kind := parley.ErrorKind(err)
	if err != nil && kind != parley.KindInvalid && (kind != parley.KindNotFound || !dash.IsHTMX(c) || !handlers.UUIDPattern.MatchString(id)) {
		return err
	}
	if !dash.IsHTMX(c) {
		if err != nil {
			h.Sessions.Put(ctx, dash.SessFlashError, err.Error())
		} else {
			h.Sessions.Put(ctx, dash.SessFlash, "Status set to "+sub.Status+".")
		}
		return c.Redirect(http.StatusSeeOther, safeSubmissionsNext(c.FormValue("next")))
	}
	if kind == parley.KindNotFound {
		// Deleted meanwhile (or another tenant's): nothing to re-render, the reason goes in the error slot.
		c.Response().Header().Set("HX-Retarget", "#status-error-"+id)
		c.Response().Header().Set("HX-Reswap", "innerHTML")
		return c.HTML(http.StatusNotFound, template.HTMLEscapeString(err.Error()))
	}
	status, msg := http.StatusOK, ""
	if err != nil { // a status outside the three: shown with the one stored
		status, msg = http.StatusUnprocessableEntity, err.Error()
		if sub, err = h.Manage.Submission(ctx, tenantID, id); err != nil {
			return err
		}
	}
	p := views.Page{CSRF: dash.CSRFToken(c)}
	if c.FormValue("view") == "detail" {
		return handlers.Render(c, status, views.SubmissionStatusChanged(p, submissionStatus(sub, msg)))
	}
	row := submissionRow(sub)
	row.Error = msg
	next := safeSubmissionsNext(c.FormValue("next"))
	toolType := statsToolType(next)
	stats, err := h.Manage.Submissions(ctx, tenantID, listing.SubmissionFilter{ToolType: toolType, Page: 1, Limit: 1})
	if err != nil {
		return err
	}
	return handlers.Render(c, status, views.SubmissionRowChanged(p, row, next, views.SubmissionsStats(*stats.Stats), views.StatsScope(toolType)))
}

// statsToolType is the tool type the list's counters cover: that of the list's
// filter (in its address, next) when the filter is valid, else every type.
func statsToolType(next string) string {
	u, err := url.Parse(next)
	if err != nil {
		return ""
	}
	t := strings.ToUpper(u.Query().Get("toolType"))
	if !slices.Contains(parley.UserToolTypes, t) && !slices.Contains(parley.SyntheticToolTypes, t) {
		return ""
	}
	return t
}

// RemoveSubmission erases a submission and its recorded events; its
// conversation stays. htmx is sent to the list, where a flash message says so.
func (h *Leads) RemoveSubmission(c echo.Context) error {
	ctx := c.Request().Context()
	tenantID := dash.AdminFrom(c).Tenant.ID
	s, err := h.Manage.Submission(ctx, tenantID, c.Param("id"))
	if err != nil {
		return err
	}
	if err := h.Manage.DeleteSubmission(ctx, tenantID, s.ID); err != nil {
		return err
	}
	msg := "Submission deleted."
	if s.ConversationID != nil {
		msg = "Submission deleted; the conversation is kept."
	}
	h.Sessions.Put(ctx, dash.SessFlash, msg)
	return dash.SeeOther(c, "/admin/submissions")
}
