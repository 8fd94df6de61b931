package handlers

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/manage"
)

// The corpus's REST limits beyond the entry's own (parley.MaxCorpus*):
// a bulk request's entries.
const maxBulkEntries = 50

// corpusBody is the JSON of a corpus write; segmentSlug has the variant name segment.
type corpusBody struct {
	Title       parley.Opt[string]   `json:"title"`
	Content     parley.Opt[string]   `json:"content"`
	Summary     parley.Opt[string]   `json:"summary"`
	Priority    parley.Opt[int]      `json:"priority"`
	IsActive    parley.Opt[bool]     `json:"isActive"`
	ExternalID  parley.Opt[string]   `json:"externalId"`
	Source      parley.Opt[string]   `json:"source"`
	SourceURL   parley.Opt[string]   `json:"sourceUrl"`
	Locale      parley.Opt[string]   `json:"locale"`
	Tags        parley.Opt[[]string] `json:"tags"`
	SegmentSlug parley.Opt[string]   `json:"segmentSlug"`
	Segment     parley.Opt[string]   `json:"segment"`
}

// input is the management operations' input of b: segmentSlug, else its
// variant segment; problems are what decoding found.
func (b corpusBody) input(problems parley.FieldErrors) parley.CorpusInput {
	in := parley.CorpusInput{Title: b.Title, Content: b.Content, Summary: b.Summary, Priority: b.Priority,
		IsActive: b.IsActive, ExternalID: b.ExternalID, Source: b.Source, SourceURL: b.SourceURL,
		Locale: b.Locale, Tags: b.Tags, Segment: b.SegmentSlug, SegmentField: "segmentSlug", Problems: problems}
	if !b.SegmentSlug.Set && b.Segment.Set {
		in.Segment, in.SegmentField = b.Segment, "segment"
	}
	return in
}

// corpusJSON is the API representation of an entry. locale is write-only per the spec.
type corpusJSON struct {
	ID         string        `json:"id"`
	Title      string        `json:"title"`
	Content    string        `json:"content"`
	Summary    *string       `json:"summary"`
	Priority   int           `json:"priority"`
	IsActive   bool          `json:"isActive"`
	ExternalID *string       `json:"externalId"`
	Source     *string       `json:"source"`
	SourceURL  *string       `json:"sourceUrl"`
	Segment    *segmentRef   `json:"segment"`
	Tags       []string      `json:"tags"`
	Sync       *corpusSyncJS `json:"sync,omitempty"`
	CreatedAt  time.Time     `json:"createdAt"`
	UpdatedAt  time.Time     `json:"updatedAt"`
}

type segmentRef struct {
	Slug string `json:"slug"`
	Name string `json:"name"`
}

// corpusSyncJS is present on entries created from a URL: when the last refresh
// succeeded and the last error, if the latest refresh failed.
type corpusSyncJS struct {
	SyncedAt    *time.Time `json:"syncedAt"`
	LastError   *string    `json:"lastError"`
	LastErrorAt *time.Time `json:"lastErrorAt"`
}

func newCorpusJSON(e parley.CorpusEntry) corpusJSON {
	j := corpusJSON{
		ID: e.ID, Title: e.Title, Content: e.Content, Summary: e.Summary, Priority: e.Priority,
		IsActive: e.IsActive, ExternalID: e.ExternalID, Source: e.Source, SourceURL: e.SourceURL,
		Tags: e.Tags, CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt,
	}
	if e.SegmentSlug != nil {
		j.Segment = &segmentRef{Slug: *e.SegmentSlug, Name: deref(e.SegmentName)}
	}
	if e.SyncedAt != nil || e.SyncError != nil {
		j.Sync = &corpusSyncJS{SyncedAt: e.SyncedAt, LastError: e.SyncError, LastErrorAt: e.SyncErrorAt}
	}
	return j
}

