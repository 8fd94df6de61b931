package operator_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/handlers/resource"
	"github.com/parley/parley/manage"
	"github.com/parley/parley/web/webtest"
)

// operatorToken is the tests' operator token.
const operatorToken = "op-test-0123456789abcdef0123456789abcdef"

func operatorEnv() map[string]string {
	return map[string]string{"PARLEY_OPERATOR_TOKEN": operatorToken}
}

// op sends an operator API request with the operator's token.
func op(t *testing.T, b *webtest.Bundle, method, path, body string) (int, map[string]any) {
	t.Helper()
	headers := webtest.Bearer(operatorToken)
	status, out, raw := b.Request(t, method, path, headers, body)
	if out == nil {
		t.Fatalf("%s %s: %d %q is not a JSON object", method, path, status, raw)
	}
	return status, out
}

func TestOperatorAPIOff(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	for _, path := range []string{"/operator/tenants", "/operator/tenants/x"} {
		status, body, _ := b.Request(t, "GET", path, webtest.Bearer(operatorToken), "")
		if status != http.StatusNotFound || body["code"] != "OPERATOR_API_OFF" || !strings.Contains(body["error"].(string), "PARLEY_OPERATOR_TOKEN") {
			t.Errorf("%s without an operator token configured: %d %v", path, status, body)
		}
	}
}

func TestOperatorAuthentication(t *testing.T) {
	t.Parallel()
	b := webtest.SetupEnv(t, operatorEnv())
	ten := b.NewTenant(t, "scale")
	everything := b.Token(t, ten.ID, auth.RESTScopes...)
	for name, headers := range map[string]map[string]string{
		"none":         nil,
		"tenant token": webtest.Bearer(everything),
		"wrong token":  webtest.Bearer(operatorToken + "x"),
		"prefix":       webtest.Bearer(operatorToken[:len(operatorToken)-1]),
		"basic":        {"Authorization": "Basic " + operatorToken},
		"admin header": {"X-Service-Admin-Token": operatorToken},
		"api key":      {"X-API-Key": operatorToken},
	} {
		for _, r := range [][2]string{{"GET", "/operator/tenants"}, {"GET", "/operator/tenants/" + ten.Slug},
			{"PUT", "/operator/tenants/" + ten.Slug + "/plan"}} {
			body := ""
			if r[0] == "PUT" {
				body = `{"botSeats": 3}`
			}
			status, out, _ := b.Request(t, r[0], r[1], headers, body)
			if status != http.StatusUnauthorized || !strings.Contains(fmt.Sprint(out["error"]), "operator token") {
				t.Errorf("%s %s with %s: %d %v", r[0], r[1], name, status, out)
			}
		}
	}
	if got := b.TenantNow(t, ten.Slug); got.BotSeats != 0 {
		t.Errorf("a refused change changed the seats: %d", got.BotSeats)
	}
	// Scheme names are case-insensitive (RFC 9110).
	if status, _, _ := b.Request(t, "GET", "/operator/tenants/"+ten.Slug, map[string]string{"Authorization": "bearer " + operatorToken}, ""); status != 200 {
		t.Errorf("lower-case bearer: %d", status)
	}
}

