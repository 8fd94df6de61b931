package admin

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/views"
)

// toneOptions and policyOptions are the settings page's choices, in the
// owner's words, for every value of parley.BotTones and parley.ContentPolicies.
var (
	toneOptions = []views.Option{
		{Value: "FORMAL", Label: "Formal"}, {Value: "NEUTRAL", Label: "Neutral"}, {Value: "FRIENDLY", Label: "Friendly"},
		{Value: "PLAYFUL", Label: "Playful"}, {Value: "TECHNICAL", Label: "Technical"},
	}
	policyOptions = []views.Option{
		{Value: "SFW_STRICT", Label: "Strict: suitable for all ages"},
		{Value: "SFW", Label: "Safe for work"},
		{Value: "MODERATE", Label: "Moderate: mature topics discussed factually"},
		{Value: "UNFILTERED", Label: "Unfiltered: adult topics discussed frankly"},
	}
)

func settingsForm(t parley.Tenant) views.SettingsForm {
	return views.SettingsForm{
		Name: t.Name, BotName: handlers.Deref(t.BotName), BotTitle: handlers.Deref(t.BotTitle), BotLore: handlers.Deref(t.BotLore),
		BotTone: t.BotTone, UseTutoiement: t.UseTutoiement, AllowEmojis: t.AllowEmojis,
		PrimaryColor: t.PrimaryColor, SecondaryColor: handlers.Deref(t.SecondaryColor), ShowAIBadge: t.ShowAIBadge, ShowSources: t.ShowSources,
		BotAvatar: handlers.Deref(t.BotAvatar), TeaserText: handlers.Deref(t.TeaserText),
		AutoOpen: t.AutoOpen, AutoOpenDelay: strconv.Itoa(t.AutoOpenDelay), BubblePulse: t.BubblePulse,
		AllowedDomains: strings.Join(t.AllowedDomains, "\n"), ContentPolicy: t.ContentPolicy,
		HasWidgetKey: t.WidgetKey != nil, WidgetKey: handlers.Deref(t.WidgetKey), LLMWebhookURL: handlers.Deref(t.LLMWebhookURL),
		VisitorAuthMode: handlers.Deref(t.VisitorAuthMode), VisitorContextURL: handlers.Deref(t.VisitorContextURL),
		CaptchaEnabled: t.CaptchaEnabled, CaptchaSiteKey: handlers.Deref(t.CaptchaSiteKey), HasCaptchaSecret: t.CaptchaSecretKey != nil,
	}
}

func withChoices(f views.SettingsForm) views.SettingsForm {
	f.Tones, f.Policies = toneOptions, policyOptions
	f.AuthModes = dash.VisitorAuthModes
	return f
}

// The settings pages: the assistant's persona, the widget's look, and the
// developer settings (where the chat may run, the reply endpoint, visitor
// identity, bot protection, keys). Each saves only its own fields.
const (
	settingsPersona   = "persona"
	settingsWidget    = "widget"
	settingsDeveloper = "developer"
)

// settingsSections are the pages' paths and titles.
var settingsSections = map[string]struct{ path, title string }{
	settingsPersona:   {"/admin/settings", "Persona"},
	settingsWidget:    {"/admin/settings/widget", "Widget look"},
	settingsDeveloper: {"/admin/settings/developer", "Developer settings"},
}

// settingsSection is the section a settings route serves.
func settingsSection(c echo.Context) string {
	switch {
	case strings.HasSuffix(c.Path(), "/widget"):
		return settingsWidget
	case strings.HasSuffix(c.Path(), "/developer"):
		return settingsDeveloper
	}
	return settingsPersona
}

// ShowSettingsPage renders one of the settings pages.
func (h *Settings) ShowSettingsPage(c echo.Context) error {
	a := dash.AdminFrom(c)
	f := withChoices(settingsForm(a.Tenant))
	f.MailConfigured = h.ResetByEmail
	f.Section = settingsSection(c)
	return h.renderSettings(c, http.StatusOK, a.Tenant, f)
}

