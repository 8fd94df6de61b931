package public_test

import (
	"context"
	"testing"
	"time"

	"github.com/parley/parley/web/webtest"
)

// TestRefusedOriginRecorded: the widget's settings and a chat message
// refused by the tenant's allowed domains record the refused site,
// normalized, once per window however many requests are refused (their
// count added up at the next write); a refusal for another reason (a bad
// widget key, a plan without the widget) records nothing, and each tenant
// sees only its own.
func TestRefusedOriginRecorded(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	b.AtItsAddress()
	advance := webtest.ManualClock(b)
	ten := b.NewTenant(t, "starter")
	other := b.NewTenant(t, "starter")
	for _, x := range []webtest.Tenant{ten, other} {
		if st, body := b.Do(t, "PUT", "/tenants/"+x.Slug, x.Token, map[string]any{"allowedDomains": []string{"shop.example.com"}}); st != 200 {
			t.Fatalf("allowedDomains: %d %v", st, body)
		}
	}
	settings := func(slug, origin string, headers map[string]string, want int) {
		t.Helper()
		h := map[string]string{"Origin": origin}
		for k, v := range headers {
			h[k] = v
		}
		if resp, body, _ := b.GetWidgetSettings(t, "/chat/"+slug+"/widget", h); resp.StatusCode != want {
			t.Fatalf("settings from %q: %d %v, want %d", origin, resp.StatusCode, body, want)
		}
	}
	type row struct {
		origin   string
		refusals int64
		first    time.Time
		last     time.Time
	}
	rows := func(tenantID string) []row {
		t.Helper()
		list, err := b.DB.RefusedOrigins(context.Background(), tenantID, time.Time{})
		webtest.MustStep(t, "listing the refused origins", err)
		var out []row
		for _, r := range list {
			out = append(out, row{r.Origin, r.Refusals, r.FirstSeen.UTC(), r.LastSeen.UTC()})
		}
		return out
	}
	start := b.Srv.Base.Clock()

	settings(ten.Slug, "https://shop.example.com", nil, 200)
	for range 5 {
		settings(ten.Slug, "HTTPS://Evil.Example:443", nil, 403)
	}
	if got := rows(ten.ID); len(got) != 1 || got[0] != (row{"https://evil.example", 1, start, start}) {
		t.Fatalf("after 5 refusals within a minute: %+v, want https://evil.example recorded once", got)
	}
	if n := b.Count(t, `SELECT count(*) FROM refused_origins WHERE tenant_id = $1`, other.ID); n != 0 {
		t.Errorf("another tenant has %d refused origins of this one's", n)
	}

	// A chat message from the refused page counts too; after the window the
	// refusals seen meanwhile are written with the next.
	advance(30 * time.Second)
	if r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "hi", "sessionId": "s1"}, map[string]string{"Origin": "https://evil.example"}); r.Status != 403 {
		t.Fatalf("chat from a refused page: %d %v", r.Status, r.Body)
	}
	advance(31 * time.Second)
	settings(ten.Slug, "https://evil.example", nil, 403)
	if got := rows(ten.ID); len(got) != 1 || got[0] != (row{"https://evil.example", 7, start, start.Add(61 * time.Second)}) {
		t.Errorf("after the window: %+v, want 7 refusals, last seen now", got)
	}

	// Other refusals are not the origin's.
	if st, body := b.Do(t, "PUT", "/tenants/"+other.Slug, other.Token, map[string]any{"allowedDomains": []string{}}); st != 200 {
		t.Fatalf("allowedDomains: %d %v", st, body)
	}
	b.Exec(t, `UPDATE tenants SET widget_key = 'wk_right' WHERE id = $1`, other.ID)
	settings(other.Slug, "https://evil.example", map[string]string{"X-Widget-Key": "wk_wrong"}, 403)
	if got := rows(other.ID); len(got) != 0 {
		t.Errorf("a bad widget key recorded %+v", got)
	}
	free := b.NewTenant(t, "free")
	b.Exec(t, `UPDATE tenants SET allowed_domains = '{shop.example.com}' WHERE id = $1`, free.ID)
	settings(free.Slug, "https://evil.example", nil, 402)
	if n := b.Count(t, `SELECT count(*) FROM refused_origins WHERE tenant_id = $1`, free.ID); n != 0 {
		t.Errorf("a plan's refusal recorded %d origins", n)
	}
}
