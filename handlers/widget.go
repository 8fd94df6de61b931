package handlers

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/widget"
)

// widgetSettingsMaxAge is how long browsers and shared caches may keep a
// tenant's widget settings before asking again (with the ETag, which costs
// a 304 when nothing changed): a saved change shows within a minute.
const widgetSettingsMaxAge = "60"

// widgetSettingsJSON is what the embedded widget shows and how it behaves,
// for one segment: the tenant's public look and behaviour, nothing private
// (no prompt, no key, no secret).
type widgetSettingsJSON struct {
	Tenant     string                   `json:"tenant"`
	Name       string                   `json:"name"`
	Segment    widgetSegmentJSON        `json:"segment"`
	Bot        widgetBotJSON            `json:"bot"`
	Launcher   widgetLauncherJSON       `json:"launcher"`
	BookingCTA *parley.BookingCTAConfig `json:"bookingCta"`
	Captcha    *widgetCaptchaJSON       `json:"captcha"`
	Endpoints  widgetEndpointsJSON      `json:"endpoints"`
	Form       *widgetFormJSON          `json:"form"`
}

type widgetSegmentJSON struct {
	Slug                 string           `json:"slug"`
	WelcomeMessage       *string          `json:"welcomeMessage"`
	ConversationStarters []parley.Starter `json:"conversationStarters"`
}

type widgetBotJSON struct {
	Name             *string `json:"name"`
	Title            *string `json:"title"`
	AvatarType       string  `json:"avatarType"`
	Avatar           *string `json:"avatar"`
	AvatarBackground *string `json:"avatarBackground"`
	PrimaryColor     string  `json:"primaryColor"`
	SecondaryColor   *string `json:"secondaryColor"`
	ShowAIBadge      bool    `json:"showAiBadge"`
}

type widgetLauncherJSON struct {
	TeaserText    *string `json:"teaserText"`
	AutoOpen      bool    `json:"autoOpen"`
	AutoOpenDelay int     `json:"autoOpenDelay"`
	BubblePulse   bool    `json:"bubblePulse"`
}

// widgetCaptchaJSON is what the widget needs to solve the bot challenge:
// the tenant's public site key and the provider's script (explicit render).
type widgetCaptchaJSON struct {
	SiteKey   string `json:"siteKey"`
	ScriptURL string `json:"scriptUrl"`
}

type widgetEndpointsJSON struct {
	Chat     string `json:"chat"`
	Feedback string `json:"feedback"`
	Form     string `json:"form"`
}

// widgetFormJSON is the segment's lead form, when enabled.
type widgetFormJSON struct {
	Fields              []parley.FormField `json:"fields"`
	ConfirmationMessage string             `json:"confirmationMessage,omitempty"`
}

// ShowWidgetSettings answers GET /chat/{slug}/widget: the settings the
// embedded widget starts from. It passes chat's tenant gates (plan, origin,
// widget key) and picks the segment as chat does (query segment, else the
// default; an unknown or inactive one is 400). The answer is public and
// cacheable for a minute, varies with Origin and X-Widget-Key, and carries
// an ETag: If-None-Match gets 304 while nothing changed.
func (h *Handler) ShowWidgetSettings(c echo.Context) error {
	hdr := c.Response().Header()
	hdr.Set(echo.HeaderCacheControl, "no-store") // errors are not cached
	t, err := h.chatTenant(c, "")
	if err != nil {
		return err
	}
	seg, err := h.chatSegment(c.Request().Context(), t, c.QueryParam("segment"), "")
	if err != nil {
		return err
	}
	if err := h.noteInstallation(c, t); err != nil {
		return err
	}
	body, err := json.Marshal(h.widgetSettings(t, seg))
	if err != nil {
		return err
	}
	hdr.Add(echo.HeaderVary, "Origin")
	hdr.Add(echo.HeaderVary, "X-Widget-Key")
	if fresh(c, widgetSettingsMaxAge, etagOf(body)) {
		return c.NoContent(http.StatusNotModified)
	}
	return c.JSONBlob(http.StatusOK, body)
}

// noteInstallation records that the widget loaded on a site of the
// tenant's (a page of another origin than Parley's that passed the gates),
// for the dashboard's "installation detected". The store writes at most
// once an hour per tenant; within that hour this process does not even ask
// it again.
func (h *Handler) noteInstallation(c echo.Context, t parley.Tenant) error {
	origin := c.Request().Header.Get(echo.HeaderOrigin)
	if origin == "" || origin == "null" || strings.EqualFold(origin, originOf(h.BaseURL)) || len(origin) > 300 {
		return nil
	}
	now := h.now()
	if last, ok := h.sightings.Load(t.ID); ok && now.Sub(last.(time.Time)) < time.Hour {
		return nil
	}
	if err := h.DB.NoteWidgetSeen(c.Request().Context(), t.ID, origin, now); err != nil {
		return err
	}
	h.sightings.Store(t.ID, now)
	return nil
}