// renderSettings renders the settings page of f.Section.
func (h *core) renderSettings(c echo.Context, status int, t parley.Tenant, f views.SettingsForm) error {
	if f.Section != settingsDeveloper {
		if err := h.withSettingsPreview(c, t, &f); err != nil {
			return err
		}
	}
	f.NewSigningKey = h.Sessions.PopString(c.Request().Context(), sessNewSigningKey)
	f.SigningKeyWarning = handlers.SigningKeyWarning
	f.UploadedAvatar = strings.HasPrefix(handlers.Deref(t.BotAvatar), h.BaseURL+avatarPath(t.Slug))
	return handlers.Render(c, status, views.SettingsPage(dash.Page(c, h.Sessions, settingsSections[f.Section].title, "settings"), f))
}

// SaveSettings validates a settings page's fields with the API's rules and
// saves them, or re-renders the page with the errors. Fields of the other
// pages are left as they are.
func (h *Settings) SaveSettings(c echo.Context) error {
	a := dash.AdminFrom(c)
	form, err := c.FormParams()
	if err != nil {
		return handlers.Invalid("Could not read the form")
	}
	get := func(k string) string { return form.Get(k) }
	checked := func(k string) bool { return get(k) == "true" || get(k) == "on" }
	f := withChoices(settingsForm(a.Tenant)) // shown again, with what was typed, on errors
	f.MailConfigured = h.ResetByEmail
	f.Section = settingsSection(c)
	var p parley.TenantInput
	errs := parley.FieldErrors{}
	switch f.Section {
	case settingsPersona:
		p = parley.TenantInput{
			Name: parley.Some(get("name")), BotName: parley.Some(get("botName")), BotTitle: parley.Some(get("botTitle")),
			BotLore: parley.Some(get("botLore")), BotTone: parley.Some(get("botTone")), ContentPolicy: parley.Some(get("contentPolicy")),
			UseTutoiement: parley.Some(checked("useTutoiement")), AllowEmojis: parley.Some(checked("allowEmojis")),
		}
		f.Name, f.BotName, f.BotTitle, f.BotLore, f.BotTone, f.ContentPolicy = get("name"), get("botName"), get("botTitle"),
			get("botLore"), get("botTone"), get("contentPolicy")
		f.UseTutoiement, f.AllowEmojis = checked("useTutoiement"), checked("allowEmojis")
	case settingsWidget:
		p = parley.TenantInput{
			PrimaryColor: parley.Some(strings.TrimSpace(get("primaryColor"))), SecondaryColor: parley.Some(strings.TrimSpace(get("secondaryColor"))),
			ShowAIBadge: parley.Some(checked("showAiBadge")), ShowSources: parley.Some(checked("showSources")), BotAvatar: parley.Some(strings.TrimSpace(get("botAvatar"))),
			TeaserText: parley.Some(get("teaserText")), AutoOpen: parley.Some(checked("autoOpen")), BubblePulse: parley.Some(checked("bubblePulse")),
		}
		if n, err := strconv.Atoi(strings.TrimSpace(get("autoOpenDelay"))); err != nil {
			errs.Add("autoOpenDelay", "must be a whole number of seconds")
		} else {
			p.AutoOpenDelay = parley.Some(n)
		}
		f.PrimaryColor, f.SecondaryColor, f.BotAvatar, f.TeaserText, f.AutoOpenDelay = get("primaryColor"), get("secondaryColor"),
			get("botAvatar"), get("teaserText"), get("autoOpenDelay")
		f.ShowAIBadge, f.ShowSources, f.AutoOpen, f.BubblePulse = checked("showAiBadge"), checked("showSources"), checked("autoOpen"), checked("bubblePulse")
	case settingsDeveloper:
		var domains []string
		for _, line := range strings.FieldsFunc(get("allowedDomains"), func(r rune) bool { return r == '\n' || r == '\r' || r == ',' }) {
			if line = strings.TrimSpace(line); line != "" {
				domains = append(domains, line)
			}
		}
		p = parley.TenantInput{
			AllowedDomains: parley.Some(domains), LLMWebhookURL: parley.Some(get("llmWebhookUrl")),
			VisitorAuthMode: parley.Some(get("visitorAuthMode")), VisitorContextURL: parley.Some(get("visitorContextUrl")),
			CaptchaEnabled: parley.Some(checked("captchaEnabled")), CaptchaSiteKey: parley.Some(strings.TrimSpace(get("captchaSiteKey"))),
		}
		// The secret is write-only: an empty field keeps the stored one.
		if secret := strings.TrimSpace(get("captchaSecretKey")); secret != "" {
			p.CaptchaSecretKey = parley.Some(secret)
		}
		f.AllowedDomains, f.LLMWebhookURL, f.VisitorAuthMode, f.VisitorContextURL = get("allowedDomains"), get("llmWebhookUrl"),
			get("visitorAuthMode"), get("visitorContextUrl")
		f.CaptchaEnabled, f.CaptchaSiteKey = checked("captchaEnabled"), get("captchaSiteKey")
	}
	p.Problems = errs
	_, err = h.Manage.UpdateTenant(c.Request().Context(), a.Tenant, p)
	if parley.ErrorKind(err) == parley.KindInvalid {
		f.Errors = views.Errors(err.(*parley.Error).Details.(map[string]string))
		return h.renderSettings(c, http.StatusUnprocessableEntity, a.Tenant, f)
	}
	if err != nil {
		return err
	}
	h.Sessions.Put(c.Request().Context(), dash.SessFlash, "Settings saved.")
	return c.Redirect(http.StatusSeeOther, settingsSections[f.Section].path)
}

