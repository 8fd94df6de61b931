package handlers

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db/listing"
	"github.com/parley/parley/handlers/resource"
)

// The conversations' stats export, which the REST API and the dashboard's
// analytics page share.

// StatsListingQuery reads the query of the stats (from, to, channel,
// segment, granularity), dates in loc; not window, which only the stats
// themselves take.
func StatsListingQuery(c echo.Context, loc *time.Location) parley.StatsListing {
	return parley.StatsListing{Scope: ScopeQuery(c, loc), Granularity: c.QueryParam("granularity")}
}

// maxStatsExportRows is how many entries the exports of byPage, topIntents
// and topTools keep (the stats themselves show StatsTop).
const maxStatsExportRows = 1000

// statsDatasets are the datasets of the stats export, each with its columns.
var statsDatasets = map[string][]string{
	"timeline":            {"date", "conversations", "messages"},
	"byPage":              {"page", "conversations"},
	"topIntents":          {"question", "count"},
	"topTools":            {"name", "calls"},
	"resolutionTimeline":  append([]string{"date"}, resolutionColumns...),
	"resolutionByChannel": append([]string{"channel"}, resolutionColumns...),
	"resolutionBySegment": append([]string{"segment"}, resolutionColumns...),
}

// resolutionColumns are the columns of the resolution datasets after their key.
var resolutionColumns = []string{"conversations", "resolved", "resolvedRate", "handedOff", "handedOffRate", "votesUp", "votesDown", "votesUpRate"}

// resolutionRecord is a row of a resolution dataset: its key, then the
// counts (a rate with nothing to divide by as null, an empty CSV cell).
func resolutionRecord(key string, r listing.ResolutionCounts) []any {
	rate := func(p *float64) any {
		if p == nil {
			return nil
		}
		return *p
	}
	return []any{key, r.Conversations, r.Resolved, rate(r.ResolvedRate), r.HandedOff, rate(r.HandedOffRate), r.VotesUp, r.VotesDown, rate(r.VotesUpRate)}
}

// statsRecords are the rows of one dataset, as CSV cells and as NDJSON values.
func statsRecords(st listing.ConversationStats, dataset string) [][]any {
	var out [][]any
	switch dataset {
	case "timeline":
		for _, b := range st.Timeline {
			out = append(out, []any{b.Date, b.Conversations, b.Messages})
		}
	case "byPage":
		for _, p := range st.ByPage {
			out = append(out, []any{p.Page, p.Conversations})
		}
	case "topIntents":
		for _, in := range st.TopIntents {
			out = append(out, []any{in.Question, in.Count})
		}
	case "topTools":
		for _, tl := range st.TopTools {
			out = append(out, []any{tl.Name, tl.Calls})
		}
	case "resolutionTimeline":
		for _, b := range st.Resolution.Timeline {
			out = append(out, resolutionRecord(b.Date, b.ResolutionCounts))
		}
	case "resolutionByChannel":
		for _, ch := range st.Resolution.ByChannel {
			out = append(out, resolutionRecord(ch.Channel, ch.ResolutionCounts))
		}
	case "resolutionBySegment":
		for _, sg := range st.Resolution.BySegment {
			out = append(out, resolutionRecord(sg.Segment, sg.ResolutionCounts))
		}
	}
	return out
}

// WriteStatsExport writes one dataset of the tenant's stats as CSV or
// NDJSON: GET /tenants/{slug}/conversations/stats/export and the analytics
// page's downloads.
func (h *Base) WriteStatsExport(c echo.Context) error {
	t := TenantFrom(c)
	loc := resource.TenantLocation(t)
	q, err := h.Manage.StatsQuery(c.Request().Context(), t.ID, StatsListingQuery(c, loc), h.Clock())
	if err != nil {
		return err
	}
	q.Top = maxStatsExportRows
	dataset := c.QueryParam("dataset")
	if dataset == "" {
		dataset = "timeline"
	}
	columns, ok := statsDatasets[dataset]
	if !ok {
		return QueryError("dataset", "must be timeline, byPage, topIntents, topTools, resolutionTimeline, resolutionByChannel or resolutionBySegment")
	}
	format, err := ExportFormat(c)
	if err != nil {
		return err
	}
	st, err := h.DB.ConversationStats(c.Request().Context(), t.ID, q)
	if err != nil {
		return err
	}
	if st.Resolution == nil {
		st.Resolution = &listing.StatsResolution{}
	}
	records := statsRecords(st, dataset)
	var buf bytes.Buffer
	contentType := "text/csv; charset=utf-8"
	if format == "ndjson" {
		contentType = "application/x-ndjson"
		enc := json.NewEncoder(&buf)
		for _, r := range records {
			obj := make(map[string]any, len(columns))
			for i, col := range columns {
				obj[col] = r[i]
			}
			if err := enc.Encode(obj); err != nil {
				return err
			}
		}
	} else {
		w := csv.NewWriter(&buf)
		w.UseCRLF = true
		_ = w.Write(columns)
		for _, r := range records {
			cells := make([]string, len(r))
			for i, v := range r {
				if v != nil {
					cells[i] = Neutralise(fmt.Sprint(v))
				}
			}
			_ = w.Write(cells)
		}
		if w.Flush(); w.Error() != nil {
			return w.Error()
		}
	}
	c.Response().Header().Set(echo.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="conversation-stats-%s-%s-%s.%s"`,
		dataset, t.Slug, h.Clock().UTC().Format("20060102"), format))
	return c.Blob(http.StatusOK, contentType, buf.Bytes())
}
