package agent

import (
	"slices"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/mcpclient"
	"github.com/parley/parley/agent/tools"
)

// TurnTools is what the enrichment chain assembles before each answer: the
// tools the model is offered for this turn.
type TurnTools struct {
	// Tools are the tenant's tools offered, in the tenant's order.
	Tools []parley.Tool
	// Explore offers the synthetic EXPLORE_CORPUS tool.
	Explore bool
	// OTP offers SEND_VERIFICATION_CODE and VERIFY_VISITOR_CODE.
	OTP bool
	// Challenge offers VERIFY_EXTERNAL_CHALLENGE for the context webhook's
	// challenge.
	Challenge *tools.Challenge
	// Payment offers COLLECT_PAYMENT.
	Payment bool
	// Calendar offers CHECK_AVAILABILITY (with or without a BOOK_MEETING
	// tool) and runs the BOOK_MEETING tools kept, through the tenant's
	// calendar connector.
	Calendar bool
	// MCP are the tenant's MCP server's tools offered (MCP_PROXY), named
	// for the model.
	MCP []MCPOffer
	// Skipped lists tools left out by a step, with why, for the logs.
	Skipped []string
}

// EnrichFacts is what the steps decide from, read before the chain runs.
type EnrichFacts struct {
	SegmentID string
	// Channel is the conversation's (parley.ChannelWeb, ChannelVoice...).
	Channel string
	// Payment: the tenant's payment connector is active.
	Payment bool
	// MemoryAllowed: the visitor is known and may have memory written
	// (see the chat handler's visitor rules).
	MemoryAllowed bool
	// HasProducts: the tenant has at least one active product.
	HasProducts bool
	// HasSummaries: knowledge beyond the prompt is available through
	// EXPLORE_CORPUS (Prompt.ExploreCorpus).
	HasSummaries bool
	// OTP: the tenant's visitorAuthMode is otp or all, the operator set up
	// mail, and the visitor is not verified yet.
	OTP bool
	// Challenge is the context webhook's challenge, for a visitor not
	// verified yet.
	Challenge *tools.Challenge
	// Calendar: the tenant's calendar connector is set up (and the engine
	// can reach it).
	Calendar bool
	// MCPTools are the tools the tenant's own MCP server lists (nil when
	// the plan has no MCP, no server is saved, or it could not be listed);
	// MCPMaxTools is how many of them may be offered.
	MCPTools    []mcpclient.Tool
	MCPMaxTools int
}

// EnrichStep is one named step of the chain.
type EnrichStep struct {
	Name  string
	Apply func(*TurnTools, EnrichFacts)
}

// EnrichmentChain is the spec's chain of steps run before each answer, in
// the spec's order, holding the steps this service has: dbTools,
// enrichCalendar, enrichPayment, enrichMCP, enrichProducts, enrichCorpus,
// enrichOTP, then enrichChallenge (the context webhook's second factor,
// which the spec's list leaves out), and last enrichChannel, which keeps to
// what the conversation's channel can use whatever the steps before it
// added.
var EnrichmentChain = []EnrichStep{
	{Name: "dbTools", Apply: enrichDBTools},
	{Name: "enrichCalendar", Apply: enrichCalendar},
	{Name: "enrichPayment", Apply: enrichPayment},
	{Name: "enrichMCP", Apply: enrichMCP},
	{Name: "enrichProducts", Apply: enrichProducts},
	{Name: "enrichCorpus", Apply: enrichCorpus},
	{Name: "enrichOTP", Apply: enrichOTP},
	{Name: "enrichChallenge", Apply: enrichChallenge},
	{Name: "enrichChannel", Apply: enrichChannel},
}

// VoiceToolTypes are the only tool types a voice call is offered (spec,
// Voice): never COLLECT_PAYMENT, nor any other. CHECK_AVAILABILITY is the
// calendar connector's: offered through TurnTools.Calendar, which
// enrichChannel keeps, on a call as in chat whenever the connector is
// active.
var VoiceToolTypes = []string{parley.ToolSubmitForm, parley.ToolBookMeeting, tools.CheckAvailabilityType, parley.ToolEscalateToHuman}

// enrichChannel keeps, on a voice call, the tools of VoiceToolTypes only,
// and drops the verification tools: a caller has no inbox to read a code
// from, and no context webhook vouches for a phone call. The knowledge
// base's explore_corpus stays: voice answers from the same corpus as chat.
// It filters TurnTools.Tools: a step that offers a tool some other way (a
// flag of TurnTools) must leave it off when f.Channel is voice.
func enrichChannel(tt *TurnTools, f EnrichFacts) {
	if f.Channel != parley.ChannelVoice {
		return
	}
	dropTools(tt, func(t parley.Tool) string {
		if slices.Contains(VoiceToolTypes, t.Type) {
			return ""
		}
		return t.Type + " is not offered on a voice call"
	})
	if tt.Payment || len(tt.MCP) > 0 {
		tt.Skipped = append(tt.Skipped, "collect_payment and the MCP server's tools: not offered on a voice call")
	}
	tt.OTP, tt.Challenge, tt.Payment, tt.MCP = false, nil, false, nil
}