func TestOperatorTenants(t *testing.T) {
	t.Parallel()
	b := webtest.SetupEnv(t, operatorEnv())
	free, builder := b.OwnedTenant(t, "free"), b.NewTenant(t, "builder")
	b.Exec(t, `UPDATE tenants SET bot_seats = 3 WHERE id = $1`, builder.ID)
	b.Exec(t, `INSERT INTO conversation_usage (tenant_id, month, count) VALUES ($1, date_trunc('month', now() AT TIME ZONE 'UTC')::date, 42)`, builder.ID)
	b.Exec(t, `INSERT INTO conversations (tenant_id, session_id) VALUES ($1, 'a'), ($1, 'b')`, builder.ID)
	b.Exec(t, `INSERT INTO conversations (tenant_id, session_id, is_test) VALUES ($1, 'test', true)`, builder.ID)
	// Last month's count is not this period's.
	b.Exec(t, `INSERT INTO conversation_usage (tenant_id, month, count) VALUES ($1, (date_trunc('month', now() AT TIME ZONE 'UTC') - interval '1 month')::date, 99)`, free.ID)

	t.Run("List", func(t *testing.T) {
		// Every tenant of the installation, pages by slug: walk them all
		// and find both.
		found := map[string]map[string]any{}
		total, seen := -1, 0
		for page := 1; ; page++ {
			status, body := op(t, b, "GET", fmt.Sprintf("/operator/tenants?limit=100&page=%d", page), "")
			if status != 200 {
				t.Fatalf("page %d: %d %v", page, status, body)
			}
			p := body["pagination"].(map[string]any)
			total = int(p["total"].(float64))
			items := body["tenants"].([]any)
			for _, it := range items {
				m := it.(map[string]any)
				found[m["slug"].(string)] = m
				if _, daily := m["daily"]; daily {
					t.Errorf("a listing's item has daily: %v", m)
				}
			}
			seen += len(items)
			if len(items) < 100 {
				break
			}
		}
		if seen != total || total < 2 {
			t.Errorf("saw %d tenants of %d", seen, total)
		}
		bu, fr := found[builder.Slug], found[free.Slug]
		if bu == nil || fr == nil {
			t.Fatalf("tenants missing from the listing: %v %v", bu, fr)
		}
		if bu["plan"] != "builder" || bu["botSeats"] != 3.0 || bu["conversationsLimit"] != 8000.0 || bu["conversationsUsed"] != 42.0 ||
			bu["atLimit"] != false || bu["members"] != 0.0 || bu["features"].(map[string]any)["mcp"] != true {
			t.Errorf("builder: %v", bu)
		}
		if fr["plan"] != "free" || fr["conversationsLimit"] != 100.0 || fr["conversationsUsed"] != 0.0 || fr["members"] != 1.0 ||
			fr["limits"].(map[string]any)["members"] != 2.0 || fr["features"].(map[string]any)["widget"] != false {
			t.Errorf("free: %v", fr)
		}
	})

	t.Run("Pages", func(t *testing.T) {
		status, body := op(t, b, "GET", "/operator/tenants?limit=1&page=2", "")
		if p := body["pagination"].(map[string]any); status != 200 || len(body["tenants"].([]any)) != 1 || p["page"] != 2.0 || p["limit"] != 1.0 || p["pages"] != p["total"] {
			t.Errorf("limit 1, page 2: %d %v", status, body)
		}
		for q, field := range map[string]string{"limit=0": "limit", "limit=101": "limit", "limit=x": "limit", "page=0": "page", "page=-1": "page", "page=1.5": "page"} {
			status, body := op(t, b, "GET", "/operator/tenants?"+q, "")
			if status != 400 || !strings.HasPrefix(body["error"].(string), field+" must be an integer") {
				t.Errorf("%s: %d %v", q, status, body)
			}
		}
		if status, _ := op(t, b, "GET", "/operator/tenants?limit=100", ""); status != 200 {
			t.Errorf("limit=100: %d", status)
		}
	})

	t.Run("Show", func(t *testing.T) {
		status, body := op(t, b, "GET", "/operator/tenants/"+builder.Slug, "")
		if status != 200 || body["slug"] != builder.Slug || body["conversationsUsed"] != 42.0 {
			t.Fatalf("show: %d %v", status, body)
		}
		var u resource.PlanUsageJSON
		raw, _ := json.Marshal(body)
		if err := json.Unmarshal(raw, &u); err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC()
		if len(u.Daily) != now.Day() || u.Daily[0].Date != u.PeriodStart.Format(time.DateOnly) || u.Daily[now.Day()-1].Date != now.Format(time.DateOnly) {
			t.Errorf("daily: %d days %v, want one a day of the month to today", len(u.Daily), u.Daily)
		}
		if last := u.Daily[len(u.Daily)-1]; last.Conversations != 2 {
			t.Errorf("today: %d conversations, want the 2 that are not tests", last.Conversations)
		}
		if status, body := op(t, b, "GET", "/operator/tenants/no-such-tenant", ""); status != 404 || body["error"] != "Tenant not found" {
			t.Errorf("unknown tenant: %d %v", status, body)
		}
	})
}