// queryInt reads the integer query parameter name into n when it is
// given; a value that is not an integer reads as math.MinInt, outside every
// range, so that the listing's check names its bounds.
func queryInt(c echo.Context, name string, n *int) {
	v := c.QueryParam(name)
	if v == "" {
		return
	}
	var err error
	if *n, err = strconv.Atoi(v); err != nil {
		*n = math.MinInt
	}
}

// intParam reads an optional integer query parameter within [min, max].
func intParam(c echo.Context, name string, def, min, max int) (int, error) {
	n := def
	queryInt(c, name, &n)
	errs := parley.FieldErrors{}
	parley.CheckCount(errs, name, n, min, max)
	return n, parley.ParamsError(errs)
}

// ListCorpus answers GET /tenants/{slug}/corpus: the query's page, limit,
// search and segmentSlug (or segment).
func (h *Handler) ListCorpus(c echo.Context) error {
	l := manage.NewCorpusListing()
	queryInt(c, "page", &l.Page)
	queryInt(c, "limit", &l.Limit)
	l.Search, l.Segment = c.QueryParam("search"), NonBlankOr(c.QueryParam("segmentSlug"), c.QueryParam("segment"))
	res, err := h.Manage.ListCorpus(c.Request().Context(), tenantFrom(c).ID, l)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, corpusPageJSON(l, res))
}

// corpusPageJSON is a page of entries as the listings answer it: {corpus,
// pagination}.
func corpusPageJSON(l manage.CorpusListing, res db.CorpusPage) map[string]any {
	out := make([]corpusJSON, len(res.Entries))
	for i, e := range res.Entries {
		out[i] = newCorpusJSON(e)
	}
	pagination := map[string]any{"page": l.Page, "limit": l.Limit, "total": res.Total, "totalPages": (res.Total + l.Limit - 1) / l.Limit}
	if res.TotalCapped {
		pagination["totalCapped"] = true
	}
	return map[string]any{"corpus": out, "pagination": pagination}
}

// corpusInput decodes the fields of a corpus write: the REST body or an
// MCP tool's arguments.
func corpusInput(raw map[string]json.RawMessage) parley.CorpusInput {
	var b corpusBody
	problems := DecodeFields(raw, &b)
	return b.input(problems)
}

// decodeCorpus reads a corpus write's body.
func decodeCorpus(c echo.Context) (parley.CorpusInput, error) {
	raw, err := DecodeObject(c, MaxJSONBody)
	if err != nil {
		return parley.CorpusInput{}, err
	}
	return corpusInput(raw), nil
}

// CreateCorpus answers POST /tenants/{slug}/corpus: with externalId an
// idempotent upsert (200 created:false when an entry was updated).
func (h *Handler) CreateCorpus(c echo.Context) error {
	in, err := decodeCorpus(c)
	if err != nil {
		return err
	}
	e, created, err := h.Manage.CreateCorpus(c.Request().Context(), tenantFrom(c), in)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return c.JSON(status, map[string]any{"corpus": newCorpusJSON(e), "created": created})
}

// ShowCorpus answers GET /tenants/{slug}/corpus/{id}.
func (h *Handler) ShowCorpus(c echo.Context) error {
	e, err := h.Manage.CorpusEntry(c.Request().Context(), tenantFrom(c).ID, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"corpus": newCorpusJSON(e)})
}

// UpdateCorpus answers PUT and PATCH /tenants/{slug}/corpus/{id}: both partial.
func (h *Handler) UpdateCorpus(c echo.Context) error {
	in, err := decodeCorpus(c)
	if err != nil {
		return err
	}
	e, err := h.Manage.UpdateCorpus(c.Request().Context(), tenantFrom(c).ID, c.Param("id"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"corpus": newCorpusJSON(e)})
}

// DeleteCorpus answers DELETE /tenants/{slug}/corpus/{id}.
func (h *Handler) DeleteCorpus(c echo.Context) error {
	return deleteOne(c, "id", h.Manage.DeleteCorpus)
}
