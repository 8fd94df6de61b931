package resource

import (
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db/listing"
)

// statsWindowJSON is the window the stats were computed over, after the
// defaults and the one-year cap.
type statsWindowJSON struct {
	From        time.Time `json:"from"`
	To          time.Time `json:"to"`
	Granularity string    `json:"granularity"`
	Timezone    string    `json:"timezone"`
}

// ConversationStatsJSON is the answer of GET /tenants/{slug}/conversations/stats.
type ConversationStatsJSON struct {
	Window        statsWindowJSON           `json:"window"`
	Totals        listing.StatsTotals       `json:"totals"`
	Satisfaction  listing.StatsSatisfaction `json:"satisfaction"`
	Timeline      []listing.StatsBucket     `json:"timeline"`
	ByChannel     map[string]int            `json:"byChannel"`
	BySegment     map[string]int            `json:"bySegment"`
	ByStatus      map[string]int            `json:"byStatus"`
	ByVisitorType map[string]int            `json:"byVisitorType"`
	TopTools      []listing.StatsTool       `json:"topTools"`
	ByPage        []listing.StatsPage       `json:"byPage"`
	TopIntents    []listing.StatsIntent     `json:"topIntents"`
	AllTime       *listing.StatsAllTime     `json:"allTime,omitempty"`
	Resolution    listing.StatsResolution   `json:"resolution"`
}

// TenantLocation is the tenant's time zone, UTC when it does not load
// (the tenant update refuses such a name; this keeps an old row working).
func TenantLocation(t parley.Tenant) *time.Location {
	if loc, err := time.LoadLocation(t.Timezone); err == nil && t.Timezone != "" {
		return loc
	}
	return time.UTC
}

// NewConversationStatsJSON is the stats st as the stats answer them, with
// the window of q, their query, in loc.
func NewConversationStatsJSON(loc *time.Location, q listing.StatsQuery, st listing.ConversationStats) ConversationStatsJSON {
	out := ConversationStatsJSON{
		Window:       statsWindowJSON{From: q.Filter.From.In(loc), To: q.Filter.To.In(loc), Granularity: q.Granularity, Timezone: loc.String()},
		Totals:       st.Totals,
		Satisfaction: st.Satisfaction,
		Timeline:     st.Timeline, ByChannel: st.ByChannel, BySegment: st.BySegment, ByStatus: st.ByStatus,
		ByVisitorType: st.ByVisitorType, TopTools: st.TopTools, ByPage: st.ByPage, TopIntents: st.TopIntents, AllTime: st.AllTime,
	}
	if st.Resolution != nil {
		out.Resolution = *st.Resolution
	}
	return out
}
