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
	"github.com/parley/parley/db"
)

// defaultStatsDays is the default window of the stats: today and the 29
// days before, in the tenant's time zone.
const defaultStatsDays = parley.DefaultStatsDays

// statsWindowJSON is the window the stats were computed over, after the
// defaults and the one-year cap.
type statsWindowJSON struct {
	From        time.Time `json:"from"`
	To          time.Time `json:"to"`
	Granularity string    `json:"granularity"`
	Timezone    string    `json:"timezone"`
}

// conversationStatsJSON is the answer of GET /tenants/{slug}/conversations/stats.
type conversationStatsJSON struct {
	Window        statsWindowJSON      `json:"window"`
	Totals        db.StatsTotals       `json:"totals"`
	Satisfaction  db.StatsSatisfaction `json:"satisfaction"`
	Timeline      []db.StatsBucket     `json:"timeline"`
	ByChannel     map[string]int       `json:"byChannel"`
	BySegment     map[string]int       `json:"bySegment"`
	ByStatus      map[string]int       `json:"byStatus"`
	ByVisitorType map[string]int       `json:"byVisitorType"`
	TopTools      []db.StatsTool       `json:"topTools"`
	ByPage        []db.StatsPage       `json:"byPage"`
	TopIntents    []db.StatsIntent     `json:"topIntents"`
	AllTime       *db.StatsAllTime     `json:"allTime,omitempty"`
}

// tenantLocation is the tenant's time zone, UTC when it does not load
// (the tenant update refuses such a name; this keeps an old row working).
func tenantLocation(t parley.Tenant) *time.Location {
	if loc, err := time.LoadLocation(t.Timezone); err == nil && t.Timezone != "" {
		return loc
	}
	return time.UTC
}

// statsListingQuery reads the query of the stats (from, to, channel,
// segment, granularity), dates in loc; not window, which only the stats
// themselves take.
func statsListingQuery(c echo.Context, loc *time.Location) parley.StatsListing {
	return parley.StatsListing{Scope: scopeQuery(c, loc), Granularity: c.QueryParam("granularity")}
}

// ShowConversationStats answers GET /tenants/{slug}/conversations/stats:
// the stats' query with window.
func (h *Handler) ShowConversationStats(c echo.Context) error {
	t := tenantFrom(c)
	l := statsListingQuery(c, tenantLocation(t))
	l.Window = c.QueryParam("window")
	q, st, err := h.Manage.ConversationStats(c.Request().Context(), t.ID, l, h.now())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newConversationStatsJSON(l.Scope.Location, q, st))
}

// newConversationStatsJSON is the stats st as the stats answer them, with
// the window of q, their query, in loc.
func newConversationStatsJSON(loc *time.Location, q db.StatsQuery, st db.ConversationStats) conversationStatsJSON {
	return conversationStatsJSON{
		Window:       statsWindowJSON{From: q.Filter.From.In(loc), To: q.Filter.To.In(loc), Granularity: q.Granularity, Timezone: loc.String()},
		Totals:       st.Totals,
		Satisfaction: st.Satisfaction,
		Timeline:     st.Timeline, ByChannel: st.ByChannel, BySegment: st.BySegment, ByStatus: st.ByStatus,
		ByVisitorType: st.ByVisitorType, TopTools: st.TopTools, ByPage: st.ByPage, TopIntents: st.TopIntents, AllTime: st.AllTime,
	}
}

// maxStatsExportRows is how many entries the exports of byPage, topIntents
// and topTools keep (the stats themselves show StatsTop).
const maxStatsExportRows = 1000

// statsDatasets are the datasets of the stats export, each with its columns.
var statsDatasets = map[string][]string{
	"timeline":   {"date", "conversations", "messages"},
	"byPage":     {"page", "conversations"},
	"topIntents": {"question", "count"},
	"topTools":   {"name", "calls"},
}

// statsRecords are the rows of one dataset, as CSV cells and as NDJSON values.
func statsRecords(st db.ConversationStats, dataset string) [][]any {
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
	}
	return out
}

// ExportConversationStats answers GET /tenants/{slug}/conversations/stats/export:
// one dataset of the stats as CSV or NDJSON. The rows are few (a year of
// days, or maxStatsExportRows): written at once.
func (h *Handler) ExportConversationStats(c echo.Context) error {
	t := tenantFrom(c)
	loc := tenantLocation(t)
	q, err := h.Manage.StatsQuery(c.Request().Context(), t.ID, statsListingQuery(c, loc), h.now())
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
		return queryError("dataset", "must be timeline, byPage, topIntents or topTools")
	}
	format, err := exportFormat(c)
	if err != nil {
		return err
	}
	st, err := h.DB.ConversationStats(c.Request().Context(), t.ID, q)
	if err != nil {
		return err
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
				cells[i] = neutralise(fmt.Sprint(v))
			}
			_ = w.Write(cells)
		}
		if w.Flush(); w.Error() != nil {
			return w.Error()
		}
	}
	c.Response().Header().Set(echo.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="conversation-stats-%s-%s-%s.%s"`,
		dataset, t.Slug, h.now().UTC().Format("20060102"), format))
	return c.Blob(http.StatusOK, contentType, buf.Bytes())
}
