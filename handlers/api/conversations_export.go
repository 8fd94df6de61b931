package api

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley/db/listing"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/resource"
)

// conversationExportColumns are the CSV columns, in the spec's order; the
// NDJSON objects have the same members.
var conversationExportColumns = []string{"id", "created_at", "updated_at", "channel", "status", "visitor_type", "segment",
	"page_url", "message_count", "tool_calls_count", "intent"}

// exportWindow fills in the default window (the 30 days before to, to
// being now) and refuses one over a year.
func exportWindow(f *listing.ConversationFilter, now time.Time) error {
	if f.To.IsZero() {
		f.To = now
	}
	if f.From.IsZero() {
		f.From = f.To.Add(-handlers.DefaultExportWindow)
	}
	if !f.To.After(f.From) {
		return handlers.QueryError("to", "must be after from")
	}
	if f.To.Sub(f.From) > handlers.MaxExportWindow {
		return handlers.QueryError("from", "must be at most 366 days before to")
	}
	return nil
}

// exportRowJSON is a conversation as an NDJSON line: the CSV columns, typed.
type exportRowJSON struct {
	ID             string    `json:"id"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
	Channel        string    `json:"channel"`
	Status         string    `json:"status"`
	VisitorType    string    `json:"visitor_type"`
	Segment        *string   `json:"segment"`
	PageURL        *string   `json:"page_url"`
	MessageCount   int       `json:"message_count"`
	ToolCallsCount int       `json:"tool_calls_count"`
	Intent         *string   `json:"intent"`
}

// exportWriter writes exported rows in one format.
type exportWriter interface {
	header() error
	row(listing.ConversationExportRow) error
	flush() error
}

type csvExport struct{ w *csv.Writer }

func (e csvExport) header() error { return e.w.Write(conversationExportColumns) }

func (e csvExport) row(r listing.ConversationExportRow) error {
	record := []string{r.ID, r.CreatedAt.UTC().Format(time.RFC3339Nano), r.UpdatedAt.UTC().Format(time.RFC3339Nano), r.Channel,
		r.Status, r.VisitorType, handlers.Deref(r.SegmentSlug), handlers.Deref(r.PageURL), strconv.Itoa(r.MessageCount), strconv.Itoa(r.ToolCallsCount),
		handlers.Deref(resource.IntentOf(r.FirstUserMessage))}
	for i, cell := range record {
		record[i] = handlers.Neutralise(cell)
	}
	return e.w.Write(record)
}

func (e csvExport) flush() error {
	e.w.Flush()
	return e.w.Error()
}

type ndjsonExport struct{ enc *json.Encoder }

func (e ndjsonExport) header() error { return nil }

func (e ndjsonExport) row(r listing.ConversationExportRow) error {
	return e.enc.Encode(exportRowJSON{ID: r.ID, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), Channel: r.Channel,
		Status: r.Status, VisitorType: r.VisitorType, Segment: r.SegmentSlug, PageURL: r.PageURL, MessageCount: r.MessageCount,
		ToolCallsCount: r.ToolCallsCount, Intent: resource.IntentOf(r.FirstUserMessage)})
}

func (e ndjsonExport) flush() error { return nil }

// ExportConversations answers GET /tenants/{slug}/conversations/export: one
// row per conversation, most recently started first, as CSV or NDJSON,
// streamed from the database to the client. An error once rows are sent
// cuts the body short (and is logged): the status is already 200.
func (h *Leads) ExportConversations(c echo.Context) error {
	var f listing.ConversationFilter
	if err := h.conversationScope(c, &f); err != nil {
		return err
	}
	if err := exportWindow(&f, h.Clock()); err != nil {
		return err
	}
	format, err := handlers.ExportFormat(c)
	if err != nil {
		return err
	}
	if f.Limit, err = handlers.IntParam(c, "limit", handlers.DefaultExportLimit, 1, handlers.MaxExportLimit); err != nil {
		return err
	}
	t := handlers.TenantFrom(c)
	resp := c.Response()
	var out exportWriter
	contentType := "text/csv; charset=utf-8"
	if format == "ndjson" {
		contentType = "application/x-ndjson"
		out = ndjsonExport{enc: json.NewEncoder(resp)}
	} else {
		w := csv.NewWriter(resp)
		w.UseCRLF = true // RFC 4180
		out = csvExport{w: w}
	}
	started, n := false, 0
	start := func() error {
		started = true
		resp.Header().Set(echo.HeaderContentType, contentType)
		resp.Header().Set(echo.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="conversations-%s-%s.%s"`,
			t.Slug, h.Clock().UTC().Format("20060102"), format))
		resp.WriteHeader(http.StatusOK)
		return out.header()
	}
	err = h.DB.EachConversation(c.Request().Context(), t.ID, f, func(r listing.ConversationExportRow) error {
		if !started {
			if err := start(); err != nil {
				return err
			}
		}
		if err := out.row(r); err != nil {
			return err
		}
		if n++; n%handlers.ExportFlushRows == 0 {
			if err := out.flush(); err != nil {
				return err
			}
			resp.Flush()
		}
		return nil
	})
	if err == nil && !started {
		err = start()
	}
	if err == nil {
		err = out.flush()
	}
	if err != nil && !started {
		return err
	}
	if err != nil {
		h.Log(c).Error("conversations export cut short", "rows", n, "error", err)
	}
	return nil
}
