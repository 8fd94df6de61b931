package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/audit"
	"github.com/parley/parley/handlers/resource"
	"github.com/parley/parley/manage"
)

// planFlags are tenant plan's flags, named by the fields of
// manage.PlanInput.
var planFlags = []flagField{{"plan", "--plan"}, {"botSeats", "--seats"}}

// tenantPlan sets a tenant's plan, its bot seats or both, as the operator
// (the operator API's PUT /operator/tenants/{slug}/plan runs the same
// operation), and prints the tenant's plan and usage after.
func tenantPlan(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("tenant plan", stderr)
	slug := fs.String("slug", "", "tenant slug")
	plan := fs.String("plan", "", "plan: "+strings.Join(parley.PlanNames(), ", ")+" (unset: kept)")
	seats := fs.String("seats", "", fmt.Sprintf("bot seats, 0 to %d, each %d more conversations a month (unset: kept)", manage.MaxBotSeats, parley.ConversationsPerBotSeat))
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *slug == "" {
		return errors.New("--slug: required")
	}
	var in manage.PlanInput
	in.Problems = parley.FieldErrors{}
	if *plan != "" {
		in.Plan = parley.Some(*plan)
	}
	if *seats != "" {
		n, err := strconv.Atoi(strings.TrimSpace(*seats))
		if err != nil {
			in.Problems.Add("botSeats", fmt.Sprintf("must be an integer between 0 and %d", manage.MaxBotSeats))
		}
		in.BotSeats = parley.Some(n)
	}
	if !in.Plan.Set && !in.BotSeats.Set {
		return errors.New("--plan or --seats: required (either or both)")
	}
	if err := in.Check().Err(); err != nil {
		return flagErrors(err, planFlags)
	}
	return withDB(ctx, func(store *db.DB) error {
		ctx := audit.WithActor(ctx, audit.Actor{Kind: audit.ActorOperator, Name: "Command line"})
		u, err := (&manage.Service{DB: store}).SetPlan(ctx, *slug, in, time.Now())
		if parley.ErrorKind(err) == parley.KindNotFound {
			return fmt.Errorf("--slug: %w", err)
		}
		if err != nil {
			return flagErrors(err, planFlags)
		}
		return printJSON(stdout, resource.NewPlanUsageJSON(u))
	})
}

// tenantUsage prints one tenant's plan and usage this month, with its
// conversations per day, or every tenant's, by slug.
func tenantUsage(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("tenant usage", stderr)
	slug := fs.String("slug", "", "tenant slug (unset: every tenant)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return withDB(ctx, func(store *db.DB) error {
		s, now := &manage.Service{DB: store}, time.Now()
		if *slug != "" {
			u, err := s.TenantPlan(ctx, *slug, now)
			if err != nil {
				return fmt.Errorf("--slug: %w", err)
			}
			return printJSON(stdout, resource.NewPlanUsageJSON(u))
		}
		all := []resource.PlanUsageJSON{}
		for page := 1; ; page++ {
			rows, total, err := s.TenantPlans(ctx, page, manage.MaxTenantsPage, now)
			if err != nil {
				return err
			}
			for _, u := range rows {
				all = append(all, resource.NewPlanUsageJSON(u))
			}
			if len(rows) == 0 || page*manage.MaxTenantsPage >= total {
				break
			}
		}
		return printJSON(stdout, map[string]any{"tenants": all})
	})
}
