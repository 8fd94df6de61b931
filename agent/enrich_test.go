package agent

import (
	"slices"
	"strings"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/mcpclient"
	"github.com/parley/parley/agent/tools"
)

func TestEnrichmentChain(t *testing.T) {
	t.Parallel()
	var names []string
	for _, s := range EnrichmentChain {
		names = append(names, s.Name)
	}
	// The spec's order, with the steps this service has, and the context
	// webhook's challenge, and last the channel's filter.
	if want := []string{"dbTools", "enrichCalendar", "enrichPayment", "enrichMCP", "enrichProducts", "enrichCorpus", "enrichOTP", "enrichChallenge", "enrichChannel"}; !slices.Equal(names, want) {
		t.Fatalf("chain %v, want %v", names, want)
	}

	seg, other := "seg-1", "seg-2"
	tools := []parley.Tool{
		{Name: "Form", Type: parley.ToolSubmitForm, IsActive: true},
		{Name: "Segment form", Type: parley.ToolSubmitForm, IsActive: true, SegmentID: &seg},
		{Name: "Other form", Type: parley.ToolSubmitForm, IsActive: true, SegmentID: &other},
		{Name: "Off", Type: parley.ToolGenerateQuote, IsActive: false},
		{Name: "Memory", Type: parley.ToolRememberFact, IsActive: true},
		{Name: "Catalog", Type: parley.ToolRecommendProduct, IsActive: true},
		{Name: "Demo", Type: parley.ToolBookMeeting, IsActive: true, SegmentID: &other},
	}
	kept := func(tt TurnTools) string {
		var n []string
		for _, t := range tt.Tools {
			n = append(n, t.Name)
		}
		return strings.Join(n, ",")
	}
	for _, tc := range []struct {
		facts    EnrichFacts
		want     string
		explore  bool
		calendar bool
		skipped  int
	}{
		{EnrichFacts{SegmentID: seg}, "Form,Segment form", false, false, 2},
		// BOOK_MEETING only with the calendar connector; the connector adds
		// CHECK_AVAILABILITY, with a booking tool or without one (the
		// segment seg has none).
		{EnrichFacts{SegmentID: other, MemoryAllowed: true}, "Form,Other form,Memory", false, false, 2},
		{EnrichFacts{SegmentID: other, MemoryAllowed: true, Calendar: true}, "Form,Other form,Memory,Demo", false, true, 1},
		{EnrichFacts{SegmentID: seg, MemoryAllowed: true, HasProducts: true, HasSummaries: true, Calendar: true}, "Form,Segment form,Memory,Catalog", true, true, 0},
	} {
		tt := Enrich(tools, tc.facts)
		if got := kept(tt); got != tc.want || tt.Explore != tc.explore || tt.Calendar != tc.calendar || len(tt.Skipped) != tc.skipped {
			t.Errorf("%+v: kept %q explore %v calendar %v skipped %q; want %q %v %v and %d skipped", tc.facts, got, tt.Explore, tt.Calendar, tt.Skipped,
				tc.want, tc.explore, tc.calendar, tc.skipped)
		}
	}
	if len(tools) != 7 || tools[2].Name != "Other form" {
		t.Errorf("the chain changed the tenant's tool list: %v", tools)
	}
}

// The payment step offers COLLECT_PAYMENT while the connector is active, on
// every channel but voice.
func TestEnrichPayment(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		facts EnrichFacts
		want  bool
	}{
		{EnrichFacts{Channel: parley.ChannelWeb, Payment: true}, true},
		{EnrichFacts{Channel: parley.ChannelAgent, Payment: true}, true},
		{EnrichFacts{Channel: parley.ChannelAPI, Payment: true}, true},
		{EnrichFacts{Channel: parley.ChannelVoice, Payment: true}, false},
		{EnrichFacts{Channel: parley.ChannelWeb}, false},
	} {
		if got := Enrich(nil, tc.facts).Payment; got != tc.want {
			t.Errorf("%+v: payment offered %v, want %v", tc.facts, got, tc.want)
		}
	}
}