// widgetSettings is what the widget of tenant t shows for segment seg.
func (h *Handler) widgetSettings(t parley.Tenant, seg parley.Segment) widgetSettingsJSON {
	out := widgetSettingsJSON{
		Tenant: t.Slug, Name: t.Name,
		Segment: widgetSegmentJSON{Slug: seg.Slug, WelcomeMessage: nonBlank(seg.WelcomeMessage),
			ConversationStarters: seg.ConversationStarters},
		Bot: widgetBotJSON{Name: nonBlank(t.BotName), Title: nonBlank(t.BotTitle), AvatarType: t.AvatarType,
			Avatar: nonBlank(t.BotAvatar), AvatarBackground: nonBlank(t.AvatarBackground),
			PrimaryColor: t.PrimaryColor, SecondaryColor: nonBlank(t.SecondaryColor), ShowAIBadge: t.ShowAIBadge},
		Launcher: widgetLauncherJSON{TeaserText: nonBlank(t.TeaserText), AutoOpen: t.AutoOpen,
			AutoOpenDelay: t.AutoOpenDelay, BubblePulse: t.BubblePulse},
		Endpoints: widgetEndpointsJSON{Chat: h.BaseURL + "/chat/" + t.Slug,
			Feedback: h.BaseURL + "/chat/" + t.Slug + "/feedback", Form: h.BaseURL + "/form/" + t.Slug},
	}
	if out.Segment.ConversationStarters == nil {
		out.Segment.ConversationStarters = []parley.Starter{}
	}
	if t.BookingCTAEnabled {
		out.BookingCTA = &t.BookingCTAConfig
	}
	if t.CaptchaEnabled && t.CaptchaSiteKey != nil && strings.TrimSpace(*t.CaptchaSiteKey) != "" {
		out.Captcha = &widgetCaptchaJSON{SiteKey: *t.CaptchaSiteKey, ScriptURL: h.CaptchaScriptURL}
	}
	if f := seg.FormConfig; f != nil && f.Enabled && len(f.Fields) > 0 {
		out.Form = &widgetFormJSON{Fields: f.Fields, ConfirmationMessage: f.ConfirmationMessage}
	}
	return out
}

// widgetScriptMaxAge is how long browsers keep /widget.js before
// revalidating it: a new release reaches pages within five minutes.
const widgetScriptMaxAge = "300"

// widgetScript is /widget.js, gzipped once per process.
var widgetScript = NewCompressible(widget.Script, etagOf(widget.Script))

// WidgetScript serves the embeddable widget at /widget.js (the address the
// embed code names), readable from any page, gzipped for the browsers that
// take it (every visitor of every tenant's site loads it), cacheable for
// five minutes and then revalidated with its ETag, computed once.
func WidgetScript(c echo.Context) error {
	h := c.Response().Header()
	h.Set(echo.HeaderAccessControlAllowOrigin, "*")
	h.Set(echo.HeaderCacheControl, "public, max-age="+widgetScriptMaxAge)
	return widgetScript.Serve(c, "text/javascript; charset=utf-8")
}

// etagOf is a strong entity tag of body.
func etagOf(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + hex.EncodeToString(sum[:12]) + `"`
}

// fresh sets a public answer's caching headers (max-age in seconds, and
// its ETag) and reports whether the copy the client holds is current: then
// the answer is 304 with no body.
func fresh(c echo.Context, maxAge, etag string) bool {
	h := c.Response().Header()
	h.Set(echo.HeaderCacheControl, "public, max-age="+maxAge)
	h.Set("ETag", etag)
	return etagMatches(c.Request().Header.Get("If-None-Match"), etag)
}

// etagMatches applies If-None-Match (a list of entity tags, weak ones
// compared weakly, or *) to the current tag.
func etagMatches(header, etag string) bool {
	for _, tag := range strings.Split(header, ",") {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
		if tag == "*" || tag == etag {
			return true
		}
	}
	return false
}

// originOf is the origin (scheme://host[:port]) of an absolute address.
func originOf(address string) string {
	u, err := url.Parse(address)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}
