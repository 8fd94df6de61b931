package admin

import (
	"encoding/csv"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/views"
)

// ExportSubmissions streams the submissions of the list's filters (every
// page) as CSV (RFC 4180): one row per submission, newest first, its
// details, then one column per collected field; cells that a spreadsheet
// would read as formulas are neutralised. Values are those the
// detail page shows; a UTF-8 byte order mark lets spreadsheets read accents.
func (h *Leads) ExportSubmissions(c echo.Context) error {
	ctx := c.Request().Context()
	tenant := dash.AdminFrom(c).Tenant
	search := strings.TrimSpace(c.QueryParam("search"))
	f, err := handlers.CheckSubmissionFilter(c, search != "")
	if err != nil {
		return err
	}
	keys, err := h.DB.SubmissionInputKeys(ctx, tenant.ID, f)
	if err != nil {
		return err
	}
	header := []string{"Created (UTC)", "Status", "Channel", "Type", "Tool", "Page", "Visitor", "Conversation", "Submission"}
	seen := map[string]bool{}
	for _, h := range header {
		seen[h] = true
	}
	for _, k := range keys {
		label := views.FieldLabel(k)
		if seen[label] {
			label = k // two names with the same words (full_name, fullName)
		}
		seen[label] = true
		header = append(header, label)
	}

	res := c.Response()
	name := "submissions-" + tenant.Slug + "-" + h.Clock().UTC().Format("2006-01-02") + ".csv"
	res.Header().Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	res.Header().Set(echo.HeaderContentDisposition, `attachment; filename="`+name+`"`)
	res.Header().Set("Cache-Control", "no-store")
	res.WriteHeader(http.StatusOK)
	if _, err := res.Write([]byte("\uFEFF")); err != nil {
		return nil // the browser went away
	}
	w := csv.NewWriter(res)
	write := func(rec []string) error {
		for i := range rec {
			rec[i] = handlers.Neutralise(rec[i]) // a visitor typed what lands here
		}
		return w.Write(rec)
	}
	if err := write(header); err != nil {
		return nil
	}
	n := 0
	err = h.DB.EachSubmission(ctx, tenant.ID, f, func(s parley.Submission) error {
		values := map[string]string{}
		for _, fl := range inputFields(s.Input) {
			values[fl.Key] = fl.Value
		}
		rec := []string{s.CreatedAt.UTC().Format(time.DateTime), views.StatusName(s.Status), views.ChannelName(s.Channel),
			views.ToolTypeName(s.ToolType), s.ToolName, handlers.Deref(s.PageURL), handlers.Deref(s.VisitorID), handlers.Deref(s.ConversationID), s.ID}
		for _, k := range keys {
			rec = append(rec, values[k])
		}
		if err := write(rec); err != nil {
			return err
		}
		if n++; n%handlers.ExportFlushRows == 0 {
			w.Flush()
			res.Flush()
		}
		return w.Error()
	})
	w.Flush()
	if err != nil {
		// The status is sent: the file ends early, and the log says why.
		h.Log(c).Error("exporting submissions", "err", err)
	}
	return nil
}