// TestEnrichVoiceChannel: a voice call keeps SUBMIT_FORM, BOOK_MEETING,
// CHECK_AVAILABILITY and ESCALATE_TO_HUMAN, whatever steps before it
// added, and no verification tool; explore_corpus stays. Other channels
// are left alone.
func TestEnrichVoiceChannel(t *testing.T) {
	t.Parallel()
	tenantTools := []parley.Tool{
		{Name: "Form", Type: parley.ToolSubmitForm, IsActive: true},
		{Name: "Meeting", Type: parley.ToolBookMeeting, IsActive: true},
		{Name: "Slots", Type: "CHECK_AVAILABILITY", IsActive: true},
		{Name: "Human", Type: parley.ToolEscalateToHuman, IsActive: true},
		{Name: "Pay", Type: "COLLECT_PAYMENT", IsActive: true},
		{Name: "Quote", Type: parley.ToolGenerateQuote, IsActive: true},
		{Name: "Memory", Type: parley.ToolRememberFact, IsActive: true},
		{Name: "Catalog", Type: parley.ToolRecommendProduct, IsActive: true},
	}
	facts := EnrichFacts{MemoryAllowed: true, HasProducts: true, HasSummaries: true, OTP: true, Challenge: &tools.Challenge{Prompt: "x"},
		Calendar: true, Payment: true, MCPTools: []mcpclient.Tool{{Name: "lookup_order"}}, MCPMaxTools: 5}
	web := Enrich(tenantTools, facts)
	if len(web.Tools) != len(tenantTools) || !web.OTP || web.Challenge == nil || !web.Payment || len(web.MCP) != 1 || !web.Calendar {
		t.Errorf("web chat lost tools: %+v", web)
	}
	facts.Channel = parley.ChannelVoice
	voice := Enrich(tenantTools, facts)
	var names []string
	for _, tl := range voice.Tools {
		names = append(names, tl.Name)
	}
	if got := strings.Join(names, ","); got != "Form,Meeting,Slots,Human" || voice.OTP || voice.Challenge != nil || !voice.Explore || len(voice.Skipped) != 6 ||
		voice.Payment || voice.MCP != nil || !voice.Calendar {
		t.Errorf("voice: tools %q otp %v challenge %v explore %v payment %v mcp %v calendar %v skipped %q", got, voice.OTP, voice.Challenge, voice.Explore,
			voice.Payment, voice.MCP, voice.Calendar, voice.Skipped)
	}
}

// A step that drops nothing keeps the tools as they are, without a copy;
// one that drops a tool copies the others, leaving the tenant's list alone.
func TestDropToolsCopiesOnlyWhenOneGoes(t *testing.T) {
	tools := []parley.Tool{{Name: "a", Type: parley.ToolSubmitForm}, {Name: "b", Type: parley.ToolRecommendProduct}, {Name: "c", Type: parley.ToolSubmitForm}}
	tt := TurnTools{Tools: tools}
	dropTools(&tt, func(parley.Tool) string { return "" })
	if &tt.Tools[0] != &tools[0] || len(tt.Tools) != 3 || tt.Skipped != nil {
		t.Errorf("nothing dropped: copied or changed: %v %v", tt.Tools, tt.Skipped)
	}
	enrichProducts(&tt, EnrichFacts{})
	if len(tt.Tools) != 2 || tt.Tools[0].Name != "a" || tt.Tools[1].Name != "c" || &tt.Tools[0] == &tools[0] {
		t.Errorf("product tool dropped: %v", tt.Tools)
	}
	if tools[1].Name != "b" || len(tt.Skipped) != 1 || tt.Skipped[0] != "b: the catalog has no active product" {
		t.Errorf("the tenant's list changed, or skipped %v", tt.Skipped)
	}
	if n := testing.AllocsPerRun(100, func() {
		tt := TurnTools{Tools: tools}
		enrichChannel(&tt, EnrichFacts{Channel: parley.ChannelWeb})
		enrichCalendar(&tt, EnrichFacts{Calendar: true})
		enrichProducts(&tt, EnrichFacts{HasProducts: true})
	}); n != 0 {
		t.Errorf("%v allocations where nothing is dropped", n)
	}
}
