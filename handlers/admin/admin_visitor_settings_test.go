package admin_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parley/parley/web/webtest"
)

func TestAdminVisitorSettingsBrowser(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.OwnedTenant(t, "starter")
	ctx := webtest.BrowserTab(t)
	const save = "#settings-form button[type=submit]"

	// stored reads the chat-security columns as they are in the database.
	type row struct {
		mode, contextURL, siteKey *string
		captcha                   bool
		secret                    []byte
	}
	stored := func(t *testing.T) row {
		t.Helper()
		var r row
		err := b.DB.Pool().QueryRow(context.Background(), `SELECT visitor_auth_mode, visitor_context_url, captcha_enabled,
			captcha_site_key, captcha_secret_key FROM tenants WHERE id = $1`, ten.ID).Scan(&r.mode, &r.contextURL, &r.captcha, &r.siteKey, &r.secret)
		webtest.MustStep(t, "reading the tenant", err)
		return r
	}

	webtest.OpenSignedIn(ctx, t, b, ten, "/admin/settings/developer")
	if h2 := webtest.MustRunStep(ctx, t, "card", chromedp.Text(chromedp.CSS("#settings-form #visitor-identity h2"))); h2 != "Visitor identity & bot protection" {
		t.Fatalf("card heading = %q", h2)
	}
	if state := webtest.MustRunStep(ctx, t, "secret state", chromedp.Text(chromedp.ID("captcha-secret-state"))); strings.TrimSpace(state) != "No secret key set." {
		t.Errorf("secret state before any key = %q", state)
	}

	t.Run("PrivateContextURL", func(t *testing.T) {
		webtest.MustStep(t, "editing", chromedp.Do(ctx,
			chooseOption("visitorAuthMode", "jwt"),
			webtest.FillField("visitorContextUrl", "https://10.1.2.3/ctx"),
		))
		if status := webtest.SubmitForm(ctx, t, save); status != http.StatusUnprocessableEntity {
			t.Fatalf("saving a private address: status %d, want 422", status)
		}
		if msg := webtest.MustRunStep(ctx, t, "error", chromedp.Text(chromedp.ID("err-visitorContextUrl"))); !strings.Contains(msg, "private or reserved") {
			t.Errorf("visitorContextUrl error = %q", msg)
		}
		if v := webtest.MustRunStep(ctx, t, "mode", chromedp.Value(chromedp.ID("visitorAuthMode"))); v != "jwt" {
			t.Errorf("the form lost the chosen mode: %q", v)
		}
		if v := webtest.MustRunStep(ctx, t, "context URL", chromedp.Value(chromedp.ID("visitorContextUrl"))); v != "https://10.1.2.3/ctx" {
			t.Errorf("the form lost the typed URL: %q", v)
		}
		if r := stored(t); r.mode != nil || r.contextURL != nil {
			t.Errorf("an invalid form was saved: mode %q, context URL %q", webtest.StrOrEmpty(r.mode), webtest.StrOrEmpty(r.contextURL))
		}
	})

	t.Run("PublicContextURL", func(t *testing.T) {
		webtest.MustStep(t, "fixing the URL", chromedp.Do(ctx, webtest.FillField("visitorContextUrl", "https://93.184.216.34/ctx")))
		if status := webtest.SubmitForm(ctx, t, save); status != http.StatusOK {
			t.Fatalf("saving a public address: status %d", status)
		}
		if r := stored(t); webtest.StrOrEmpty(r.mode) != "jwt" || webtest.StrOrEmpty(r.contextURL) != "https://93.184.216.34/ctx" {
			t.Errorf("stored mode %q, context URL %q", webtest.StrOrEmpty(r.mode), webtest.StrOrEmpty(r.contextURL))
		}
		if v := webtest.MustRunStep(ctx, t, "mode", chromedp.Value(chromedp.ID("visitorAuthMode"))); v != "jwt" {
			t.Errorf("mode shown after saving = %q", v)
		}
	})

	t.Run("CaptchaWithoutKeys", func(t *testing.T) {
		webtest.MustStep(t, "ticking captchaEnabled", chromedp.Do(ctx, chromedp.Click(chromedp.ID("captchaEnabled"))))
		if status := webtest.SubmitForm(ctx, t, save); status != http.StatusUnprocessableEntity {
			t.Fatalf("enabling without keys: status %d, want 422", status)
		}
		for _, id := range []string{"err-captchaSiteKey", "err-captchaSecretKey"} {
			if msg := webtest.MustRunStep(ctx, t, id, chromedp.Text(chromedp.ID(id))); !strings.Contains(msg, "is required") {
				t.Errorf("%s = %q", id, msg)
			}
		}
		if on := webtest.MustRunStep(ctx, t, "checkbox", chromedp.Evaluate[bool](`document.getElementById('captchaEnabled').checked`)); !on {
			t.Error("the form lost the ticked checkbox")
		}
		if r := stored(t); r.captcha {
			t.Error("captcha was enabled without keys")
		}
	})

	var sealed []byte
	t.Run("CaptchaWithKeys", func(t *testing.T) {
		const secret = "0x4AAAAAAAsecret-plain"
		webtest.MustStep(t, "filling the keys", chromedp.Do(ctx,
			webtest.FillField("captchaSiteKey", "0x4AAAAAAAsite"),
			webtest.FillField("captchaSecretKey", secret),
		))
		if status := webtest.SubmitForm(ctx, t, save); status != http.StatusOK {
			t.Fatalf("saving the keys: status %d", status)
		}
		r := stored(t)
		if !r.captcha || webtest.StrOrEmpty(r.siteKey) != "0x4AAAAAAAsite" {
			t.Errorf("stored captcha_enabled %v, site key %q", r.captcha, webtest.StrOrEmpty(r.siteKey))
		}
		if len(r.secret) == 0 || bytes.Contains(r.secret, []byte(secret)) {
			t.Errorf("stored secret %q is not sealed", r.secret)
		} else if plain, err := b.Box.Open(r.secret); err != nil || string(plain) != secret {
			t.Errorf("stored secret opens to %q, %v", plain, err)
		}
		sealed = r.secret
		if state := webtest.MustRunStep(ctx, t, "secret state", chromedp.Text(chromedp.ID("captcha-secret-state"))); strings.TrimSpace(state) != "A secret key is set." {
			t.Errorf("secret state = %q", state)
		}
		if v := webtest.MustRunStep(ctx, t, "secret field", chromedp.Value(chromedp.ID("captchaSecretKey"))); v != "" {
			t.Errorf("secret field = %q, want empty", v)
		}
		if html := webtest.MustRunStep(ctx, t, "page", chromedp.OuterHTML(chromedp.CSS("html"))); strings.Contains(html, secret) {
			t.Error("the page shows the secret")
		}
	})

	t.Run("KeepSecret", func(t *testing.T) {
		if sealed == nil {
			t.Fatal("no stored secret to compare with: CaptchaWithKeys failed")
		}
		if status := webtest.SubmitForm(ctx, t, save); status != http.StatusOK {
			t.Fatalf("saving with an empty secret field: status %d", status)
		}
		if r := stored(t); !bytes.Equal(r.secret, sealed) || !r.captcha {
			t.Errorf("stored secret changed or captcha turned off: %v, %q", r.captcha, r.secret)
		}
		if state := webtest.MustRunStep(ctx, t, "secret state", chromedp.Text(chromedp.ID("captcha-secret-state"))); strings.TrimSpace(state) != "A secret key is set." {
			t.Errorf("secret state = %q", state)
		}
	})

	t.Run("ClearMode", func(t *testing.T) {
		webtest.MustStep(t, "choosing none", chromedp.Do(ctx, chooseOption("visitorAuthMode", "")))
		if status := webtest.SubmitForm(ctx, t, save); status != http.StatusOK {
			t.Fatalf("clearing the mode: status %d", status)
		}
		if r := stored(t); r.mode != nil {
			t.Errorf("stored mode after clearing = %q", *r.mode)
		}
	})
}