// Enrich runs the chain over the tenant's tools.
func Enrich(tenantTools []parley.Tool, facts EnrichFacts) TurnTools {
	tt := TurnTools{Tools: tenantTools}
	for _, step := range EnrichmentChain {
		step.Apply(&tt, facts)
	}
	return tt
}

// enrichDBTools keeps the tenant's active tools that apply to the segment
// (a tool with no segment applies to all), and REMEMBER_FACT only for a
// visitor whose memory may be written.
func enrichDBTools(tt *TurnTools, f EnrichFacts) {
	var kept []parley.Tool
	for _, t := range tt.Tools {
		switch {
		case !t.IsActive:
		case t.SegmentID != nil && *t.SegmentID != f.SegmentID:
		case t.Type == parley.ToolRememberFact && !f.MemoryAllowed:
			tt.Skipped = append(tt.Skipped, t.Name+": no visitor memory to write to")
		default:
			kept = append(kept, t)
		}
	}
	tt.Tools = kept
}

// enrichCalendar keeps the BOOK_MEETING tools only with the tenant's
// calendar connector, and adds CHECK_AVAILABILITY whenever the connector is
// active (the spec's rule), a booking tool or not: a visitor may ask when
// the business is free before anything can be booked. Its slots are those
// of the turn's booking tool when there is one (what it books), else the
// connector's own (ConnectorMeeting).
func enrichCalendar(tt *TurnTools, f EnrichFacts) {
	if !f.Calendar {
		dropTools(tt, func(t parley.Tool) string {
			if t.Type == parley.ToolBookMeeting {
				return "no calendar connector"
			}
			return ""
		})
	}
	tt.Calendar = f.Calendar
}

// enrichPayment adds COLLECT_PAYMENT when the payment connector is active,
// never on the voice channel (the spec: no payment during calls).
func enrichPayment(tt *TurnTools, f EnrichFacts) {
	switch {
	case !f.Payment:
	case f.Channel == parley.ChannelVoice:
		tt.Skipped = append(tt.Skipped, "collect_payment: never offered on the voice channel")
	default:
		tt.Payment = true
	}
}

// enrichMCP offers the tools of the tenant's own MCP server, at most
// MCPMaxTools of them, in the server's order, as mcp_<name>.
func enrichMCP(tt *TurnTools, f EnrichFacts) {
	offers, skipped := MCPOffers(f.MCPTools, f.MCPMaxTools)
	tt.MCP = offers
	tt.Skipped = append(tt.Skipped, skipped...)
}

// enrichProducts offers RECOMMEND_PRODUCT only when there is a catalog to
// recommend from.
func enrichProducts(tt *TurnTools, f EnrichFacts) {
	if f.HasProducts {
		return
	}
	dropTools(tt, func(t parley.Tool) string {
		if t.Type == parley.ToolRecommendProduct {
			return "the catalog has no active product"
		}
		return ""
	})
}

// dropTools leaves out of tt.Tools each tool for which why gives a reason,
// listing it in Skipped with the reason. The tools are copied only when one
// goes: the steps run at every turn, and mostly drop nothing.
func dropTools(tt *TurnTools, why func(parley.Tool) string) {
	var kept []parley.Tool
	dropped := false
	for i, t := range tt.Tools {
		reason := why(t)
		switch {
		case reason != "":
			if !dropped {
				kept, dropped = append(make([]parley.Tool, 0, len(tt.Tools)-1), tt.Tools[:i]...), true
			}
			tt.Skipped = append(tt.Skipped, t.Name+": "+reason)
		case dropped:
			kept = append(kept, t)
		}
	}
	if dropped {
		tt.Tools = kept
	}
}

// enrichCorpus adds EXPLORE_CORPUS when the knowledge base holds more than
// the prompt gives.
func enrichCorpus(tt *TurnTools, f EnrichFacts) {
	tt.Explore = f.HasSummaries
}

// enrichOTP adds the two code tools under visitorAuthMode otp or all, when
// mail can be sent and the visitor is not verified yet.
func enrichOTP(tt *TurnTools, f EnrichFacts) {
	tt.OTP = f.OTP
}

// enrichChallenge adds VERIFY_EXTERNAL_CHALLENGE when the context webhook's
// answer asks for a challenge.
func enrichChallenge(tt *TurnTools, f EnrichFacts) {
	tt.Challenge = f.Challenge
}

// HasToolType reports whether tools hold an active tool of type typ.
func HasToolType(tools []parley.Tool, typ string) bool {
	for _, t := range tools {
		if t.IsActive && t.Type == typ {
			return true
		}
	}
	return false
}
