package resource

import (
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/manage"
)

// PlanUsageJSON is a tenant's plan, what it includes, its bot seats and
// this period's usage against its limit: an item of the operator's
// GET /operator/tenants, GET /operator/tenants/{slug} and the answer of
// its plan change (with daily), and the MCP tool read_plan_usage (which
// adds usage, the tenant's other counts).
type PlanUsageJSON struct {
	Slug                    string           `json:"slug"`
	Name                    string           `json:"name"`
	Plan                    string           `json:"plan"`
	Features                PlanFeaturesJSON `json:"features"`
	Limits                  PlanLimitsJSON   `json:"limits"`
	BotSeats                int              `json:"botSeats"`
	ConversationsPerBotSeat int              `json:"conversationsPerBotSeat"`
	ConversationsLimit      int              `json:"conversationsLimit"`
	ConversationsUsed       int              `json:"conversationsUsed"`
	AtLimit                 bool             `json:"atLimit"`
	Members                 int              `json:"members"`
	PeriodStart             time.Time        `json:"periodStart"`
	PeriodEnd               time.Time        `json:"periodEnd"`
	Daily                   []DayCountJSON   `json:"daily,omitempty"`
}

// PlanFeaturesJSON is what a plan turns on.
type PlanFeaturesJSON struct {
	Widget bool `json:"widget"`
	MCP    bool `json:"mcp"`
	Voice  bool `json:"voice"`
}

// PlanLimitsJSON is a plan's limits: its monthly conversations before bot
// seats, segments, knowledge-base entries and team members.
type PlanLimitsJSON struct {
	ConversationsPerMonth int `json:"conversationsPerMonth"`
	Segments              int `json:"segments"`
	CorpusEntries         int `json:"corpusEntries"`
	Members               int `json:"members"`
}

// DayCountJSON is the conversations started on one day (UTC) of the period.
type DayCountJSON struct {
	Date          string `json:"date"`
	Conversations int    `json:"conversations"`
}

// NewPlanUsageJSON is u's representation.
func NewPlanUsageJSON(u manage.PlanUsage) PlanUsageJSON {
	out := PlanUsageJSON{
		Slug: u.Slug, Name: u.Name, Plan: u.Plan,
		Features: PlanFeaturesJSON{Widget: u.Info.Widget, MCP: u.Info.MCP, Voice: u.Info.Voice},
		Limits: PlanLimitsJSON{ConversationsPerMonth: u.Info.ConversationsLimit, Segments: u.Info.SegmentsLimit,
			CorpusEntries: u.Info.CorpusLimit, Members: u.Info.MembersLimit},
		BotSeats: u.BotSeats, ConversationsPerBotSeat: parley.ConversationsPerBotSeat,
		ConversationsLimit: u.ConversationsLimit, ConversationsUsed: u.Conversations, AtLimit: u.AtLimit(),
		Members: u.Members, PeriodStart: u.PeriodStart, PeriodEnd: u.PeriodEnd,
	}
	for i, n := range u.Daily {
		out.Daily = append(out.Daily, DayCountJSON{Date: u.PeriodStart.AddDate(0, 0, i).Format(time.DateOnly), Conversations: n})
	}
	return out
}