// TestAdminVisitorAuthWarning: where the visitor identification is chosen,
// a tenant without a mode is told plainly that a visitor's id alone reaches
// their memory, and pointed at signed tokens; with a mode, the warning goes.
func TestAdminVisitorAuthWarning(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	ten := b.OwnedTenant(t, "starter")
	c := b.NewAdminClient(t)
	c.SignIn(ten)
	if p := c.Get("/admin/settings/developer"); !strings.Contains(p.Text("#visitor-auth-warning"), "anyone who knows a visitor's id") {
		t.Errorf("without a mode: warning %q", p.Text("#visitor-auth-warning"))
	}
	form := c.SettingsFormAt("/admin/settings/developer")
	form.Set("visitorAuthMode", "jwt")
	if p := c.Submit("/admin/settings/developer", form); p.Status != http.StatusSeeOther {
		t.Fatalf("saving jwt: %d %s", p.Status, p.Text(".field-error"))
	}
	if p := c.Get("/admin/settings/developer"); p.Doc.Find("#visitor-auth-warning").Length() != 0 {
		t.Error("the warning stays with jwt chosen")
	}
}

// TestAdminVisitorOTPNeedsMail: where the mode is chosen, a server without
// PARLEY_SMTP_URL says that codes by email need the operator to set it; a
// server with mail says nothing.
func TestAdminVisitorOTPNeedsMail(t *testing.T) {
	t.Parallel()
	for _, withMail := range []bool{false, true} {
		var env map[string]string
		if withMail {
			env = map[string]string{"PARLEY_SMTP_URL": "smtp://127.0.0.1:2525?from=no-reply@parley.test"}
		}
		b := webtest.SetupAdmin(t, env)
		ten := b.OwnedTenant(t, "starter")
		c := b.NewAdminClient(t)
		c.SignIn(ten)
		note := c.Get("/admin/settings/developer").Text("#visitor-otp-mail")
		if withMail != (note == "") || (!withMail && !strings.Contains(note, "PARLEY_SMTP_URL")) {
			t.Errorf("mail configured %v: note %q", withMail, note)
		}
	}
}
