package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
)

// Corpus limits (spec's corpus table; tags limits chosen here and documented).
const (
	maxCorpusTitle      = 255
	maxCorpusContent    = 50000
	maxCorpusSummary    = 500
	maxCorpusSource     = 50
	maxCorpusSourceURL  = 500
	maxCorpusExternalID = 255
	maxCorpusLocale     = 10
	maxCorpusTags       = 20
	maxCorpusTag        = 50
	minCorpusPriority   = 0
	maxCorpusPriority   = 100
	defaultCorpusLimit  = 20
	maxCorpusPageSize   = 100
	maxBulkEntries      = 50
	maxPage             = 1000000 // keeps page*limit far from overflowing an offset
)

var localePattern = regexp.MustCompile(`^[A-Za-z]{2}(-[A-Za-z]{2})?$`)

// normalizeTags trims tags, drops empty and repeated ones, and checks the
// limits shared by corpus entries and products.
func normalizeTags(errs parley.FieldErrors, o *parley.Opt[[]string]) {
	if !o.Set || o.Null {
		return
	}
	tags := []string{}
	for _, t := range o.Value {
		if t = strings.TrimSpace(t); t != "" && !slices.Contains(tags, t) {
			tags = append(tags, t)
		}
		if utf8.RuneCountInString(t) > maxCorpusTag {
			errs.Add("tags", "each tag "+tooLong(maxCorpusTag))
		}
	}
	if len(tags) > maxCorpusTags {
		errs.Add("tags", fmt.Sprintf("at most %d tags", maxCorpusTags))
	}
	o.Value = tags
}

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

// segmentResolver finds one of the tenant's segments by slug (or id): its
// id, or false when the tenant has no such segment.
type segmentResolver func(ref string) (string, bool)

// segmentTable resolves segments from one read of the tenant's segments, for
// the writes of many entries at once (bulk, import).
func (h *Handler) segmentTable(ctx context.Context, tenantID string) (segmentResolver, error) {
	segs, err := h.DB.ListSegments(ctx, tenantID)
	if err != nil {
		return nil, err
	}
	ids := make(map[string]string, 2*len(segs))
	for _, s := range segs {
		ids[s.Slug], ids[s.ID] = s.ID, s.ID
	}
	return func(ref string) (string, bool) {
		id, ok := ids[ref]
		return id, ok
	}, nil
}

// validateCorpus checks a corpus body (creating: title and content required)
// and resolves its segment slug; it returns the write to apply.
func (h *Handler) validateCorpus(ctx context.Context, tenantID string, b corpusBody, creating bool) (db.CorpusWrite, parley.FieldErrors) {
	return checkCorpus(b, creating, func(ref string) (string, bool) {
		s, err := h.DB.Segment(ctx, tenantID, ref)
		return s.ID, err == nil
	})
}

// checkCorpus is validateCorpus with the segments resolved by segment.
func checkCorpus(b corpusBody, creating bool, segment segmentResolver) (db.CorpusWrite, parley.FieldErrors) {
	errs := parley.FieldErrors{}
	for _, o := range []*parley.Opt[string]{&b.Summary, &b.ExternalID, &b.Source, &b.SourceURL, &b.Locale} {
		nullIfEmpty(o)
	}
	required := func(field string, o *parley.Opt[string], max int) {
		if creating && !o.Set {
			errs.Add(field, "is required")
			return
		}
		if notNull(errs, field, *o) {
			if strings.TrimSpace(o.Value) == "" {
				errs.Add(field, "must not be empty")
			}
			checkLen(errs, field, *o, max)
		}
	}
	b.Title.Value = strings.TrimSpace(b.Title.Value)
	required("title", &b.Title, maxCorpusTitle)
	required("content", &b.Content, maxCorpusContent)
	checkLen(errs, "summary", b.Summary, maxCorpusSummary)
	if notNull(errs, "priority", b.Priority) && (b.Priority.Value < minCorpusPriority || b.Priority.Value > maxCorpusPriority) {
		errs.Add("priority", fmt.Sprintf("must be between %d and %d", minCorpusPriority, maxCorpusPriority))
	}
	notNull(errs, "isActive", b.IsActive)
	checkLen(errs, "externalId", b.ExternalID, maxCorpusExternalID)
	checkLen(errs, "source", b.Source, maxCorpusSource)
	checkHTTPURL(errs, "sourceUrl", b.SourceURL, false)
	if b.Locale.Set && !b.Locale.Null {
		if utf8.RuneCountInString(b.Locale.Value) > maxCorpusLocale || !localePattern.MatchString(b.Locale.Value) {
			errs.Add("locale", "must be a language code such as en, fr or fr-CA")
		} else {
			b.Locale.Value = strings.ToLower(b.Locale.Value)
		}
	}
	normalizeTags(errs, &b.Tags)
	w := db.CorpusWrite{Title: b.Title, Content: b.Content, Summary: b.Summary, Priority: b.Priority,
		IsActive: b.IsActive, ExternalID: b.ExternalID, Source: b.Source, SourceURL: b.SourceURL,
		Locale: b.Locale, Tags: b.Tags}
	seg, field := b.SegmentSlug, "segmentSlug"
	if !seg.Set && b.Segment.Set {
		seg, field = b.Segment, "segment"
	}
	if seg.Set {
		if seg.Null || seg.Value == "" {
			w.SegmentID = parley.Opt[string]{Set: true, Null: true}
		} else if id, ok := segment(seg.Value); !ok {
			errs.Add(field, fmt.Sprintf("%q is not the slug of one of your segments", seg.Value))
		} else {
			w.SegmentID = parley.Some(id)
		}
	}
	return w, errs
}

