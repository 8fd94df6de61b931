package web_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parley/parley/web/webtest"
)

// previewShadow is the shadow root of the widget drawn in the dashboard's
// live preview.
const previewShadow = `document.querySelector('#widget-preview parley-widget').shadowRoot`

// TestWidgetPreviewBrowser drives the dashboard's live preview in Chromium:
// the real widget beside the Persona & widget settings and the segment
// editor follows what the owner types before anything is saved; the embed
// code of a segment selects it and copies; and the overview says when the
// widget has loaded on the tenant's site.
func TestWidgetPreviewBrowser(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	b.AtItsAddress()
	b.Srv.Base.CDNURL = b.TS.URL
	ten := b.OwnedTenant(t, "starter")
	if st, body := b.Do(t, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"botName": "Spoke", "primaryColor": "#1d4ed8",
		"teaserText": "Need a bike?", "captchaEnabled": true, "captchaSiteKey": "0x4AAA-site", "captchaSecretKey": "0x4AAA-secret"}); st != 200 {
		t.Fatalf("settings: %d %v", st, body)
	}
	st, seg := b.Do(t, "POST", "/tenants/"+ten.Slug+"/segments", ten.Token, map[string]any{"name": "Wholesale", "slug": "wholesale",
		"systemPrompt": "Help trade buyers.", "welcomeMessage": "Hello, trade buyer!"})
	if st != 201 {
		t.Fatalf("segment: %d %v", st, seg)
	}
	ctx := webtest.BrowserTab(t)
	webtest.OpenSignedIn(ctx, t, b, ten, "/admin/settings")
	str := func(step, js string) string {
		t.Helper()
		return webtest.MustRunStep(ctx, t, step, chromedp.Evaluate[string](js))
	}
	const sr = previewShadow

	t.Run("Settings", func(t *testing.T) {
		webtest.WaitUntil(ctx, t, "the preview", `!!document.querySelector('#widget-preview parley-widget')?.shadowRoot?.querySelector('.panel:not([hidden])')`)
		if got := str("saved look", sr+`.querySelector('header .name').innerText + ' | ' + `+sr+`.querySelector('.teaser').innerText + ' | ' + getComputedStyle(`+sr+`.querySelector('.launcher')).backgroundColor`); got != "Spoke | Need a bike? | rgb(29, 78, 216)" {
			t.Errorf("preview of the saved settings = %q", got)
		}
		// Typing changes the preview before anything is saved: the name on
		// the persona page, the look on the widget's page.
		webtest.MustStep(t, "typing", chromedp.Do(ctx, webtest.FillField("botName", "Velo")))
		webtest.WaitUntil(ctx, t, "the typed name", sr+`.querySelector('header .name').innerText === 'Velo'`)
		if !leavePage(ctx, t, b.TS.URL+"/admin/settings/widget") {
			t.Error("leaving the persona with unsaved changes did not ask")
		}
		webtest.WaitUntil(ctx, t, "the preview", `!!document.querySelector('#widget-preview parley-widget')?.shadowRoot?.querySelector('.panel:not([hidden])')`)
		webtest.MustStep(t, "typing", chromedp.Do(ctx, webtest.FillField("primaryColor", "#0A7E8C"),
			webtest.FillField("teaserText", "Ask about our e-bikes"), webtest.FillField("botAvatar", "data:image/gif;base64,R0lGODlhAQABAAAAACw=")))
		webtest.WaitUntil(ctx, t, "the typed teaser", sr+`.querySelector('.teaser').innerText === 'Ask about our e-bikes'`)
		if got := str("typed look", sr+`.querySelector('.teaser').innerText + ' | ' + getComputedStyle(`+sr+`.querySelector('.launcher')).backgroundColor + ' | ' + (`+sr+`.querySelector('img.avatar')?.getAttribute('src') || 'no avatar')`); got != "Ask about our e-bikes | rgb(10, 126, 140) | data:image/gif;base64,R0lGODlhAQABAAAAACw=" {
			t.Errorf("preview after typing = %q", got)
		}
		// A colour half typed keeps the last good one; the teaser emptied goes.
		webtest.MustStep(t, "typing more", chromedp.Do(ctx, webtest.FillField("primaryColor", "#12"), webtest.FillField("teaserText", "")))
		webtest.WaitUntil(ctx, t, "the teaser to go", sr+`.querySelector('.teaser').hidden`)
		if got := str("colour", `getComputedStyle(`+sr+`.querySelector('.launcher')).backgroundColor`); got != "rgb(29, 78, 216)" {
			t.Errorf("launcher colour with an unfinished colour typed = %q, want the saved one", got)
		}
		// The preview can be chatted in, with the unsaved look, through the
		// test chat: the conversation is a test, and no bot challenge loads
		// though the tenant has the gate on.
		webtest.MustStep(t, "a colour again", chromedp.Do(ctx, webtest.FillField("primaryColor", "#0A7E8C")))
		webtest.WaitUntil(ctx, t, "the typed colour", `getComputedStyle(`+sr+`.querySelector('.launcher')).backgroundColor === 'rgb(10, 126, 140)'`)
		_, err := chromedp.Run(ctx, chromedp.Evaluate[any](`(() => { `+sr+`.querySelector('textarea').value = 'When are you open?';
			`+sr+`.querySelector('form.compose button').click(); })()`))
		webtest.MustStep(t, "chatting in the preview", err)
		webtest.WaitUntil(ctx, t, "the preview's answer", sr+`.querySelector('.msg.me')?.innerText === 'When are you open?' && !!`+sr+`.querySelector('details.used')`)
		if got := str("look while chatting", `getComputedStyle(`+sr+`.querySelector('.msg.me')).backgroundColor`); got != "rgb(10, 126, 140)" {
			t.Errorf("the visitor's bubble in the preview is %s, want the unsaved colour", got)
		}
		if n := b.Count(t, `SELECT count(*) FROM conversations WHERE tenant_id = $1 AND is_test AND session_id LIKE 'test-%'`, ten.ID); n != 1 {
			t.Errorf("%d test conversations from the preview, want 1", n)
		}
		if got := str("challenge", `String(document.querySelectorAll('script[src*="turnstile"], [slot=captcha]').length) + ' ' + String(!!window.turnstile)`); got != "0 false" {
			t.Errorf("challenge scripts and containers, turnstile = %q, want none in a preview", got)
		}
		webtest.SaveScreenshot(ctx, t, "widget-preview")
		got, err := b.DB.TenantBySlug(context.Background(), ten.Slug)
		webtest.MustStep(t, "reading the tenant", err)
		if webtest.StrOrEmpty(got.BotName) != "Spoke" || got.PrimaryColor != "#1d4ed8" {
			t.Errorf("typing saved: botName %q, primaryColor %q", webtest.StrOrEmpty(got.BotName), got.PrimaryColor)
		}
		// Leaving with changes unsaved asks first.
		if !leavePage(ctx, t, b.TS.URL+"/admin/segments") {
			t.Error("leaving the settings with unsaved changes did not ask")
		}
	})

	t.Run("Segment", func(t *testing.T) {
		webtest.MustStep(t, "opening the segment", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin/segments/"+seg["id"].(string))))
		webtest.WaitUntil(ctx, t, "the welcome message", sr+`?.querySelector('.msg.bot')?.innerText === 'Hello, trade buyer!'`)
		webtest.MustStep(t, "typing", chromedp.Do(ctx, webtest.FillField("welcomeMessage", "Welcome, wholesalers"),
			webtest.FillField("starter-0-text", "Bulk prices?"), webtest.FillField("starter-0-emoji", "📦")))
		webtest.WaitUntil(ctx, t, "the typed welcome and starter", sr+`.querySelector('.msg.bot')?.innerText === 'Welcome, wholesalers' && `+
			sr+`.querySelector('.starters button')?.innerText === '📦 Bulk prices?'`)
		// The lead form shows once it has a field: the common ones are one
		// click each (and turn the form on), another is typed.
		webtest.MustStep(t, "building the form", chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#add-name`)), chromedp.Click(chromedp.CSS(`#add-email`)),
			chromedp.Click(chromedp.CSS(`#add-field`)),
			webtest.KeyIn(chromedp.CSS(`#form-fields tbody tr:last-child input[name$=".label"]`), "Company size")))
		webtest.WaitUntil(ctx, t, "the lead form", `[...`+sr+`.querySelectorAll('form.lead label')].map(l => l.innerText).join('|') === 'Name *|Email *|Company size'`)
		if got := str("both ways on", `String(document.getElementById('askInChat').checked && document.getElementById('formEnabled').checked)`); got != "true" {
			t.Error("a preset did not turn on both ways of collecting the details")
		}
		if got := str("form button", `String(`+sr+`.querySelector('form.lead button').disabled)`); got != "true" {
			t.Error("the preview's lead form can be sent")
		}

		// The segment's embed code selects it, and copies.
		code := str("embed code", `document.getElementById('embed-code').innerText`)
		if want := `<script src="` + b.TS.URL + `/widget.js" data-tenant="` + ten.Slug + `" data-segment="wholesale" async></script>`; code != want {
			t.Errorf("segment embed code = %q, want %q", code, want)
		}
		webtest.MustStep(t, "copying", chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#copy-embed`))))
		webtest.WaitUntil(ctx, t, "the copy", `document.getElementById('copy-embed').innerText !== 'Copy'`)
		// Headless Chromium may refuse the clipboard: the code is then
		// selected for the owner to copy.
		if got := str("copied", `document.getElementById('copy-embed').innerText === 'Copied' ? 'copied' : window.getSelection().toString()`); got != "copied" && got != code {
			t.Errorf("after Copy: %q", got)
		}
		// Saved, the fields get names made from their labels.
		if status := webtest.SubmitForm(ctx, t, `#save-segment`); status != http.StatusOK {
			t.Fatalf("saving the segment: %d", status)
		}
		saved, err := b.DB.Segment(context.Background(), ten.ID, "wholesale")
		webtest.MustStep(t, "reading the segment", err)
		var names []string
		if saved.FormConfig != nil && saved.FormConfig.Enabled {
			for _, f := range saved.FormConfig.Fields {
				names = append(names, f.Name+":"+f.Type)
			}
		}
		if got := strings.Join(names, " "); got != "name:text email:email company_size:text" {
			t.Errorf("saved lead form = %q", got)
		}
	})

	t.Run("Installation", func(t *testing.T) {
		webtest.MustStep(t, "opening the overview", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin")))
		if got := str("before", `document.getElementById('installation').innerText`); !strings.HasPrefix(got, "Not detected") {
			t.Errorf("before any visit: %q", got)
		}
		// A page of the tenant's site (another origin) loads the widget.
		site := tenantSite(t, b, ten.Slug, "")
		openWidgetPage(ctx, t, site.URL)
		webtest.MustStep(t, "back to the overview", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin")))
		if got := str("after", `document.getElementById('installation').innerText`); !strings.HasPrefix(got, "Installation detected") || !strings.Contains(got, site.URL) {
			t.Errorf("after the site loaded the widget: %q", got)
		}
	})

	t.Run("AvatarUpload", func(t *testing.T) {
		pic := filepath.Join(t.TempDir(), "spoke.png")
		if err := os.WriteFile(pic, webtest.PNG(t, 48), 0o600); err != nil {
			t.Fatal(err)
		}
		webtest.MustStep(t, "opening the widget's look", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin/settings/widget")))
		webtest.MustStep(t, "choosing the picture", chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.ID("avatar-file"), []string{pic})))
		if status := webtest.SubmitForm(ctx, t, `#avatar-form button[type=submit]`); status != http.StatusOK {
			t.Fatalf("after uploading: status %d", status)
		}
		if flash := webtest.OkFlash(ctx, t); flash != "Avatar uploaded: the chat shows it now." {
			t.Errorf("flash = %q", flash)
		}
		// The page and the preview show it, loaded from Parley.
		webtest.WaitUntil(ctx, t, "the preview's avatar", sr+`?.querySelector('img.avatar')?.complete && `+sr+`.querySelector('img.avatar').naturalWidth === 48`)
		if got := str("page avatar", `(() => { const i = document.querySelector('img.avatar-current'); return i && i.complete ? i.naturalWidth + ' ' + new URL(i.src).pathname : 'none'; })()`); got != "48 /avatars/"+ten.Slug {
			t.Errorf("the page's avatar = %q", got)
		}
	})
}
