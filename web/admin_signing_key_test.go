package web

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/golang-jwt/jwt/v5"
)

func TestAdminSigningKeyBrowser(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ten := b.ownedTenant(t, "starter")
	ctx := browserTab(t)
	oldKey := b.visitorKey(t, ten.ID)
	openSignedIn(ctx, t, b, ten, "/admin/settings/developer")
	if html := mustRunStep(ctx, t, "page", chromedp.OuterHTML(chromedp.CSS("html"))); strings.Contains(html, `id="new-signing-key"`) || strings.Contains(html, "vsk_") {
		t.Fatal("a signing key is shown before any rotation")
	}

	if msg := clickAndConfirm(ctx, t, "#rotate-signing-key button[type=submit]"); !strings.Contains(msg, "new visitor signing key") ||
		!strings.Contains(msg, "stop working") {
		t.Errorf("confirmation = %q", msg)
	}
	waitUntil(ctx, t, "the new key", `document.readyState === 'complete' && document.getElementById('new-signing-key') !== null`)
	key := strings.TrimSpace(mustRunStep(ctx, t, "new key", chromedp.Text(chromedp.ID("new-signing-key"))))
	if !signingKeyPattern.MatchString(key) {
		t.Fatalf("shown key = %q", key)
	}
	if got := b.visitorKey(t, ten.ID); string(got) != key {
		t.Errorf("stored key opens to %q, want the key shown", got)
	}
	if warning := mustRunStep(ctx, t, "warning", chromedp.Text(chromedp.ID("signing-key-once"))); !strings.Contains(warning, "shown once") {
		t.Errorf("warning = %q", warning)
	}

	t.Run("Copy", func(t *testing.T) {
		mustStep(t, "clicking Copy", chromedp.Do(ctx, chromedp.Click(chromedp.ID("copy-signing-key"))))
		// Headless Chromium may deny the clipboard: the script then selects the key.
		waitUntil(ctx, t, "the copy button's feedback", `['Copied', 'Selected: press Ctrl+C'].includes(document.getElementById('copy-signing-key').textContent)`)
	})

	t.Run("TokenWithKey", func(t *testing.T) {
		claims := jwt.MapClaims{"sub": "ext-1", "exp": time.Now().Add(time.Minute).Unix()}
		path := "/chat/" + ten.Slug
		if r := b.chat(t, path, map[string]any{"message": "Hi", "sessionId": "sk-new"},
			map[string]string{"X-Agent-Model": "m", "X-Visitor-Token": signVisitor(t, jwt.SigningMethodHS256, []byte(key), claims)}); r.status != http.StatusOK {
			t.Errorf("token signed with the shown key: %d %v", r.status, r.body)
		}
		if r := b.chat(t, path, map[string]any{"message": "Hi", "sessionId": "sk-old"},
			map[string]string{"X-Agent-Model": "m", "X-Visitor-Token": signVisitor(t, jwt.SigningMethodHS256, oldKey, claims)}); r.status != http.StatusUnauthorized {
			t.Errorf("token signed with the old key: %d %v", r.status, r.body)
		}
	})

	t.Run("ShownOnce", func(t *testing.T) {
		mustStep(t, "reloading", chromedp.Do(ctx, chromedp.Reload()))
		waitUntil(ctx, t, "the reloaded page", `document.readyState === 'complete' && document.getElementById('rotate-signing-key') !== null`)
		html := mustRunStep(ctx, t, "page", chromedp.OuterHTML(chromedp.CSS("html")))
		if strings.Contains(html, key) || strings.Contains(html, `id="new-signing-key"`) {
			t.Error("the key is still shown after a reload")
		}
		_, _, raw := b.request(t, "GET", "/tenants/"+ten.Slug, map[string]string{"Authorization": "Bearer " + ten.Token}, "")
		if strings.Contains(raw, key) {
			t.Error("GET /tenants/{slug} shows the key")
		}
	})

	t.Run("ReplyEndpoint", func(t *testing.T) {
		mustStep(t, "typing a private address", chromedp.Do(ctx,
			chromedp.Navigate(b.ts.URL+"/admin/settings/developer"),
			fillField("llmWebhookUrl", "https://10.1.2.3/reply"),
		))
		if status := submitForm(ctx, t, "#settings-form button[type=submit]"); status != http.StatusUnprocessableEntity {
			t.Fatalf("saving a private address: status %d", status)
		}
		if msg := mustRunStep(ctx, t, "error", chromedp.Text(chromedp.ID("err-llmWebhookUrl"))); !strings.Contains(msg, "private or reserved") {
			t.Errorf("error = %q", msg)
		}
		mustStep(t, "typing a public address", chromedp.Do(ctx, fillField("llmWebhookUrl", "https://93.184.216.34/reply")))
		if status := submitForm(ctx, t, "#settings-form button[type=submit]"); status != http.StatusOK {
			t.Fatalf("saving a public address: status %d", status)
		}
		if v := mustRunStep(ctx, t, "field", chromedp.Value(chromedp.ID("llmWebhookUrl"))); v != "https://93.184.216.34/reply" {
			t.Errorf("field after saving = %q", v)
		}
		if got := b.tenantNow(t, ten.Slug).LLMWebhookURL; got == nil || *got != "https://93.184.216.34/reply" {
			t.Errorf("stored %v", got)
		}
		// Emptying the field clears it.
		mustStep(t, "emptying", chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('llmWebhookUrl').value = ''`)))
		if status := submitForm(ctx, t, "#settings-form button[type=submit]"); status != http.StatusOK {
			t.Fatalf("clearing: status %d", status)
		}
		if got := b.tenantNow(t, ten.Slug).LLMWebhookURL; got != nil {
			t.Errorf("stored after clearing %v", *got)
		}
	})
}
