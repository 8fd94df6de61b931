package admin_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/golang-jwt/jwt/v5"

	"github.com/parley/parley/web/webtest"
)

func TestAdminSigningKeyBrowser(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.OwnedTenant(t, "starter")
	ctx := webtest.BrowserTab(t)
	oldKey := b.VisitorKey(t, ten.ID)
	webtest.OpenSignedIn(ctx, t, b, ten, "/admin/settings/developer")
	if html := webtest.MustRunStep(ctx, t, "page", chromedp.OuterHTML(chromedp.CSS("html"))); strings.Contains(html, `id="new-signing-key"`) || strings.Contains(html, "vsk_") {
		t.Fatal("a signing key is shown before any rotation")
	}

	if msg := webtest.ClickAndConfirm(ctx, t, "#rotate-signing-key button[type=submit]"); !strings.Contains(msg, "new visitor signing key") ||
		!strings.Contains(msg, "stop working") {
		t.Errorf("confirmation = %q", msg)
	}
	webtest.WaitUntil(ctx, t, "the new key", `document.readyState === 'complete' && document.getElementById('new-signing-key') !== null`)
	key := strings.TrimSpace(webtest.MustRunStep(ctx, t, "new key", chromedp.Text(chromedp.ID("new-signing-key"))))
	if !webtest.SigningKeyPattern.MatchString(key) {
		t.Fatalf("shown key = %q", key)
	}
	if got := b.VisitorKey(t, ten.ID); string(got) != key {
		t.Errorf("stored key opens to %q, want the key shown", got)
	}
	if warning := webtest.MustRunStep(ctx, t, "warning", chromedp.Text(chromedp.ID("signing-key-once"))); !strings.Contains(warning, "shown once") {
		t.Errorf("warning = %q", warning)
	}

	t.Run("Copy", func(t *testing.T) {
		webtest.MustStep(t, "clicking Copy", chromedp.Do(ctx, chromedp.Click(chromedp.ID("copy-signing-key"))))
		// Headless Chromium may deny the clipboard: the script then selects the key.
		webtest.WaitUntil(ctx, t, "the copy button's feedback", `['Copied', 'Selected: press Ctrl+C'].includes(document.getElementById('copy-signing-key').textContent)`)
	})

	t.Run("TokenWithKey", func(t *testing.T) {
		claims := jwt.MapClaims{"sub": "ext-1", "exp": time.Now().Add(time.Minute).Unix()}
		path := "/chat/" + ten.Slug
		if r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "sk-new"},
			map[string]string{"X-Agent-Model": "m", "X-Visitor-Token": webtest.SignVisitor(t, jwt.SigningMethodHS256, []byte(key), claims)}); r.Status != http.StatusOK {
			t.Errorf("token signed with the shown key: %d %v", r.Status, r.Body)
		}
		if r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "sk-old"},
			map[string]string{"X-Agent-Model": "m", "X-Visitor-Token": webtest.SignVisitor(t, jwt.SigningMethodHS256, oldKey, claims)}); r.Status != http.StatusUnauthorized {
			t.Errorf("token signed with the old key: %d %v", r.Status, r.Body)
		}
	})

	t.Run("ShownOnce", func(t *testing.T) {
		webtest.MustStep(t, "reloading", chromedp.Do(ctx, chromedp.Reload()))
		webtest.WaitUntil(ctx, t, "the reloaded page", `document.readyState === 'complete' && document.getElementById('rotate-signing-key') !== null`)
		html := webtest.MustRunStep(ctx, t, "page", chromedp.OuterHTML(chromedp.CSS("html")))
		if strings.Contains(html, key) || strings.Contains(html, `id="new-signing-key"`) {
			t.Error("the key is still shown after a reload")
		}
		_, _, raw := b.Request(t, "GET", "/tenants/"+ten.Slug, map[string]string{"Authorization": "Bearer " + ten.Token}, "")
		if strings.Contains(raw, key) {
			t.Error("GET /tenants/{slug} shows the key")
		}
	})

	t.Run("ReplyEndpoint", func(t *testing.T) {
		webtest.MustStep(t, "typing a private address", chromedp.Do(ctx,
			chromedp.Navigate(b.TS.URL+"/admin/settings/developer"),
			webtest.FillField("llmWebhookUrl", "https://10.1.2.3/reply"),
		))
		if status := webtest.SubmitForm(ctx, t, "#settings-form button[type=submit]"); status != http.StatusUnprocessableEntity {
			t.Fatalf("saving a private address: status %d", status)
		}
		if msg := webtest.MustRunStep(ctx, t, "error", chromedp.Text(chromedp.ID("err-llmWebhookUrl"))); !strings.Contains(msg, "private or reserved") {
			t.Errorf("error = %q", msg)
		}
		webtest.MustStep(t, "typing a public address", chromedp.Do(ctx, webtest.FillField("llmWebhookUrl", "https://93.184.216.34/reply")))
		if status := webtest.SubmitForm(ctx, t, "#settings-form button[type=submit]"); status != http.StatusOK {
			t.Fatalf("saving a public address: status %d", status)
		}
		if v := webtest.MustRunStep(ctx, t, "field", chromedp.Value(chromedp.ID("llmWebhookUrl"))); v != "https://93.184.216.34/reply" {
			t.Errorf("field after saving = %q", v)
		}
		if got := b.TenantNow(t, ten.Slug).LLMWebhookURL; got == nil || *got != "https://93.184.216.34/reply" {
			t.Errorf("stored %v", got)
		}
		// Emptying the field clears it.
		webtest.MustStep(t, "emptying", chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('llmWebhookUrl').value = ''`)))
		if status := webtest.SubmitForm(ctx, t, "#settings-form button[type=submit]"); status != http.StatusOK {
			t.Fatalf("clearing: status %d", status)
		}
		if got := b.TenantNow(t, ten.Slug).LLMWebhookURL; got != nil {
			t.Errorf("stored after clearing %v", *got)
		}
	})
}
