package admin_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/parley/parley/web/webtest"
)

// TestAdminPlanPage: the owner reads the plan, what it includes, the seats
// and this month's conversations against the limit, day by day; a change
// of the operator shows at the next load.
func TestAdminPlanPage(t *testing.T) {
	t.Parallel()
	token := strings.Repeat("p", 40)
	b := webtest.SetupAdmin(t, map[string]string{"PARLEY_OPERATOR_TOKEN": token})
	ten := b.OwnedTenant(t, "builder")
	b.Exec(t, `UPDATE tenants SET bot_seats = 2 WHERE id = $1`, ten.ID)
	b.Exec(t, `INSERT INTO conversations (tenant_id, session_id) VALUES ($1, 'a'), ($1, 'b'), ($1, 'c')`, ten.ID)
	b.Exec(t, `INSERT INTO conversations (tenant_id, session_id, is_test) VALUES ($1, 'test', true)`, ten.ID)
	b.Exec(t, `INSERT INTO conversation_usage (tenant_id, month, count) VALUES ($1, date_trunc('month', now() AT TIME ZONE 'UTC')::date, 3)`, ten.ID)
	c := b.NewAdminClient(t)
	c.SignIn(ten)

	p := c.Get("/admin/plan")
	if p.Status != 200 || p.Doc.Find(`nav a[href="/admin/plan"][aria-current="page"]`).Length() != 1 {
		t.Fatalf("page: %d %s", p.Status, p.Body)
	}
	if p.Text("#plan-name") != "Builder" || p.Text("#bot-seats") != "2" || p.Text("#conversations-limit") != "7,000" ||
		!strings.HasPrefix(p.Text("#conversations-used"), "3 of 7,000") {
		t.Errorf("plan %q, seats %q, limit %q, used %q", p.Text("#plan-name"), p.Text("#bot-seats"), p.Text("#conversations-limit"), p.Text("#conversations-used"))
	}
	features := p.Text("#plan-features")
	for _, want := range []string{"Chat widget (included)", "Your own MCP tools (included)", "Phone calls (not included)", "On the scale plan."} {
		if !strings.Contains(strings.Join(strings.Fields(features), " "), want) {
			t.Errorf("features %q lack %q", features, want)
		}
	}
	if p.Doc.Find("#at-limit").Length() != 0 || p.Doc.Find("#usage-deleted").Length() != 0 {
		t.Errorf("an alert below the limit, or deleted conversations: %s", p.Text("#usage"))
	}
	limitText := strings.Join(strings.Fields(p.Text("#at-the-limit")), " ")
	for _, want := range []string{"new conversations are refused", "Monthly conversation limit reached", "LIMIT_REACHED", "Conversations already started continue"} {
		if !strings.Contains(limitText, want) {
			t.Errorf("what happens at the limit %q lacks %q", limitText, want)
		}
	}
	if !strings.Contains(p.Text("#change-plan"), "operator") || p.Doc.Find("#plans tbody tr").Length() != 4 ||
		!strings.Contains(p.Doc.Find("#plans tr.current").Text(), "Builder") {
		t.Errorf("changing the plan: %s", p.Text("#change-plan"))
	}
	if got := p.Doc.Find("#limits tbody tr").Length(); got != 3 || !strings.Contains(p.Text("#limits"), "Team members") {
		t.Errorf("limits: %d rows %q", got, p.Text("#limits"))
	}
	// The chart: a row a day of the month so far; today's 3 (the test chat
	// not counted), their running total, the limit.
	now := time.Now().UTC()
	rows := p.Doc.Find("#usage-chart tbody tr")
	if rows.Length() != now.Day() {
		t.Fatalf("chart rows %d, want %d", rows.Length(), now.Day())
	}
	var last []string
	rows.Last().Find("th, td").Each(func(_ int, s *goquery.Selection) { last = append(last, strings.TrimSpace(s.Text())) })
	if want := []string{now.Format("2 Jan"), "3", "3", "7,000"}; strings.Join(last, "|") != strings.Join(want, "|") {
		t.Errorf("today's row %q, want %q", last, want)
	}
	if aria := p.Doc.Find("#usage-chart svg").AttrOr("aria-label", ""); !strings.Contains(aria, "monthly limit 7,000") {
		t.Errorf("chart summary %q", aria)
	}

	// The operator lowers the seats below what is used: the page says the
	// limit is reached at once.
	if st, out, _ := b.Request(t, "PUT", "/operator/tenants/"+ten.Slug+"/plan", webtest.Bearer(token), `{"plan": "starter", "botSeats": 0}`); st != 200 {
		t.Fatalf("operator: %d %v", st, out)
	}
	b.Exec(t, `UPDATE conversation_usage SET count = 1000 WHERE tenant_id = $1`, ten.ID)
	p = c.Get("/admin/plan")
	if p.Text("#plan-name") != "Starter" || p.Text("#conversations-limit") != "1,000" || !strings.Contains(p.Text("#at-limit"), "limit is reached") ||
		p.Doc.Find(".meter").AttrOr("aria-valuenow", "") != strconv.Itoa(1000) {
		t.Errorf("at the limit: plan %q, limit %q, alert %q", p.Text("#plan-name"), p.Text("#conversations-limit"), p.Text("#at-limit"))
	}
	// The chart's 3 conversations are what is left of the 1,000 counted.
	if got := strings.Join(strings.Fields(p.Text("#usage-deleted")), " "); !strings.Contains(got, "997 more were started this month and deleted since") {
		t.Errorf("deleted conversations: %q", got)
	}
}
