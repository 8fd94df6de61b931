package manage

import (
	"context"
	"net/url"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
)

// The tenant's own settings: its persona, its widget, its developer
// settings and how it answers calls.

// UpdateTenant changes the fields of in that are set, of t, the tenant as
// stored. A plan without voice refuses any change to the voice settings,
// whatever the rest of in, as for MCP tools.
func (s *Service) UpdateTenant(ctx context.Context, t parley.Tenant, in parley.TenantInput) (parley.Tenant, error) {
	if !t.PlanInfo().Voice && in.ChangesVoice(t) {
		return t, parley.VoicePlanRequired(t.Plan)
	}
	errs := in.Check(t)
	s.checkSignedCallURL(ctx, errs, "llmWebhookUrl", in.LLMWebhookURL)
	s.checkSignedCallURL(ctx, errs, "visitorContextUrl", in.VisitorContextURL)
	if err := s.checkPeopleSettings(ctx, errs, t.ID, &in); err != nil {
		return t, err
	}
	if err := errs.Err(); err != nil {
		return t, err
	}
	p := db.TenantPatch{Name: in.Name, Description: in.Description, Timezone: in.Timezone, BotName: in.BotName,
		BotTitle: in.BotTitle, BotLore: in.BotLore, BotTone: in.BotTone, UseTutoiement: in.UseTutoiement,
		AllowEmojis: in.AllowEmojis, PrimaryColor: in.PrimaryColor, SecondaryColor: in.SecondaryColor,
		ShowAIBadge: in.ShowAIBadge, ShowSources: in.ShowSources, BotAvatar: in.BotAvatar, AvatarType: in.AvatarType,
		AvatarBackground: in.AvatarBackground, TeaserText: in.TeaserText, AutoOpen: in.AutoOpen,
		AutoOpenDelay: in.AutoOpenDelay, BubblePulse: in.BubblePulse, AllowedDomains: in.AllowedDomains,
		ContentPolicy: in.ContentPolicy, VisitorAuthMode: in.VisitorAuthMode, VisitorContextURL: in.VisitorContextURL,
		CaptchaEnabled: in.CaptchaEnabled, CaptchaSiteKey: in.CaptchaSiteKey, BookingCTAEnabled: in.BookingCTAEnabled,
		BookingCTAConfig: in.BookingCTAConfig, IsOnboarded: in.IsOnboarded, LLMWebhookURL: in.LLMWebhookURL,
		VoiceEnabled: in.VoiceEnabled, VoiceProvider: in.VoiceProvider, VoicePhoneNumber: in.VoicePhoneNumber,
		VoiceAssistantID: in.VoiceAssistantID, VoiceConfig: in.VoiceConfig,
		HumanHours: in.HumanHours, HumanWaitSeconds: in.HumanWaitSeconds, HumanIdleSeconds: in.HumanIdleSeconds}
	if in.CaptchaSecretKey.Set {
		if in.CaptchaSecretKey.Null || in.CaptchaSecretKey.Value == "" {
			p.SealedCaptchaSecret = parley.Opt[[]byte]{Set: true, Null: true}
		} else {
			p.SealedCaptchaSecret = parley.Some(s.Box.Seal([]byte(in.CaptchaSecretKey.Value)))
		}
	}
	return s.DB.UpdateTenant(ctx, t.ID, p)
}

// checkSignedCallURL refuses a tenant endpoint Parley calls with requests
// signed by the visitor signing key (the reply endpoint, the context
// webhook) when it must not call it: credentials in the URL, plain http to
// a host the operator did not exempt (every host without Addresses), or a
// host that is or resolves to a private or reserved address. Length and
// shape were checked with the other fields.
func (s *Service) checkSignedCallURL(ctx context.Context, errs parley.FieldErrors, field string, o parley.Opt[string]) {
	if _, bad := errs[field]; bad || !o.Set || o.Null {
		return
	}
	u, err := url.Parse(o.Value)
	switch {
	case err != nil:
		errs.Add(field, "must be an absolute URL such as https://example.com/path")
	case u.User != nil:
		errs.Add(field, "must not contain credentials; calls are signed with the visitor signing key")
	default:
		if msg := s.vetURL(ctx, o.Value, false); msg != "" {
			errs.Add(field, msg)
		}
	}
}
