package web_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/web/webtest"
)

func TestBrowserSettings(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.OwnedTenant(t, "starter")
	ctx := webtest.BrowserTab(t)
	webtest.OpenSignedIn(ctx, t, b, ten, "/admin")

	t.Run("Overview", func(t *testing.T) {
		if plan := webtest.MustRunStep(ctx, t, "plan", chromedp.Text(chromedp.ID("plan"))); plan != "starter" {
			t.Errorf("plan = %q, want starter", plan)
		}
		embed := webtest.MustRunStep(ctx, t, "embed code", chromedp.Text(chromedp.ID("embed-code")))
		if want := `<script src="` + b.Srv.Config.CDNURL + `/widget.js" data-tenant="` + ten.Slug + `" async></script>`; embed != want {
			t.Errorf("embed code = %q, want %q", embed, want)
		}
	})

	before, err := b.DB.TenantBySlug(context.Background(), ten.Slug)
	webtest.MustStep(t, "reading the tenant", err)

	t.Run("Save", func(t *testing.T) {
		webtest.MustStep(t, "opening settings", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin/settings")))
		if h1 := webtest.MustRunStep(ctx, t, "title", chromedp.Text(chromedp.CSS("main h1"))); h1 != "Persona" {
			t.Fatalf("heading = %q", h1)
		}
		if before.PrimaryColor == "#0A7E8C" {
			t.Fatal("the new colour is already the tenant's: the test would prove nothing")
		}
		webtest.MustStep(t, "editing", chromedp.Do(ctx, webtest.FillField("botName", "Ada Lovebot")))
		if status := webtest.SubmitForm(ctx, t, `#settings-form button[type=submit]`); status != http.StatusOK {
			t.Fatalf("after saving: status %d", status)
		}
		if flash := webtest.OkFlash(ctx, t); flash != "Settings saved." {
			t.Errorf("flash = %q", flash)
		}
		if v := webtest.MustRunStep(ctx, t, "bot name", chromedp.Value(chromedp.ID("botName"))); v != "Ada Lovebot" {
			t.Errorf("bot name shown = %q", v)
		}
		// The widget's look is on its own page, reached by its tab.
		tab := webtest.MustRunStep(ctx, t, "the widget's tab", chromedp.Evaluate[string](`document.querySelector('nav.tabs a[href="/admin/settings/widget"]')?.href || ''`))
		if tab == "" {
			t.Fatal("no tab to the widget's look")
		}
		webtest.MustStep(t, "opening the widget's look", chromedp.Do(ctx, chromedp.Navigate(tab)))
		if h1 := webtest.MustRunStep(ctx, t, "title", chromedp.Text(chromedp.CSS("main h1"))); h1 != "Widget look" {
			t.Fatalf("heading = %q", h1)
		}
		webtest.MustStep(t, "editing", chromedp.Do(ctx, webtest.FillField("primaryColor", "#0A7E8C")))
		if status := webtest.SubmitForm(ctx, t, `#settings-form button[type=submit]`); status != http.StatusOK {
			t.Fatalf("after saving: status %d", status)
		}
		if flash := webtest.OkFlash(ctx, t); flash != "Settings saved." {
			t.Errorf("flash = %q", flash)
		}
		if v := webtest.MustRunStep(ctx, t, "primary colour", chromedp.Value(chromedp.ID("primaryColor"))); v != "#0A7E8C" {
			t.Errorf("primary colour shown = %q", v)
		}
		got, err := b.DB.TenantBySlug(context.Background(), ten.Slug)
		webtest.MustStep(t, "reading the tenant", err)
		if got.BotName == nil || *got.BotName != "Ada Lovebot" || got.PrimaryColor != "#0A7E8C" {
			t.Errorf("stored botName %v, primaryColor %q", webtest.StrOrEmpty(got.BotName), got.PrimaryColor)
		}
		// The rest of the form went back unchanged.
		if got.Name != before.Name || got.BotTone != before.BotTone || got.AutoOpenDelay != before.AutoOpenDelay ||
			got.ShowAIBadge != before.ShowAIBadge || got.ContentPolicy != before.ContentPolicy {
			t.Errorf("other fields changed: before %+v, after %+v", before, got)
		}
	})

	t.Run("ColourByNameAndPicker", func(t *testing.T) {
		webtest.MustStep(t, "opening settings", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin/settings/widget")))
		webtest.MustStep(t, "typing a colour name", chromedp.Do(ctx, webtest.FillField("primaryColor", "green"), chromedp.Focus(chromedp.ID("teaserText"))))
		const read = `document.getElementById('primaryColor').value + ' ' + document.querySelector('[data-colour-for=primaryColor]').value`
		webtest.WaitUntil(ctx, t, "the name made a colour", read+` === '#008000 #008000'`)
		webtest.MustStep(t, "picking", chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`(() => { const p = document.querySelector('[data-colour-for=primaryColor]');
			p.value = '#aa0011'; p.dispatchEvent(new Event('input', {bubbles: true})); })()`)))
		if got := webtest.MustRunStep(ctx, t, "picked", chromedp.Evaluate[string](read)); got != "#AA0011 #aa0011" {
			t.Errorf("after picking: text and picker = %q", got)
		}
		if !leavePage(ctx, t, b.TS.URL+"/admin/settings/widget") {
			t.Error("leaving a picked colour unsaved did not ask")
		}
	})

	t.Run("InvalidColour", func(t *testing.T) {
		webtest.MustStep(t, "opening settings", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin/settings/widget")))
		webtest.MustStep(t, "editing", chromedp.Do(ctx, webtest.FillField("teaserText", "Not saved"), webtest.FillField("primaryColor", "#12345G")))
		if status := webtest.SubmitForm(ctx, t, `#settings-form button[type=submit]`); status != http.StatusUnprocessableEntity {
			t.Errorf("status %d, want 422", status)
		}
		if msg := webtest.MustRunStep(ctx, t, "field error", chromedp.Text(chromedp.ID("err-primaryColor"))); msg != "must be a hex colour #RRGGBB" {
			t.Errorf("primaryColor error = %q", msg)
		}
		if msg := webtest.MustRunStep(ctx, t, "form error", chromedp.Text(chromedp.ID("form-errors"))); !strings.Contains(msg, "nothing was saved") {
			t.Errorf("form error = %q", msg)
		}
		if v := webtest.MustRunStep(ctx, t, "primary colour", chromedp.Value(chromedp.ID("primaryColor"))); v != "#12345G" {
			t.Errorf("the form lost what was typed: primary colour %q", v)
		}
		invalid := webtest.MustRunStep(ctx, t, "aria-invalid", chromedp.AttributeValue(chromedp.ID("primaryColor"), "aria-invalid"))
		if invalid.Value != "true" {
			t.Errorf("primaryColor aria-invalid = %q", invalid.Value)
		}
		// The field in error has the focus and names its message.
		webtest.WaitUntil(ctx, t, "the focus on the field in error", `document.activeElement?.id === 'primaryColor'`)
		if got := webtest.MustRunStep(ctx, t, "described by", chromedp.Evaluate[string](`document.getElementById('primaryColor').getAttribute('aria-describedby') || ''`)); !strings.Contains(got, "err-primaryColor") {
			t.Errorf("primaryColor aria-describedby = %q, want its error", got)
		}
		got, err := b.DB.TenantBySlug(context.Background(), ten.Slug)
		webtest.MustStep(t, "reading the tenant", err)
		if got.PrimaryColor != "#0A7E8C" || webtest.StrOrEmpty(got.TeaserText) == "Not saved" {
			t.Errorf("an invalid form was saved: primaryColor %q, teaser %q", got.PrimaryColor, webtest.StrOrEmpty(got.TeaserText))
		}
	})

	t.Run("WidgetKeyAsksFirst", func(t *testing.T) {
		leavePage(ctx, t, b.TS.URL+"/admin/settings/developer") // the rejected form above was left unsaved
		msg := webtest.ClickAndConfirm(ctx, t, "#generate-widget-key button")
		if !strings.Contains(msg, "stops working on your site") {
			t.Errorf("confirmation = %q", msg)
		}
		if flash := webtest.OkFlash(ctx, t); !strings.HasPrefix(flash, "New widget key generated") {
			t.Errorf("flash = %q", flash)
		}
	})
}

func TestBrowserTokens(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.OwnedTenant(t, "builder")
	ctx := webtest.BrowserTab(t)
	webtest.OpenSignedIn(ctx, t, b, ten, "/admin/tokens")

	webtest.MustStep(t, "opening tokens", chromedp.Do(ctx,
		webtest.FillField("token-name", "CRM sync"),
		chromedp.Click(chromedp.CSS(`input[name=scopes][value="settings:read"]`)),
		chromedp.Click(chromedp.CSS(`input[name=scopes][value="stats:read"]`)),
	))
	if status := webtest.SubmitForm(ctx, t, `#token-form button[type=submit]`); status != http.StatusOK {
		t.Fatalf("after creating: status %d", status)
	}
	token := strings.TrimSpace(webtest.MustRunStep(ctx, t, "new token", chromedp.Text(chromedp.ID("new-token"))))
	if !strings.HasPrefix(token, "ak_") {
		t.Fatalf("new token = %q", token)
	}

	// The page links to the reference, and shows a command that uses the
	// new token on a call its scopes allow; run, it answers.
	if n := webtest.MustRunStep(ctx, t, "the reference's link", chromedp.Evaluate[int](`document.querySelectorAll('main a[href="/docs"]').length`)); n == 0 {
		t.Error("the API tokens page does not link to the API reference (/docs)")
	}
	curl := strings.TrimSpace(webtest.MustRunStep(ctx, t, "the curl command", chromedp.Text(chromedp.ID("new-token-curl"))))
	if want := `curl -H "Authorization: Bearer ` + token + `" ` + b.Srv.Config.BaseURL + "/tenants/" + ten.Slug; curl != want {
		t.Errorf("curl command = %q, want %q", curl, want)
	}
	if copyTo := webtest.MustRunStep(ctx, t, "its copy button", chromedp.Evaluate[string](`document.querySelector('[data-copy="new-token-curl"]')?.textContent || ''`)); copyTo != "Copy the command" {
		t.Errorf("the command's copy button = %q", copyTo)
	}
	t.Run("CurlCommandWorks", func(t *testing.T) {
		m := regexp.MustCompile(`^curl -H "([^:"]+): ([^"]+)" (\S+)$`).FindStringSubmatch(curl)
		if m == nil {
			t.Fatalf("curl command %q is not curl -H \"name: value\" address", curl)
		}
		req, err := http.NewRequest(http.MethodGet, strings.Replace(m[3], b.Srv.Config.BaseURL, b.TS.URL, 1), nil)
		webtest.MustStep(t, "the command's request", err)
		req.Header.Set(m[1], m[2])
		resp, err := b.TS.Client().Do(req)
		webtest.MustStep(t, "running the command", err)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("the curl command's request answered %d", resp.StatusCode)
		}
	})

	t.Run("TokenWorks", func(t *testing.T) {
		if status, body := b.Do(t, "GET", "/tenants/"+ten.Slug, token, nil); status != http.StatusOK {
			t.Errorf("GET with the new token: %d %v", status, body)
		}
		// Only the chosen scopes: settings:write was not ticked.
		status, body := b.Do(t, "PUT", "/tenants/"+ten.Slug, token, map[string]any{"botName": "x"})
		if status != http.StatusForbidden || body["error"] != "Missing scope: "+auth.ScopeSettingsWrite {
			t.Errorf("PUT with a read-only token: %d %v", status, body)
		}
	})

	ts, err := b.DB.ListTokens(context.Background(), ten.ID)
	webtest.MustStep(t, "listing tokens", err)
	var id string
	for _, tk := range ts {
		if tk.Name == "CRM sync" {
			id = tk.ID
			if strings.Join(tk.Scopes, ",") != "settings:read,stats:read" {
				t.Errorf("stored scopes = %v", tk.Scopes)
			}
		}
	}
	if id == "" {
		t.Fatalf("no stored token named CRM sync among %+v", ts)
	}
	row := "#token-" + id

	t.Run("ShownOnce", func(t *testing.T) {
		webtest.MustStep(t, "reloading", chromedp.Do(ctx, chromedp.Reload()))
		html := webtest.MustRunStep(ctx, t, "page", chromedp.OuterHTML(chromedp.CSS("html")))
		if strings.Contains(html, token) || strings.Contains(html, `id="new-token"`) || strings.Contains(html, `id="new-token-curl"`) {
			t.Error("the token is still shown after a reload")
		}
		if scopes := webtest.MustRunStep(ctx, t, "row", chromedp.Text(chromedp.CSS(row+" td:nth-child(3)"))); !strings.Contains(scopes, "Read settings") || !strings.Contains(scopes, "Read analytics") {
			t.Errorf("row scopes = %q", scopes)
		}
	})

	t.Run("Revoke", func(t *testing.T) {
		if msg := webtest.ClickAndConfirm(ctx, t, row+" button"); !strings.Contains(msg, "Revoke token CRM sync?") {
			t.Errorf("confirmation = %q", msg)
		}
		webtest.MustStep(t, "waiting for the revoked row", chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(row+" .badge.revoked"))))
		if txt := webtest.MustRunStep(ctx, t, "badge", chromedp.Text(chromedp.CSS(row+" .badge.revoked"))); txt != "revoked" {
			t.Errorf("badge = %q", txt)
		}
		// htmx swapped the row in place: no navigation happened.
		if loc := webtest.MustRunStep(ctx, t, "location", chromedp.Location()); loc != b.TS.URL+"/admin/tokens" {
			t.Errorf("location after revoking = %s", loc)
		}
		if status, body := b.Do(t, "GET", "/tenants/"+ten.Slug, token, nil); status != http.StatusUnauthorized {
			t.Errorf("GET with the revoked token: %d %v", status, body)
		}
	})
}
