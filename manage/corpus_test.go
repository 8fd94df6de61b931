package manage_test

import (
	"strings"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/manage"
)

// CheckCorpus: the entry's rules at their limits and one past, the
// problems read by the surface first, and the segment resolved or named
// under the field it came by.
func TestCheckCorpus(t *testing.T) {
	t.Parallel()
	segments := manage.SegmentResolver(func(ref string) (string, bool) {
		if ref == "shop" {
			return "seg-1", true
		}
		return "", false
	})
	ok := func() parley.CorpusInput {
		return parley.CorpusInput{Title: parley.Some("  Opening hours "), Content: parley.Some("Tuesday to Saturday.")}
	}
	for name, c := range map[string]struct {
		edit    func(*parley.CorpusInput)
		field   string
		problem string
	}{
		"TitleAtLimit":    {func(in *parley.CorpusInput) { in.Title = parley.Some(strings.Repeat("t", parley.MaxCorpusTitle)) }, "", ""},
		"TitlePastLimit":  {func(in *parley.CorpusInput) { in.Title = parley.Some(strings.Repeat("t", parley.MaxCorpusTitle+1)) }, "title", "at most 255"},
		"NoContent":       {func(in *parley.CorpusInput) { in.Content = parley.Opt[string]{} }, "content", "is required"},
		"BlankTitle":      {func(in *parley.CorpusInput) { in.Title = parley.Some("  ") }, "title", "must not be empty"},
		"PriorityAtLimit": {func(in *parley.CorpusInput) { in.Priority = parley.Some(parley.MaxCorpusPriority) }, "", ""},
		"PriorityPast":    {func(in *parley.CorpusInput) { in.Priority = parley.Some(parley.MaxCorpusPriority + 1) }, "priority", "between 0 and 100"},
		"NullActive":      {func(in *parley.CorpusInput) { in.IsActive = parley.Opt[bool]{Set: true, Null: true} }, "isActive", "must not be null"},
		"BadLocale":       {func(in *parley.CorpusInput) { in.Locale = parley.Some("french") }, "locale", "language code"},
		"BadSourceURL":    {func(in *parley.CorpusInput) { in.SourceURL = parley.Some("ftp://x") }, "sourceUrl", "absolute URL"},
		"RepeatedTags": {func(in *parley.CorpusInput) {
			in.Tags = parley.Some(strings.Split(strings.Repeat("a,", 20)+"b,c", ","))
		}, "", ""},
		"UnknownSegment": {func(in *parley.CorpusInput) { in.Segment = parley.Some("blog") }, "segmentSlug", `"blog" is not the slug`},
		"UnknownVariant": {func(in *parley.CorpusInput) { in.Segment, in.SegmentField = parley.Some("blog"), "segment" }, "segment", `"blog" is not the slug`},
		"ReadProblemFirst": {func(in *parley.CorpusInput) {
			in.Problems = parley.FieldErrors{"priority": "must be an integer"}
			in.Priority = parley.Some(-1)
		}, "priority", "must be an integer"},
	} {
		in := ok()
		c.edit(&in)
		_, errs := manage.CheckCorpus(in, true, segments)
		if c.field == "" {
			if len(errs) != 0 {
				t.Errorf("%s: %v", name, errs)
			}
			continue
		}
		if !strings.Contains(errs[c.field], c.problem) {
			t.Errorf("%s: %s is %q, want %q (all: %v)", name, c.field, errs[c.field], c.problem, errs)
		}
	}

	in := ok()
	in.Segment, in.Locale, in.Summary = parley.Some("shop"), parley.Some("FR-ca"), parley.Some(" ")
	in.Tags = parley.Some([]string{" a ", "a", "", "b"})
	w, errs := manage.CheckCorpus(in, true, segments)
	if len(errs) != 0 || w.Title.Value != "Opening hours" || w.SegmentID.Value != "seg-1" || w.Locale.Value != "fr-ca" ||
		!w.Summary.Null || strings.Join(w.Tags.Value, ",") != "a,b" {
		t.Errorf("normalised write %+v (%v)", w, errs)
	}
	// Too many tags after deduplication.
	in = ok()
	tags := make([]string, parley.MaxTags+1)
	for i := range tags {
		tags[i] = strings.Repeat("x", i+1)
	}
	in.Tags = parley.Some(tags)
	if _, errs := manage.CheckCorpus(in, true, segments); !strings.Contains(errs["tags"], "at most 20") {
		t.Errorf("%d tags: %v", len(tags), errs)
	}
	// An update needs neither title nor content; "" clears the segment.
	w, errs = manage.CheckCorpus(parley.CorpusInput{Segment: parley.Some("")}, false, segments)
	if len(errs) != 0 || !w.SegmentID.Set || !w.SegmentID.Null {
		t.Errorf("update clearing the segment: %+v %v", w, errs)
	}
}
