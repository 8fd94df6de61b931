package parley

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// A corpus entry's limits (the spec's corpus table; the tags' are Tags').
const (
	MaxCorpusTitle      = 255
	MaxCorpusContent    = 50000
	MaxCorpusSummary    = 500
	MaxCorpusSource     = 50
	MaxCorpusSourceURL  = 500
	MaxCorpusExternalID = 255
	MaxCorpusLocale     = 10
	MinCorpusPriority   = 0
	MaxCorpusPriority   = 100
)

var localePattern = regexp.MustCompile(`^[A-Za-z]{2}(-[A-Za-z]{2})?$`)

// CorpusInput is a write of a corpus entry as a caller gives it, through
// any surface: the fields set change. Segment names one of the tenant's
// segments by slug or id (null or "": every segment), which the
// management operations resolve; SegmentField is the wire name it came
// under, for its problem ("segmentSlug" when empty). Problems holds what
// the surface could not read of it (a value of the wrong JSON type, a
// number that is not one): they come first, before the rules' own.
type CorpusInput struct {
	Title        Opt[string]
	Content      Opt[string]
	Summary      Opt[string]
	Priority     Opt[int]
	IsActive     Opt[bool]
	ExternalID   Opt[string]
	Source       Opt[string]
	SourceURL    Opt[string]
	Locale       Opt[string]
	Tags         Opt[[]string]
	Segment      Opt[string]
	SegmentField string
	Problems     FieldErrors
}

// Check normalises in (the title trimmed, an empty optional text a clear,
// the locale lower-cased, the tags trimmed and deduplicated) and returns
// its problems, Problems first; creating, title and content are required.
// The segment is left to resolve.
func (in *CorpusInput) Check(creating bool) FieldErrors {
	errs := in.Problems.Copy()
	for _, o := range []*Opt[string]{&in.Summary, &in.ExternalID, &in.Source, &in.SourceURL, &in.Locale} {
		NullIfEmpty(o)
	}
	in.Title.Value = strings.TrimSpace(in.Title.Value)
	CheckText(errs, "title", in.Title, MaxCorpusTitle, creating)
	CheckText(errs, "content", in.Content, MaxCorpusContent, creating)
	CheckLen(errs, "summary", in.Summary, MaxCorpusSummary)
	if NotNull(errs, "priority", in.Priority) && (in.Priority.Value < MinCorpusPriority || in.Priority.Value > MaxCorpusPriority) {
		errs.Add("priority", fmt.Sprintf("must be between %d and %d", MinCorpusPriority, MaxCorpusPriority))
	}
	NotNull(errs, "isActive", in.IsActive)
	CheckLen(errs, "externalId", in.ExternalID, MaxCorpusExternalID)
	CheckLen(errs, "source", in.Source, MaxCorpusSource)
	CheckHTTPURL(errs, "sourceUrl", in.SourceURL, false)
	if in.Locale.Set && !in.Locale.Null {
		if utf8.RuneCountInString(in.Locale.Value) > MaxCorpusLocale || !localePattern.MatchString(in.Locale.Value) {
			errs.Add("locale", "must be a language code such as en, fr or fr-CA")
		} else {
			in.Locale.Value = strings.ToLower(in.Locale.Value)
		}
	}
	NormalizeTags(errs, &in.Tags)
	return errs
}

// SegmentProblem is the problem of a segment reference that names none of
// the tenant's segments, under in's SegmentField.
func (in *CorpusInput) SegmentProblem(errs FieldErrors) {
	field := in.SegmentField
	if field == "" {
		field = "segmentSlug"
	}
	errs.Add(field, fmt.Sprintf("%q is not the slug of one of your segments", in.Segment.Value))
}
