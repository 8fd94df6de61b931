package handlers

import (
	"strings"

	"github.com/parley/parley"
)

// WidgetSettingsJSON is what the embedded widget shows and how it behaves,
// for one segment: the tenant's public look and behaviour, nothing private
// (no prompt, no key, no secret).
type WidgetSettingsJSON struct {
	Tenant     string                   `json:"tenant"`
	Name       string                   `json:"name"`
	Segment    widgetSegmentJSON        `json:"segment"`
	Bot        widgetBotJSON            `json:"bot"`
	Launcher   widgetLauncherJSON       `json:"launcher"`
	BookingCTA *parley.BookingCTAConfig `json:"bookingCta"`
	Captcha    *widgetCaptchaJSON       `json:"captcha"`
	Endpoints  WidgetEndpointsJSON      `json:"endpoints"`
	Form       *widgetFormJSON          `json:"form"`
	// Handover is how a visitor reaches a person when no language model
	// answers (WidgetHandover); absent when a model is configured.
	Handover string `json:"handover,omitempty"`
}

// The widget's ways to a person without a model: the hand-over tool runs
// from the visitor's words (the local provider calls it), or the lead form.
const (
	HandoverChat = "chat"
	HandoverForm = "form"
)

// WidgetHandover is the settings' Handover for a tenant answered by no
// language model: chat when an active ESCALATE_TO_HUMAN tool serves the
// segment, else form when it has a lead form, else "".
func WidgetHandover(s WidgetSettingsJSON, seg parley.Segment, tools []parley.Tool) string {
	for _, t := range tools {
		if t.IsActive && t.Type == parley.ToolEscalateToHuman && (t.SegmentID == nil || *t.SegmentID == seg.ID) {
			return HandoverChat
		}
	}
	if s.Form != nil {
		return HandoverForm
	}
	return ""
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

type WidgetEndpointsJSON struct {
	Chat     string `json:"chat"`
	Feedback string `json:"feedback"`
	Form     string `json:"form"`
}

// widgetFormJSON is the segment's lead form, when enabled.
type widgetFormJSON struct {
	Fields              []parley.FormField `json:"fields"`
	ConfirmationMessage string             `json:"confirmationMessage,omitempty"`
	// Display is when the widget shows it (parley.FormOnOpen, ...).
	Display string `json:"display"`
}

// WidgetSettings is what the widget of tenant t shows for segment seg, on
// the server at baseURL, with the bot challenge's script at
// captchaScriptURL: GET /chat/{slug}/widget's body, and the dashboard's
// live preview.
func WidgetSettings(baseURL, captchaScriptURL string, t parley.Tenant, seg parley.Segment) WidgetSettingsJSON {
	out := WidgetSettingsJSON{
		Tenant: t.Slug, Name: t.Name,
		Segment: widgetSegmentJSON{Slug: seg.Slug, WelcomeMessage: NonBlank(seg.WelcomeMessage),
			ConversationStarters: seg.ConversationStarters},
		Bot: widgetBotJSON{Name: NonBlank(t.BotName), Title: NonBlank(t.BotTitle), AvatarType: t.AvatarType,
			Avatar: NonBlank(t.BotAvatar), AvatarBackground: NonBlank(t.AvatarBackground),
			PrimaryColor: t.PrimaryColor, SecondaryColor: NonBlank(t.SecondaryColor), ShowAIBadge: t.ShowAIBadge},
		Launcher: widgetLauncherJSON{TeaserText: NonBlank(t.TeaserText), AutoOpen: t.AutoOpen,
			AutoOpenDelay: t.AutoOpenDelay, BubblePulse: t.BubblePulse},
		Endpoints: WidgetEndpointsJSON{Chat: baseURL + "/chat/" + t.Slug,
			Feedback: baseURL + "/chat/" + t.Slug + "/feedback", Form: baseURL + "/form/" + t.Slug},
	}
	if out.Segment.ConversationStarters == nil {
		out.Segment.ConversationStarters = []parley.Starter{}
	}
	if t.BookingCTAEnabled {
		out.BookingCTA = &t.BookingCTAConfig
	}
	if t.CaptchaEnabled && t.CaptchaSiteKey != nil && strings.TrimSpace(*t.CaptchaSiteKey) != "" {
		out.Captcha = &widgetCaptchaJSON{SiteKey: *t.CaptchaSiteKey, ScriptURL: captchaScriptURL}
	}
	if f := seg.FormConfig; f != nil && f.Enabled && len(f.Fields) > 0 {
		out.Form = &widgetFormJSON{Fields: f.Fields, ConfirmationMessage: f.ConfirmationMessage,
			Display: NonBlankOr(f.Display, parley.FormAfterFirstAnswer)}
	}
	return out
}

// NonBlank is nil for a missing or blank string.
func NonBlank(s *string) *string {
	if s == nil || strings.TrimSpace(*s) == "" {
		return nil
	}
	return s
}
