package agent

import (
	"slices"
	"strings"
	"testing"

	"github.com/parley/parley"
)

func TestEnrichmentChain(t *testing.T) {
	t.Parallel()
	var names []string
	for _, s := range EnrichmentChain {
		names = append(names, s.Name)
	}
	// The spec's order, with the steps this service has, and the context
	// webhook's challenge last.
	if want := []string{"dbTools", "enrichMCP", "enrichProducts", "enrichCorpus", "enrichOTP", "enrichChallenge"}; !slices.Equal(names, want) {
		t.Fatalf("chain %v, want %v", names, want)
	}

	seg, other := "seg-1", "seg-2"
	tools := []parley.Tool{
		{Name: "Form", Type: ToolSubmitForm, IsActive: true},
		{Name: "Segment form", Type: ToolSubmitForm, IsActive: true, SegmentID: &seg},
		{Name: "Other form", Type: ToolSubmitForm, IsActive: true, SegmentID: &other},
		{Name: "Off", Type: ToolGenerateQuote, IsActive: false},
		{Name: "Memory", Type: ToolRememberFact, IsActive: true},
		{Name: "Catalog", Type: ToolRecommendProduct, IsActive: true},
	}
	kept := func(tt TurnTools) string {
		var n []string
		for _, t := range tt.Tools {
			n = append(n, t.Name)
		}
		return strings.Join(n, ",")
	}
	for _, tc := range []struct {
		facts   EnrichFacts
		want    string
		explore bool
		skipped int
	}{
		{EnrichFacts{SegmentID: seg}, "Form,Segment form", false, 2},
		{EnrichFacts{SegmentID: other, MemoryAllowed: true}, "Form,Other form,Memory", false, 1},
		{EnrichFacts{SegmentID: seg, MemoryAllowed: true, HasProducts: true, HasSummaries: true}, "Form,Segment form,Memory,Catalog", true, 0},
	} {
		tt := Enrich(tools, tc.facts)
		if got := kept(tt); got != tc.want || tt.Explore != tc.explore || len(tt.Skipped) != tc.skipped {
			t.Errorf("%+v: kept %q explore %v skipped %q; want %q %v and %d skipped", tc.facts, got, tt.Explore, tt.Skipped, tc.want, tc.explore, tc.skipped)
		}
	}
	if len(tools) != 6 || tools[2].Name != "Other form" {
		t.Errorf("the chain changed the tenant's tool list: %v", tools)
	}
}
