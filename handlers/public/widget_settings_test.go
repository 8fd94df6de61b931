package public_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/web/webtest"
)

func TestWidgetSettings(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.NewTenant(t, "starter")
	settings := map[string]any{
		"botName": "Spoke", "botTitle": "Bike helper", "primaryColor": "#0f766e", "secondaryColor": "#f59e0b",
		"showAiBadge": true, "teaserText": "Questions about a bike?", "autoOpen": true, "autoOpenDelay": 8, "bubblePulse": true,
		"bookingCtaEnabled": true, "bookingCtaConfig": map[string]any{"headline": "Book a test ride", "subtitle": "30 minutes",
			"ctaText": "Book", "officeHours": "Mon-Sat 9-18"},
		"captchaEnabled": true, "captchaSiteKey": "0x4AAA-site", "captchaSecretKey": "0x4AAA-secret-do-not-leak",
	}
	if st, body := b.Do(t, "PUT", "/tenants/"+ten.Slug, ten.Token, settings); st != 200 {
		t.Fatalf("settings: %d %v", st, body)
	}
	seg := map[string]any{"name": "Wholesale", "slug": "wholesale", "systemPrompt": "PRIVATE PROMPT: never show this.",
		"welcomeMessage": "Hello, trade buyer!", "conversationStarters": []any{map[string]any{"text": "Bulk prices?", "emoji": "📦"}},
		"formConfig": map[string]any{"enabled": true, "intent": "lead", "confirmationMessage": "We will call you.",
			"fields": []any{map[string]any{"name": "email", "label": "Email", "type": "email", "required": true}}}}
	if st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/segments", ten.Token, seg); st != 201 {
		t.Fatalf("segment: %d %v", st, body)
	}
	path := "/chat/" + ten.Slug + "/widget"

	t.Run("Segment", func(t *testing.T) {
		resp, body, raw := b.GetWidgetSettings(t, path+"?segment=wholesale", map[string]string{"Origin": "https://bikes.example"})
		if resp.StatusCode != 200 {
			t.Fatalf("got %d %s", resp.StatusCode, raw)
		}
		segment := body["segment"].(map[string]any)
		if body["tenant"] != ten.Slug || segment["slug"] != "wholesale" || segment["welcomeMessage"] != "Hello, trade buyer!" {
			t.Errorf("settings %v", body)
		}
		if starters := segment["conversationStarters"].([]any); len(starters) != 1 || starters[0].(map[string]any)["text"] != "Bulk prices?" {
			t.Errorf("starters %v", segment["conversationStarters"])
		}
		bot, launcher := body["bot"].(map[string]any), body["launcher"].(map[string]any)
		if bot["name"] != "Spoke" || bot["primaryColor"] != "#0f766e" || bot["showAiBadge"] != true ||
			launcher["teaserText"] != "Questions about a bike?" || launcher["autoOpenDelay"] != float64(8) || launcher["bubblePulse"] != true {
			t.Errorf("bot %v, launcher %v", bot, launcher)
		}
		if cta, _ := body["bookingCta"].(map[string]any); cta["headline"] != "Book a test ride" {
			t.Errorf("booking %v", body["bookingCta"])
		}
		if cp, _ := body["captcha"].(map[string]any); cp["siteKey"] != "0x4AAA-site" || cp["scriptUrl"] != b.Srv.Config.CaptchaScriptURL ||
			cp["scriptUrl"] != "https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit" {
			t.Errorf("captcha %v", body["captcha"])
		}
		if form, _ := body["form"].(map[string]any); form["confirmationMessage"] != "We will call you." || len(form["fields"].([]any)) != 1 {
			t.Errorf("form %v", body["form"])
		}
		if ep := body["endpoints"].(map[string]any); ep["chat"] != b.Srv.Config.BaseURL+"/chat/"+ten.Slug {
			t.Errorf("endpoints %v", ep)
		}
		for _, private := range []string{"PRIVATE PROMPT", "secret", ten.ID, "systemPrompt", "widgetKey"} {
			if strings.Contains(raw, private) {
				t.Errorf("the public settings show %q: %s", private, raw)
			}
		}
		if cc, vary := resp.Header.Get("Cache-Control"), resp.Header.Values("Vary"); cc != "public, max-age=60" ||
			!strings.Contains(strings.Join(vary, ","), "Origin") || !strings.Contains(strings.Join(vary, ","), "X-Widget-Key") {
			t.Errorf("Cache-Control %q, Vary %q", cc, vary)
		}
		if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "*" {
			t.Errorf("Access-Control-Allow-Origin %q, want * (read by pages of other sites)", got)
		}
	})

	t.Run("DefaultSegmentAndETag", func(t *testing.T) {
		resp, body, raw := b.GetWidgetSettings(t, path, nil)
		if resp.StatusCode != 200 || body["segment"].(map[string]any)["slug"] != "default" || body["form"] != nil {
			t.Fatalf("got %d %s", resp.StatusCode, raw)
		}
		etag := resp.Header.Get("ETag")
		if etag == "" {
			t.Fatal("no ETag")
		}
		again, _, raw := b.GetWidgetSettings(t, path, map[string]string{"If-None-Match": etag})
		if again.StatusCode != http.StatusNotModified || raw != "" {
			t.Errorf("If-None-Match of the current tag: got %d %q, want 304 and no body", again.StatusCode, raw)
		}
		// A change of settings changes the tag.
		if st, body := b.Do(t, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"teaserText": "Need a hand?"}); st != 200 {
			t.Fatalf("settings: %d %v", st, body)
		}
		changed, body, _ := b.GetWidgetSettings(t, path, map[string]string{"If-None-Match": etag})
		if changed.StatusCode != 200 || changed.Header.Get("ETag") == etag || body["launcher"].(map[string]any)["teaserText"] != "Need a hand?" {
			t.Errorf("after a change: %d, ETag %q (was %q), %v", changed.StatusCode, changed.Header.Get("ETag"), etag, body["launcher"])
		}
	})

	t.Run("Gates", func(t *testing.T) {
		free := b.NewTenant(t, "free")
		if resp, body, _ := b.GetWidgetSettings(t, "/chat/"+free.Slug+"/widget", nil); resp.StatusCode != 402 || body["code"] != "NOT_ACTIVATED" ||
			resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("free plan: %d %v (Cache-Control %q)", resp.StatusCode, body, resp.Header.Get("Cache-Control"))
		}
		if resp, _, _ := b.GetWidgetSettings(t, "/chat/no-such-tenant/widget", nil); resp.StatusCode != 404 {
			t.Errorf("unknown tenant: %d", resp.StatusCode)
		}
		if resp, body, _ := b.GetWidgetSettings(t, path+"?segment=nope", nil); resp.StatusCode != 400 || body["details"] == nil {
			t.Errorf("unknown segment: %d %v", resp.StatusCode, body)
		}
		guarded := b.NewTenant(t, "starter")
		if st, body := b.Do(t, "PUT", "/tenants/"+guarded.Slug, guarded.Token, map[string]any{
			"allowedDomains": []string{"shop.example.com"}}); st != 200 {
			t.Fatalf("gates: %d %v", st, body)
		}
		// The widget key is made on the dashboard's settings page.
		if _, err := b.DB.UpdateTenant(context.Background(), guarded.ID, db.TenantPatch{WidgetKey: parley.Some("wk_public_key")}); err != nil {
			t.Fatal(err)
		}
		gp := "/chat/" + guarded.Slug + "/widget"
		if resp, body, _ := b.GetWidgetSettings(t, gp, map[string]string{"Origin": "https://evil.example", "X-Widget-Key": "wk_public_key"}); resp.StatusCode != 403 || body["error"] != "Origin not allowed" {
			t.Errorf("other origin: %d %v", resp.StatusCode, body)
		}
		if resp, body, _ := b.GetWidgetSettings(t, gp, map[string]string{"Origin": "https://shop.example.com"}); resp.StatusCode != 403 || body["error"] != "Invalid or missing widget key" {
			t.Errorf("no widget key: %d %v", resp.StatusCode, body)
		}
		if resp, _, raw := b.GetWidgetSettings(t, gp, map[string]string{"Origin": "https://shop.example.com", "X-Widget-Key": "wk_public_key"}); resp.StatusCode != 200 ||
			strings.Contains(raw, "wk_public_key") {
			t.Errorf("allowed page with its key: %d %s", resp.StatusCode, raw)
		}
	})
}