func (h *Handler) decodeCorpus(c echo.Context, creating bool) (db.CorpusWrite, error) {
	raw, err := decodeObject(c, maxJSONBody)
	if err != nil {
		return db.CorpusWrite{}, err
	}
	return h.corpusWrite(c.Request().Context(), tenantFrom(c).ID, raw, creating)
}

// corpusWrite decodes and validates the fields of a corpus write: the REST
// body or an MCP tool's arguments.
func (h *Handler) corpusWrite(ctx context.Context, tenantID string, raw map[string]json.RawMessage, creating bool) (db.CorpusWrite, error) {
	var b corpusBody
	errs := decodeFields(raw, &b)
	w, verrs := h.validateCorpus(ctx, tenantID, b, creating)
	for k, v := range verrs {
		errs.Add(k, v)
	}
	return w, errs.Err()
}

// intParam reads an optional integer query parameter within [min, max].
func intParam(q query, name string, def, min, max int) (int, error) {
	v := q.QueryParam(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min || n > max {
		if max == int(^uint(0)>>1) {
			return 0, &parley.Error{Kind: parley.KindInvalid, Message: fmt.Sprintf("%s must be an integer of at least %d", name, min),
				Details: map[string]string{name: fmt.Sprintf("must be an integer of at least %d", min)}}
		}
		return 0, &parley.Error{Kind: parley.KindInvalid, Message: fmt.Sprintf("%s must be an integer between %d and %d", name, min, max),
			Details: map[string]string{name: fmt.Sprintf("must be an integer between %d and %d", min, max)}}
	}
	return n, nil
}

// ListCorpus answers GET /tenants/{slug}/corpus.
func (h *Handler) ListCorpus(c echo.Context) error {
	out, err := h.listCorpus(c.Request().Context(), tenantFrom(c).ID, c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

// listCorpus reads the query of a corpus listing (page, limit, search,
// segmentSlug or segment) and answers {corpus, pagination}.
func (h *Handler) listCorpus(ctx context.Context, tenantID string, params query) (map[string]any, error) {
	page, err := intParam(params, "page", 1, 1, maxPage)
	if err != nil {
		return nil, err
	}
	limit, err := intParam(params, "limit", defaultCorpusLimit, 1, maxCorpusPageSize)
	if err != nil {
		return nil, err
	}
	q := db.CorpusQuery{Page: page, Limit: limit, Search: strings.TrimSpace(params.QueryParam("search"))}
	if utf8.RuneCountInString(q.Search) > 200 {
		return nil, invalid("search must be at most 200 characters")
	}
	segSlug := params.QueryParam("segmentSlug")
	if segSlug == "" {
		segSlug = params.QueryParam("segment")
	}
	if segSlug != "" {
		s, err := h.DB.Segment(ctx, tenantID, segSlug)
		if parley.ErrorKind(err) == parley.KindNotFound {
			return nil, &parley.Error{Kind: parley.KindInvalid, Message: fmt.Sprintf("No segment with slug %q", segSlug),
				Details: map[string]string{"segmentSlug": "unknown segment"}}
		}
		if err != nil {
			return nil, err
		}
		q.SegmentID = s.ID
	}
	res, err := h.DB.ListCorpus(ctx, tenantID, q)
	if err != nil {
		return nil, err
	}
	out := make([]corpusJSON, len(res.Entries))
	for i, e := range res.Entries {
		out[i] = newCorpusJSON(e)
	}
	pagination := map[string]any{"page": page, "limit": limit, "total": res.Total, "totalPages": (res.Total + limit - 1) / limit}
	if res.TotalCapped {
		pagination["totalCapped"] = true
	}
	return map[string]any{"corpus": out, "pagination": pagination}, nil
}

// CreateCorpus answers POST /tenants/{slug}/corpus: with externalId an
// idempotent upsert (200 created:false when an entry was updated).
func (h *Handler) CreateCorpus(c echo.Context) error {
	w, err := h.decodeCorpus(c, true)
	if err != nil {
		return err
	}
	t := tenantFrom(c)
	e, res, err := h.DB.UpsertCorpus(c.Request().Context(), t.ID, t.PlanInfo().CorpusLimit, w)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if res == db.Created {
		status = http.StatusCreated
	}
	return c.JSON(status, map[string]any{"corpus": newCorpusJSON(e), "created": res == db.Created})
}

// ShowCorpus answers GET /tenants/{slug}/corpus/{id}.
func (h *Handler) ShowCorpus(c echo.Context) error {
	e, err := h.DB.CorpusEntry(c.Request().Context(), tenantFrom(c).ID, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"corpus": newCorpusJSON(e)})
}

// UpdateCorpus answers PUT and PATCH /tenants/{slug}/corpus/{id}: both partial.
func (h *Handler) UpdateCorpus(c echo.Context) error {
	w, err := h.decodeCorpus(c, false)
	if err != nil {
		return err
	}
	e, err := h.DB.UpdateCorpus(c.Request().Context(), tenantFrom(c).ID, c.Param("id"), w)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"corpus": newCorpusJSON(e)})
}

// DeleteCorpus answers DELETE /tenants/{slug}/corpus/{id}.
func (h *Handler) DeleteCorpus(c echo.Context) error {
	return deleteOne(c, "id", h.DB.DeleteCorpus)
}
