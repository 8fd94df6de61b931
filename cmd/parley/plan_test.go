package main

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/parley/parley/handlers/resource"
	"github.com/parley/parley/manage"
)

func TestTenantPlan(t *testing.T) {
	store := cliEnv(t)
	ctx := context.Background()
	slug := uniqueSlug("plan")
	p := createTenant(t, "--slug", slug, "--name", "Plan Co", "--plan", "starter")
	planOf := func() (string, int) {
		ten, err := store.TenantBySlug(ctx, slug)
		if err != nil {
			t.Fatal(err)
		}
		return ten.Plan, ten.BotSeats
	}

	out, errOut, err := runCLI(t, "tenant", "plan", "--slug", slug, "--plan", "builder", "--seats", "3")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	var u resource.PlanUsageJSON
	if err := json.Unmarshal([]byte(out), &u); err != nil {
		t.Fatalf("printed %q: %v", out, err)
	}
	if u.Slug != slug || u.Plan != "builder" || u.BotSeats != 3 || u.ConversationsLimit != 8000 || !u.Features.MCP || len(u.Daily) != time.Now().UTC().Day() {
		t.Errorf("printed %+v", u)
	}
	if plan, seats := planOf(); plan != "builder" || seats != 3 {
		t.Errorf("stored %s %d", plan, seats)
	}
	// The seats alone keep the plan; the most seats pass.
	if _, errOut, err := runCLI(t, "tenant", "plan", "--slug", slug, "--seats", fmt.Sprint(manage.MaxBotSeats)); err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	if plan, seats := planOf(); plan != "builder" || seats != manage.MaxBotSeats {
		t.Errorf("stored %s %d", plan, seats)
	}
	// Each change is in the tenant's audit log, by the command line.
	var n int
	if err := store.Pool().QueryRow(ctx, `SELECT count(*) FROM audit_log WHERE tenant_id = $1 AND action = 'plan.changed'
		AND actor_kind = 'operator' AND actor_name = 'Command line'`, p.ID).Scan(&n); err != nil || n != 2 {
		t.Errorf("audit entries: %d, %v", n, err)
	}

	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--slug", slug, "--plan", "gold"}, []string{"--plan: must be one of free, starter, builder, scale"}},
		{[]string{"--slug", slug, "--seats", "-1"}, []string{"--seats: must be an integer between 0 and 1000"}},
		{[]string{"--slug", slug, "--seats", fmt.Sprint(manage.MaxBotSeats + 1)}, []string{"--seats: must be an integer between 0 and 1000"}},
		{[]string{"--slug", slug, "--seats", "two"}, []string{"--seats: must be an integer"}},
		{[]string{"--slug", slug, "--plan", "gold", "--seats", "x"}, []string{"--plan: must be one of", "--seats: must be an integer"}},
		{[]string{"--slug", slug}, []string{"--plan or --seats: required"}},
		{[]string{"--plan", "scale"}, []string{"--slug: required"}},
		{[]string{"--slug", "no-such-tenant", "--plan", "scale"}, []string{"--slug: Tenant not found"}},
	} {
		_, _, err := runCLI(t, append([]string{"tenant", "plan"}, tc.args...)...)
		wantErr(t, err, tc.want...)
	}
	if plan, seats := planOf(); plan != "builder" || seats != manage.MaxBotSeats {
		t.Errorf("refused changes changed the tenant: %s %d", plan, seats)
	}
}

func TestTenantUsage(t *testing.T) {
	store := cliEnv(t)
	ctx := context.Background()
	a, b := uniqueSlug("usage"), uniqueSlug("usage")
	pa := createTenant(t, "--slug", a, "--name", "Usage A", "--plan", "starter")
	createTenant(t, "--slug", b, "--name", "Usage B", "--plan", "scale")
	if _, err := store.Pool().Exec(ctx, `INSERT INTO conversation_usage (tenant_id, month, count)
		VALUES ($1, date_trunc('month', now() AT TIME ZONE 'UTC')::date, 7)`, pa.ID); err != nil {
		t.Fatal(err)
	}

	out, errOut, err := runCLI(t, "tenant", "usage", "--slug", a)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	var one resource.PlanUsageJSON
	if err := json.Unmarshal([]byte(out), &one); err != nil || one.Slug != a || one.ConversationsUsed != 7 || one.ConversationsLimit != 1000 || one.Daily == nil {
		t.Errorf("one tenant: %+v, %v", one, err)
	}

	out, errOut, err = runCLI(t, "tenant", "usage")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	var all struct{ Tenants []resource.PlanUsageJSON }
	if err := json.Unmarshal([]byte(out), &all); err != nil {
		t.Fatalf("printed %q: %v", out, err)
	}
	found := map[string]resource.PlanUsageJSON{}
	for _, u := range all.Tenants {
		found[u.Slug] = u
	}
	if found[a].ConversationsUsed != 7 || found[b].Plan != "scale" || found[b].ConversationsLimit != 25000 {
		t.Errorf("every tenant: %+v %+v of %d", found[a], found[b], len(all.Tenants))
	}
	var total int
	if err := store.Pool().QueryRow(ctx, `SELECT count(*) FROM tenants`).Scan(&total); err != nil || len(all.Tenants) < total {
		t.Errorf("%d tenants printed of %d", len(all.Tenants), total)
	}

	_, _, err = runCLI(t, "tenant", "usage", "--slug", "no-such-tenant")
	wantErr(t, err, "--slug: Tenant not found")
}
