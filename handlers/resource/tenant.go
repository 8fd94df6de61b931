package resource

import (
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
)

// StatsJSON is the tenant's usage against its plan (GET /tenants/{slug}/stats and `stats` of GET /tenants/{slug}).
type StatsJSON struct {
	Plan               string    `json:"plan"`
	ConversationsUsed  int       `json:"conversationsUsed"`
	ConversationsLimit int       `json:"conversationsLimit"`
	SegmentsCount      int       `json:"segmentsCount"`
	SegmentsLimit      int       `json:"segmentsLimit"`
	CorpusCount        int       `json:"corpusCount"`
	CorpusLimit        int       `json:"corpusLimit"`
	APITokensCount     int       `json:"apiTokensCount"`
	PeriodStart        time.Time `json:"periodStart"`
	PeriodEnd          time.Time `json:"periodEnd"`
}

func NewStatsJSON(t parley.Tenant, u db.TenantStats) StatsJSON {
	plan := t.PlanInfo()
	return StatsJSON{
		Plan: t.Plan, ConversationsUsed: u.ConversationsUsed, ConversationsLimit: t.ConversationsLimit(),
		SegmentsCount: u.Segments, SegmentsLimit: plan.SegmentsLimit, CorpusCount: u.CorpusEntries, CorpusLimit: plan.CorpusLimit,
		APITokensCount: u.APITokens, PeriodStart: u.PeriodStart, PeriodEnd: u.PeriodEnd,
	}
}