func TestOperatorSetPlan(t *testing.T) {
	t.Parallel()
	b := webtest.SetupEnv(t, operatorEnv())
	ten := b.NewTenant(t, "starter")
	path := "/operator/tenants/" + ten.Slug + "/plan"
	entries := func() int {
		return b.Count(t, `SELECT count(*) FROM audit_log WHERE tenant_id = $1 AND action = 'plan.changed'`, ten.ID)
	}

	t.Run("BadInput", func(t *testing.T) {
		for body, want := range map[string]map[string]string{
			`{"plan": "gold"}`: {"plan": "must be one of free, starter, builder, scale"},
			`{"plan": null}`:   {"plan": "must be one of free, starter, builder, scale"},
			`{"plan": 3}`:      {"plan": "must be a string"},
			`{"botSeats": -1}`: {"botSeats": fmt.Sprintf("must be an integer between 0 and %d", manage.MaxBotSeats)},
			fmt.Sprintf(`{"botSeats": %d}`, manage.MaxBotSeats+1): {"botSeats": "must be an integer between 0 and 1000"},
			`{"botSeats": "2"}`:                {"botSeats": "must be an integer"},
			`{"botSeats": 1.5}`:                {"botSeats": "must be an integer"},
			`{"botSeats": null}`:               {"botSeats": "must be an integer between 0 and 1000"},
			`{}`:                               {"plan": "is required unless botSeats is sent: one of free, starter, builder, scale"},
			`{"seats": 2}`:                     {"seats": "is not a field of a plan change: send plan, botSeats or both", "plan": "is required unless botSeats is sent: one of free, starter, builder, scale"},
			`{"plan": "gold", "botSeats": -2}`: {"plan": "must be one of free, starter, builder, scale", "botSeats": "must be an integer between 0 and 1000"},
		} {
			status, out := op(t, b, "PUT", path, body)
			if status != 400 || out["error"] != "Validation failed" {
				t.Errorf("%s: %d %v", body, status, out)
				continue
			}
			details := webtest.Details(t, out)
			if len(details) != len(want) {
				t.Errorf("%s: details %v, want %v", body, details, want)
			}
			for k, v := range want {
				if details[k] != v {
					t.Errorf("%s: %s = %v, want %q", body, k, details[k], v)
				}
			}
		}
		for _, body := range []string{`[]`, `"builder"`, `{"plan": `} {
			if status, out := op(t, b, "PUT", path, body); status != 400 {
				t.Errorf("%s: %d %v", body, status, out)
			}
		}
		status, out, _ := b.Request(t, "PUT", path, map[string]string{"Authorization": "Bearer " + operatorToken, "Content-Type": "text/plain"}, `{"plan": "scale"}`)
		if status != http.StatusUnsupportedMediaType {
			t.Errorf("text/plain: %d %v", status, out)
		}
		if status, out := op(t, b, "PUT", "/operator/tenants/no-such-tenant/plan", `{"plan": "scale"}`); status != 404 || out["error"] != "Tenant not found" {
			t.Errorf("unknown tenant: %d %v", status, out)
		}
		if got := b.TenantNow(t, ten.Slug); got.Plan != "starter" || got.BotSeats != 0 || entries() != 0 {
			t.Errorf("refused changes changed the tenant: %s %d, %d entries", got.Plan, got.BotSeats, entries())
		}
	})

	t.Run("Change", func(t *testing.T) {
		// The most seats pass, one more is refused (BadInput).
		status, out := op(t, b, "PUT", path, fmt.Sprintf(`{"plan": "builder", "botSeats": %d}`, manage.MaxBotSeats))
		if status != 200 || out["plan"] != "builder" || out["botSeats"] != float64(manage.MaxBotSeats) ||
			out["conversationsLimit"] != float64(5000+manage.MaxBotSeats*1000) || out["daily"] == nil {
			t.Fatalf("change: %d %v", status, out)
		}
		// Seats alone keep the plan; the plan alone keeps the seats.
		if status, out = op(t, b, "PUT", path, `{"botSeats": 2}`); status != 200 || out["plan"] != "builder" || out["botSeats"] != 2.0 {
			t.Errorf("seats alone: %d %v", status, out)
		}
		if status, out = op(t, b, "PUT", path, `{"plan": "scale"}`); status != 200 || out["plan"] != "scale" || out["botSeats"] != 2.0 || out["conversationsLimit"] != 27000.0 {
			t.Errorf("plan alone: %d %v", status, out)
		}
		if got := b.TenantNow(t, ten.Slug); got.Plan != "scale" || got.BotSeats != 2 {
			t.Errorf("stored: %s %d", got.Plan, got.BotSeats)
		}
		// Each change is in the audit log, by the operator, from and to.
		rows, err := b.DB.Pool().Query(context.Background(), `SELECT actor_kind, actor_name, target, details FROM audit_log
			WHERE tenant_id = $1 AND action = 'plan.changed' ORDER BY id`, ten.ID)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for rows.Next() {
			var kind, name, target string
			var details map[string]any
			if err := rows.Scan(&kind, &name, &target, &details); err != nil {
				t.Fatal(err)
			}
			from, to := details["from"].(map[string]any), details["to"].(map[string]any)
			got = append(got, fmt.Sprintf("%s/%s/%s %v,%v>%v,%v", kind, name, target, from["plan"], from["botSeats"], to["plan"], to["botSeats"]))
		}
		want := []string{
			fmt.Sprintf("operator/Operator API/%s starter,0>builder,%d", ten.Name, manage.MaxBotSeats),
			fmt.Sprintf("operator/Operator API/%s builder,%d>builder,2", ten.Name, manage.MaxBotSeats),
			fmt.Sprintf("operator/Operator API/%s builder,2>scale,2", ten.Name),
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("audit entries:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		// Setting what the tenant has records nothing.
		if status, _ := op(t, b, "PUT", path, `{"plan": "scale", "botSeats": 2}`); status != 200 || entries() != 3 {
			t.Errorf("no change: %d, %d entries", status, entries())
		}
	})
}

// TestOperatorPlanMovesChatLimit is the proof: a plan change through
// the operator API moves the limit a chat hits, at once (the next message,
// through the chat's configuration cache), both ways.
func TestOperatorPlanMovesChatLimit(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, operatorEnv())
	ten := b.NewTenant(t, "starter")
	// The month's 1,000 conversations, the starter plan's limit, are used.
	b.Exec(t, `INSERT INTO conversations (tenant_id, session_id) SELECT $1, 'old-' || g FROM generate_series(1, 1000) g`, ten.ID)
	b.Exec(t, `INSERT INTO conversation_usage (tenant_id, month, count) VALUES ($1, date_trunc('month', now() AT TIME ZONE 'UTC')::date, 1000)`, ten.ID)
	chat := func(session string) webtest.ChatResponse {
		return b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "Hello", "sessionId": session}, webtest.AgentHeaders)
	}
	r := chat("new-1")
	if r.Status != 429 || r.Body["code"] != "LIMIT_REACHED" || r.Body["limit"] != 1000.0 || r.Body["current"] != 1000.0 {
		t.Fatalf("at the limit: %d %v", r.Status, r.Body)
	}
	start := time.Now()
	// The operator adds a bot seat: 1,000 more this month.
	if status, out := op(t, b, "PUT", "/operator/tenants/"+ten.Slug+"/plan", `{"botSeats": 1}`); status != 200 || out["conversationsLimit"] != 2000.0 || out["atLimit"] != false {
		t.Fatalf("adding a seat: %d %v", status, out)
	}
	llm.Push(llmtest.Turn{Text: []string{"Welcome."}})
	if r := chat("new-1"); r.Status != 200 || r.Body["message"] != "Welcome." {
		t.Fatalf("after a seat was added: %d %v", r.Status, r.Body)
	}
	// And takes it away: 1,001 used of 1,000, a new conversation is refused
	// again, while one that started continues.
	if status, out := op(t, b, "PUT", "/operator/tenants/"+ten.Slug+"/plan", `{"botSeats": 0}`); status != 200 || out["atLimit"] != true || out["conversationsUsed"] != 1001.0 {
		t.Fatalf("removing the seat: %d %v", status, out)
	}
	if r := chat("new-2"); r.Status != 429 || r.Body["code"] != "LIMIT_REACHED" || r.Body["limit"] != 1000.0 || r.Body["current"] != 1001.0 {
		t.Errorf("after the seat was removed: %d %v", r.Status, r.Body)
	}
	llm.Push(llmtest.Turn{Text: []string{"Still here."}})
	if r := chat("new-1"); r.Status != 200 || r.Body["message"] != "Still here." {
		t.Errorf("the conversation started before: %d %v", r.Status, r.Body)
	}
	// A plan without the widget closes the chat at once too.
	if status, _ := op(t, b, "PUT", "/operator/tenants/"+ten.Slug+"/plan", `{"plan": "free"}`); status != 200 {
		t.Fatalf("free plan: %d", status)
	}
	if r := chat("new-1"); r.Status != 402 || r.Body["code"] != "NOT_ACTIVATED" {
		t.Errorf("on the free plan: %d %v", r.Status, r.Body)
	}
	if d := time.Since(start); d > time.Minute {
		t.Errorf("the changes took %v to reach the chat", d)
	}
}
