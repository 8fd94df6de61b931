package accounts

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/audit"
	"github.com/parley/parley/db/internal/pgbase"
)

// TenantPlan is a tenant's plan and bot seats with what it used this
// period: what the operator reads of every tenant, and the tenant reads of
// itself (the "Plan and usage" page, read_plan_usage). Conversations is
// the period's count the monthly limit is checked against
// (conversation_usage), Members the places its team takes: members and
// invitations waiting (as Invite counts them against the plan's limit).
type TenantPlan struct {
	ID            string
	Slug          string
	Name          string
	Plan          string
	BotSeats      int
	Conversations int
	Members       int
}

// ETag is the ETag of the tenant's plan and bot seats (GET
// /operator/tenants/{slug}, PUT /operator/tenants/{slug}/plan): not of its
// usage, which moves with every conversation.
func (p TenantPlan) ETag() string {
	return pgbase.ETag(struct {
		ID, Plan string
		BotSeats int
	}{p.ID, p.Plan, p.BotSeats})
}

// PlanChange is the result of SetTenantPlan: the tenant's plan and seats
// before and after.
type PlanChange struct {
	Before, After TenantPlan
}

// tenantPlanSelect reads TenantPlan's columns of the tenants t, the period
// starting at $1 (a date).
const tenantPlanSelect = `SELECT t.id, t.slug, t.name, t.plan, t.bot_seats,
	coalesce((SELECT u.count FROM conversation_usage u WHERE u.tenant_id = t.id AND u.month = $1), 0),
	(SELECT count(*) FROM tenant_members m WHERE m.tenant_id = t.id)
		+ (SELECT count(*) FROM invitations i WHERE i.tenant_id = t.id AND i.accepted_at IS NULL
			AND i.revoked_at IS NULL AND i.expires_at > now())
	FROM tenants t`

func scanTenantPlan(row pgx.CollectableRow) (TenantPlan, error) {
	var p TenantPlan
	err := row.Scan(&p.ID, &p.Slug, &p.Name, &p.Plan, &p.BotSeats, &p.Conversations, &p.Members)
	return p, err
}

// TenantPlans is one page of every tenant's plan and usage in the period
// starting at month, by slug: limit tenants after the first offset, and the
// number of tenants in all. The operator's view, across tenants.
func (a *Accounts) TenantPlans(ctx context.Context, month time.Time, limit, offset int) ([]TenantPlan, int, error) {
	var (
		total int
		plans []TenantPlan
	)
	// One snapshot for the count and the page, so that a tenant created
	// meanwhile is in both or in neither.
	err := pgx.BeginTxFunc(ctx, a.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM tenants`).Scan(&total); err != nil {
			return fmt.Errorf("counting tenants: %w", err)
		}
		rows, _ := tx.Query(ctx, tenantPlanSelect+` ORDER BY t.slug LIMIT $2 OFFSET $3`, month, limit, offset)
		var err error
		if plans, err = pgx.CollectRows(rows, scanTenantPlan); err != nil {
			return fmt.Errorf("listing tenants' plans: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return plans, total, nil
}

// TenantPlanBySlug is the plan and usage of the tenant slug in the period
// starting at month; an unknown slug is a not-found error.
func (a *Accounts) TenantPlanBySlug(ctx context.Context, slug string, month time.Time) (TenantPlan, error) {
	rows, _ := a.pool.Query(ctx, tenantPlanSelect+` WHERE t.slug = $2`, month, slug)
	p, err := pgx.CollectExactlyOneRow(rows, scanTenantPlan)
	if errors.Is(err, pgx.ErrNoRows) {
		return p, parley.Errorf(parley.KindNotFound, "Tenant not found")
	}
	if err != nil {
		return p, fmt.Errorf("reading the tenant's plan: %w", err)
	}
	return p, nil
}

// SetTenantPlan sets the plan (nil: kept) and bot seats (nil: kept) of the
// tenant slug, read and changed under its row's lock in one transaction with its audit entry (ActionPlanChanged, by actor, the plan
// and seats before and after in its details). The tenant's row changes, so
// its configuration version does (migration 00030): the next chat message
// of any instance reads the tenant afresh and is held to the new limit.
// Setting what the tenant has already changes and records nothing. Under an
// If-Match (pgbase.WithIfMatch) the plan and seats must be as the client
// read them (ETag), else nothing changes. The
// period's usage (month) is read with it. An unknown slug is a not-found
// error; the plan and seats are the caller's to check.
func (a *Accounts) SetTenantPlan(ctx context.Context, slug string, plan *string, seats *int, month time.Time, actor audit.Actor) (PlanChange, error) {
	var ch PlanChange
	err := pgx.BeginFunc(ctx, a.pool, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, tenantPlanSelect+` WHERE t.slug = $2 FOR UPDATE OF t`, month, slug)
		before, err := pgx.CollectExactlyOneRow(rows, scanTenantPlan)
		if errors.Is(err, pgx.ErrNoRows) {
			return parley.Errorf(parley.KindNotFound, "Tenant not found")
		}
		if err != nil {
			return fmt.Errorf("reading the tenant's plan: %w", err)
		}
		if err := pgbase.CheckIfMatch(ctx, before.ETag()); err != nil {
			return err
		}
		ch.Before, ch.After = before, before
		if plan != nil {
			ch.After.Plan = *plan
		}
		if seats != nil {
			ch.After.BotSeats = *seats
		}
		if ch.After == before {
			return nil // nothing changes: no new version, no entry
		}
		if _, err := tx.Exec(ctx, `UPDATE tenants SET plan = $2, bot_seats = $3, updated_at = now() WHERE id = $1`,
			before.ID, ch.After.Plan, ch.After.BotSeats); err != nil {
			return fmt.Errorf("setting the tenant's plan: %w", err)
		}
		return audit.RecordIn(ctx, tx, audit.Entry{TenantID: before.ID, Actor: actor, Action: audit.ActionPlanChanged,
			Target: before.Name, TargetID: before.ID, Details: map[string]any{
				"from": map[string]any{"plan": before.Plan, "botSeats": before.BotSeats},
				"to":   map[string]any{"plan": ch.After.Plan, "botSeats": ch.After.BotSeats},
			}})
	})
	return ch, err
}

// DailyConversations counts the tenant's conversations started each day
// (UTC) from from's day to to's, test chats left out: index 0 is from's
// day, the last to's. Days without one are 0.
func (a *Accounts) DailyConversations(ctx context.Context, tenantID string, from, to time.Time) ([]int, error) {
	from, to = from.UTC().Truncate(24*time.Hour), to.UTC()
	days := int(to.Sub(from).Hours()/24) + 1
	if days < 1 {
		return nil, nil
	}
	out := make([]int, days)
	rows, _ := a.pool.Query(ctx, `SELECT (date_trunc('day', created_at AT TIME ZONE 'UTC')::date - $2::date), count(*)
		FROM conversations WHERE tenant_id = $1 AND NOT is_test AND created_at >= $2 AND created_at < $3
		GROUP BY 1`, tenantID, from, from.AddDate(0, 0, days))
	var day, n int
	_, err := pgx.ForEachRow(rows, []any{&day, &n}, func() error {
		if day >= 0 && day < days {
			out[day] = n
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("counting the conversations per day: %w", err)
	}
	return out, nil
}