// withSettingsPreview adds the live preview of the widget as the default
// segment shows it.
func (h *core) withSettingsPreview(c echo.Context, t parley.Tenant, f *views.SettingsForm) error {
	seg, err := h.DB.DefaultSegment(c.Request().Context(), t.ID)
	if err != nil && parley.ErrorKind(err) != parley.KindNotFound {
		return err
	}
	f.Preview = h.widgetPreview(c, t, seg, "settings-form")
	return nil
}

// SaveWidgetKey generates a new widget key or removes it.
func (h *Settings) SaveWidgetKey(c echo.Context) error {
	a := dash.AdminFrom(c)
	var p db.TenantPatch
	msg := "Widget key removed: any allowed site can use the chat."
	switch c.FormValue("action") {
	case "generate":
		p.WidgetKey = parley.Some("wk_" + base64.RawURLEncoding.EncodeToString(auth.RandomBytes(18)))
		msg = "New widget key generated: update the embed code on your site."
	case "clear":
		p.WidgetKey = parley.Opt[string]{Set: true, Null: true}
	default:
		return handlers.Invalid("action must be generate or clear")
	}
	if _, err := h.DB.UpdateTenant(c.Request().Context(), a.Tenant.ID, p); err != nil {
		return err
	}
	h.Sessions.Put(c.Request().Context(), dash.SessFlash, msg)
	return c.Redirect(http.StatusSeeOther, "/admin/settings/developer#widget-key")
}

// SaveVisitorSigningKey rotates the key from the settings page, which shows it once after the redirect.
func (h *Settings) SaveVisitorSigningKey(c echo.Context) error {
	ctx := c.Request().Context()
	key, err := h.RotateSigningKey(ctx, dash.AdminFrom(c).Tenant.ID)
	if err != nil {
		return err
	}
	h.Sessions.Put(ctx, sessNewSigningKey, key)
	return c.Redirect(http.StatusSeeOther, "/admin/settings/developer#visitor-signing-key")
}

// sessNewSigningKey holds a just-rotated visitor signing key until the page
// after the redirect shows it, once.
const sessNewSigningKey = "newVisitorSigningKey"
