package manage

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/accounts"
	"github.com/parley/parley/db/audit"
)

// Plans and bot seats: the operator sets them (the operator API, `parley
// tenant plan`) and reads every tenant's usage; a tenant reads its own (the
// "Plan and usage" page, read_plan_usage). One operation each, so that the
// surfaces cannot drift.

// MaxBotSeats is the most bot seats a tenant may have: 1,000 seats are a
// million conversations a month on top of the plan's.
const MaxBotSeats = 1000

// The operator's listing of tenants: page is 1-based, limit between 1 and
// MaxTenantsPage, DefaultTenantsPage by default.
const (
	DefaultTenantsPage = 20
	MaxTenantsPage     = 100
)

// PlanInput is a change of a tenant's plan, its bot seats or both, as a
// surface read it: what is not Set stays. Problems holds what the surface
// could not read (a wrong type), reported first.
type PlanInput struct {
	Plan     parley.Opt[string] `json:"plan"`
	BotSeats parley.Opt[int]    `json:"botSeats"`
	Problems parley.FieldErrors `json:"-"`
}

// Check says what is wrong with in: at least one field, a plan of the plan
// table, seats between 0 and MaxBotSeats.
func (in PlanInput) Check() parley.FieldErrors {
	errs := in.Problems.Copy()
	if !in.Plan.Set && !in.BotSeats.Set {
		errs.Add("plan", "is required unless botSeats is sent: one of "+strings.Join(parley.PlanNames(), ", "))
	}
	if _, bad := errs["plan"]; !bad && in.Plan.Set {
		if _, ok := parley.PlanByName(in.Plan.Value); in.Plan.Null || !ok {
			errs.Add("plan", "must be one of "+strings.Join(parley.PlanNames(), ", "))
		}
	}
	if _, bad := errs["botSeats"]; !bad && in.BotSeats.Set {
		if in.BotSeats.Null || in.BotSeats.Value < 0 || in.BotSeats.Value > MaxBotSeats {
			errs.Add("botSeats", fmt.Sprintf("must be an integer between 0 and %d", MaxBotSeats))
		}
	}
	return errs
}

// PlanUsage is a tenant's plan, what it includes, its bot seats and this
// period's usage against its limit. Daily holds the conversations started
// each day of the period so far (index 0 is PeriodStart's day), only when
// one tenant is read.
type PlanUsage struct {
	accounts.TenantPlan
	Info               parley.Plan
	ConversationsLimit int
	PeriodStart        time.Time
	PeriodEnd          time.Time
	Daily              []int
}

// AtLimit says whether the period's new conversations are refused.
func (u PlanUsage) AtLimit() bool { return u.Conversations >= u.ConversationsLimit }

func planUsage(p accounts.TenantPlan, now time.Time) PlanUsage {
	t := parley.Tenant{Plan: p.Plan, BotSeats: p.BotSeats}
	start := db.MonthStart(now)
	return PlanUsage{TenantPlan: p, Info: t.PlanInfo(), PeriodStart: start, PeriodEnd: start.AddDate(0, 1, 0),
		ConversationsLimit: t.ConversationsLimit()}
}

// TenantPlans is one page of every tenant's plan and usage this period, by
// slug, and the number of tenants: the operator's view. A page or limit
// out of range is a problem naming it.
func (s *Service) TenantPlans(ctx context.Context, page, limit int, now time.Time) ([]PlanUsage, int, error) {
	errs := parley.FieldErrors{}
	parley.CheckCount(errs, "page", page, 1, 1_000_000)
	parley.CheckCount(errs, "limit", limit, 1, MaxTenantsPage)
	if err := parley.ParamsError(errs); err != nil {
		return nil, 0, err
	}
	rows, total, err := s.DB.TenantPlans(ctx, db.MonthStart(now), limit, (page-1)*limit)
	if err != nil {
		return nil, 0, err
	}
	out := make([]PlanUsage, len(rows))
	for i, r := range rows {
		out[i] = planUsage(r, now)
	}
	return out, total, nil
}

// TenantPlan is the plan and usage of the tenant slug this period, with
// its conversations per day; an unknown slug is not found.
func (s *Service) TenantPlan(ctx context.Context, slug string, now time.Time) (PlanUsage, error) {
	p, err := s.DB.TenantPlanBySlug(ctx, slug, db.MonthStart(now))
	if err != nil {
		return PlanUsage{}, err
	}
	u := planUsage(p, now)
	if u.Daily, err = s.DB.DailyConversations(ctx, p.ID, u.PeriodStart, now); err != nil {
		return PlanUsage{}, err
	}
	return u, nil
}

// SetPlan changes the plan, the bot seats or both of the tenant slug, as
// the actor ctx carries (audit.WithActor; the operator when it carries
// none), in one transaction with its audit entry, and returns the tenant's
// plan and usage after. The next chat message is held to the new limit,
// on every instance. A change to what the tenant has already records
// nothing.
func (s *Service) SetPlan(ctx context.Context, slug string, in PlanInput, now time.Time) (PlanUsage, error) {
	if err := in.Check().Err(); err != nil {
		return PlanUsage{}, err
	}
	actor, ok := audit.ActorFrom(ctx)
	if !ok {
		actor = audit.Actor{Kind: audit.ActorOperator, Name: "Operator"}
	}
	if _, err := s.DB.SetTenantPlan(ctx, slug, in.Plan.Ptr(), in.BotSeats.Ptr(), db.MonthStart(now), actor); err != nil {
		return PlanUsage{}, err
	}
	return s.TenantPlan(ctx, slug, now)
}
