package resource

import (
	"encoding/json"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db/knowledge"
	"github.com/parley/parley/handlers/jsonbody"
	"github.com/parley/parley/manage"
)

// CorpusBody is the JSON of a corpus write; segmentSlug has the variant name segment.
type CorpusBody struct {
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
func (b CorpusBody) input(problems parley.FieldErrors) parley.CorpusInput {
	in := parley.CorpusInput{Title: b.Title, Content: b.Content, Summary: b.Summary, Priority: b.Priority,
		IsActive: b.IsActive, ExternalID: b.ExternalID, Source: b.Source, SourceURL: b.SourceURL,
		Locale: b.Locale, Tags: b.Tags, Segment: b.SegmentSlug, SegmentField: "segmentSlug", Problems: problems}
	if !b.SegmentSlug.Set && b.Segment.Set {
		in.Segment, in.SegmentField = b.Segment, "segment"
	}
	return in
}

// CorpusJSON is the API representation of an entry. locale is write-only per the spec.
type CorpusJSON struct {
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

func NewCorpusJSON(e parley.CorpusEntry) CorpusJSON {
	j := CorpusJSON{
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

// CorpusListJSON is a page of entries as the listings answer it: {corpus,
// pagination}.
type CorpusListJSON struct {
	Corpus     []CorpusJSON         `json:"corpus"`
	Pagination corpusPaginationJSON `json:"pagination"`
}

type corpusPaginationJSON struct {
	Page        int  `json:"page"`
	Limit       int  `json:"limit"`
	Total       int  `json:"total"`
	TotalPages  int  `json:"totalPages"`
	TotalCapped bool `json:"totalCapped,omitempty"` // present, true, only when capped
}

// NewCorpusListJSON is the page res of listing l.
func NewCorpusListJSON(l manage.CorpusListing, res knowledge.CorpusPage) CorpusListJSON {
	out := make([]CorpusJSON, len(res.Entries))
	for i, e := range res.Entries {
		out[i] = NewCorpusJSON(e)
	}
	return CorpusListJSON{Corpus: out, Pagination: corpusPaginationJSON{Page: l.Page, Limit: l.Limit, Total: res.Total,
		TotalPages: (res.Total + l.Limit - 1) / l.Limit, TotalCapped: res.TotalCapped}}
}

// CorpusEnvelopeJSON is one entry wrapped in corpus: what a read or an
// update of an entry answers.
type CorpusEnvelopeJSON struct {
	Corpus CorpusJSON `json:"corpus"`
}

// CorpusUpsertJSON is what a create (or a sync) of an entry answers: the
// entry, and whether it is new rather than updated.
type CorpusUpsertJSON struct {
	Corpus  CorpusJSON `json:"corpus"`
	Created bool       `json:"created"`
}

// CorpusInputOf decodes the fields of a corpus write: the REST body or an
// MCP tool's arguments.
func CorpusInputOf(raw map[string]json.RawMessage) parley.CorpusInput {
	var b CorpusBody
	problems := jsonbody.DecodeFields(raw, &b)
	return b.input(problems)
}
