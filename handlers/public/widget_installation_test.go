package public_test

import (
	"context"
	"testing"
	"time"

	"github.com/parley/parley/web/webtest"
)

// TestWidgetInstallationDetected: the widget's settings fetched from a page
// of the tenant's own site (another origin than Parley's, allowed by the
// tenant) record the installation, at most once an hour; Parley's own
// pages (the dashboard's preview, the demo) and refused origins do not.
func TestWidgetInstallationDetected(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	b.AtItsAddress()
	clock := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	b.Srv.Base.Now = func() time.Time { return clock }
	ten := b.NewTenant(t, "starter")
	path := "/chat/" + ten.Slug + "/widget"
	seen := func() (string, time.Time) {
		t.Helper()
		s, err := b.DB.WidgetSeen(context.Background(), ten.ID)
		webtest.MustStep(t, "reading the sighting", err)
		if s == nil {
			return "", time.Time{}
		}
		return s.Origin, s.At
	}
	get := func(origin string, want int) {
		t.Helper()
		h := map[string]string{}
		if origin != "" {
			h["Origin"] = origin
		}
		if resp, body, _ := b.GetWidgetSettings(t, path, h); resp.StatusCode != want {
			t.Fatalf("Origin %q: status %d %v, want %d", origin, resp.StatusCode, body, want)
		}
	}

	get("", 200)       // no Origin: not a page of another site
	get(b.TS.URL, 200) // Parley's own pages (any origin is allowed yet)
	if st, body := b.Do(t, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"allowedDomains": []string{"shop.example.com", "www.shop.example.com"}}); st != 200 {
		t.Fatalf("allowedDomains: %d %v", st, body)
	}
	get("https://evil.example", 403) // refused by the gate
	if o, _ := seen(); o != "" {
		t.Fatalf("installation recorded from %q before any page of the tenant's site loaded the widget", o)
	}

	get("https://shop.example.com", 200)
	if o, at := seen(); o != "https://shop.example.com" || !at.Equal(clock) {
		t.Fatalf("sighting = %q at %v, want https://shop.example.com at %v", o, at, clock)
	}
	// Within the hour, another load writes nothing.
	clock = clock.Add(59 * time.Minute)
	get("https://www.shop.example.com", 200)
	if o, _ := seen(); o != "https://shop.example.com" {
		t.Errorf("sighting rewritten within the hour: %q", o)
	}
	// After it, the latest load is recorded.
	clock = clock.Add(2 * time.Minute)
	get("https://www.shop.example.com", 200)
	if o, at := seen(); o != "https://www.shop.example.com" || !at.Equal(clock) {
		t.Errorf("sighting = %q at %v, want https://www.shop.example.com at %v", o, at, clock)
	}
	// Another tenant's sighting is its own.
	other := b.NewTenant(t, "starter")
	if s, err := b.DB.WidgetSeen(context.Background(), other.ID); err != nil || s != nil {
		t.Errorf("another tenant's sighting = %+v, %v; want none", s, err)
	}
}
