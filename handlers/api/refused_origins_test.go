package api_test

import (
	"testing"
	"time"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/web/webtest"
)

// GET /tenants/{slug}/refused-origins lists the tenant's own sites refused
// in the last 30 days, the latest first, with settings:read; another
// tenant's token gets 404 and a token without the scope 403.
func TestRefusedOriginsAPI(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.NewTenant(t, "starter")
	other := b.NewTenant(t, "starter")
	now := b.Srv.Base.Clock()
	for _, r := range []struct {
		tenant, origin string
		at             time.Time
	}{
		{ten.ID, "https://copycat.example", now.Add(-time.Hour)},
		{ten.ID, "http://127.0.0.1:5555", now.Add(-time.Minute)},
		{ten.ID, "https://old.example", now.AddDate(0, 0, -31)},
		{other.ID, "https://other.example", now},
	} {
		if err := b.DB.NoteRefusedOrigin(t.Context(), r.tenant, r.origin, 2, r.at); err != nil {
			t.Fatal(err)
		}
	}
	path := "/tenants/" + ten.Slug + "/refused-origins"
	got := b.MustDo(t, 200, "GET", path, ten.Token, nil)["refusedOrigins"].([]any)
	var origins []string
	for _, r := range got {
		origins = append(origins, r.(map[string]any)["origin"].(string))
	}
	if len(origins) != 2 || origins[0] != "http://127.0.0.1:5555" || origins[1] != "https://copycat.example" {
		t.Errorf("refused origins = %v, want the two of the last 30 days, latest first", origins)
	}
	if r := got[0].(map[string]any); r["refusals"] != float64(2) {
		t.Errorf("refusals = %v", r["refusals"])
	}
	if st, body := b.Do(t, "GET", path, other.Token, nil); st != 404 {
		t.Errorf("another tenant's token: %d %v", st, body)
	}
	if st, body := b.Do(t, "GET", path, b.Token(t, ten.ID, auth.ScopeConversationsRead), nil); st != 403 {
		t.Errorf("without settings:read: %d %v", st, body)
	}
}
