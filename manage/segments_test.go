package manage_test

import (
	"strings"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/manage"
)

// CheckSegment: the segment's rules at their limits and one past, and the
// problems read by the surface first.
func TestCheckSegment(t *testing.T) {
	t.Parallel()
	starters := func(n int) parley.Opt[[]parley.Starter] {
		st := make([]parley.Starter, n)
		for i := range st {
			st[i].Text = " Question "
		}
		return parley.Some(st)
	}
	for name, c := range map[string]struct {
		in      parley.SegmentInput
		field   string
		problem string
	}{
		"NameAtLimit":     {parley.SegmentInput{Name: parley.Some(strings.Repeat("n", parley.MaxSegmentName)), SystemPrompt: parley.Some("p")}, "", ""},
		"NamePastLimit":   {parley.SegmentInput{Name: parley.Some(strings.Repeat("n", parley.MaxSegmentName+1)), SystemPrompt: parley.Some("p")}, "name", "at most 255"},
		"NoPrompt":        {parley.SegmentInput{Name: parley.Some("Sales")}, "systemPrompt", "is required"},
		"BadSlug":         {parley.SegmentInput{Name: parley.Some("Sales"), SystemPrompt: parley.Some("p"), Slug: parley.Some("Sales Team")}, "slug", "lowercase"},
		"StartersAtLimit": {parley.SegmentInput{Name: parley.Some("Sales"), SystemPrompt: parley.Some("p"), ConversationStarters: starters(parley.MaxStarters)}, "", ""},
		"StartersPast":    {parley.SegmentInput{Name: parley.Some("Sales"), SystemPrompt: parley.Some("p"), ConversationStarters: starters(parley.MaxStarters + 1)}, "conversationStarters", "at most 4"},
		"EmptyForm":       {parley.SegmentInput{Name: parley.Some("Sales"), SystemPrompt: parley.Some("p"), FormConfig: parley.Some(&parley.FormConfig{Enabled: true})}, "formConfig", "at least one field"},
		"ReadProblem":     {parley.SegmentInput{Name: parley.Some("Sales"), SystemPrompt: parley.Some("p"), Problems: parley.FieldErrors{"isActive": "must be a boolean"}}, "isActive", "must be a boolean"},
	} {
		w, errs := manage.CheckSegment(c.in, true)
		if c.field == "" {
			if len(errs) != 0 {
				t.Errorf("%s: %v", name, errs)
			}
			if st := w.ConversationStarters.Value; len(st) > 0 && st[0].Text != "Question" {
				t.Errorf("%s: starter not trimmed: %q", name, st[0].Text)
			}
			continue
		}
		if !strings.Contains(errs[c.field], c.problem) {
			t.Errorf("%s: %s is %q, want %q (all: %v)", name, c.field, errs[c.field], c.problem, errs)
		}
	}
	// An update needs neither name nor prompt, but cannot clear the slug.
	if _, errs := manage.CheckSegment(parley.SegmentInput{IsActive: parley.Some(false)}, false); len(errs) != 0 {
		t.Errorf("partial update: %v", errs)
	}
	if _, errs := manage.CheckSegment(parley.SegmentInput{Slug: parley.Opt[string]{Set: true, Null: true}}, false); errs["slug"] != "must not be null" {
		t.Errorf("null slug on update: %v", errs)
	}
}
