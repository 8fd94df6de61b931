package handlers

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
)

// Tenant field rules, shared by the REST API and the admin pages.
var (
	BotTones         = []string{"FORMAL", "NEUTRAL", "FRIENDLY", "PLAYFUL", "TECHNICAL"}
	AvatarTypes      = []string{"DEFAULT", "UPLOAD", "LIBRARY", "GENERATED"}
	ContentPolicies  = []string{"SFW_STRICT", "SFW", "MODERATE", "UNFILTERED"}
	VisitorAuthModes = []string{"jwt", "otp", "all"}

	hexColor   = regexp.MustCompile(`^#[0-9A-Fa-f]{6}$`)
	domainLike = regexp.MustCompile(`^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(:[0-9]{1,5})?$`)
)

// Tenant field limits not given by the spec are chosen here and documented in the OpenAPI document.
const (
	maxTenantName       = 255
	maxDescription      = 500
	maxBotName          = 50
	maxBotTitle         = 100
	maxBotLore          = 10000
	maxTeaserText       = 160
	maxAvatarBackground = 100
	maxDomain           = 255
	maxDomains          = 100
	maxCaptchaKey       = 255
	minAutoOpenDelay    = 3
	maxAutoOpenDelay    = 120
	maxCTAHeadline      = 100
	maxCTASubtitle      = 200
	maxCTAText          = 50
	maxCTAOfficeHours   = 200
)

// validateTenantPatch normalises p (trims, empty strings clear nullable
// fields, domains lower-cased) and checks every rule of the tenant table.
func validateTenantPatch(p *db.TenantPatch) parley.FieldErrors {
	errs := parley.FieldErrors{}
	// PostgreSQL text cannot hold NUL; refuse it here rather than fail the UPDATE with a 500.
	for _, f := range []struct {
		name string
		o    parley.Opt[string]
	}{{"name", p.Name}, {"description", p.Description}, {"timezone", p.Timezone}, {"botName", p.BotName},
		{"botTitle", p.BotTitle}, {"botLore", p.BotLore}, {"botTone", p.BotTone}, {"primaryColor", p.PrimaryColor},
		{"secondaryColor", p.SecondaryColor}, {"botAvatar", p.BotAvatar}, {"avatarType", p.AvatarType},
		{"avatarBackground", p.AvatarBackground}, {"teaserText", p.TeaserText}, {"contentPolicy", p.ContentPolicy},
		{"visitorAuthMode", p.VisitorAuthMode}, {"visitorContextUrl", p.VisitorContextURL}, {"captchaSiteKey", p.CaptchaSiteKey},
		{"llmWebhookUrl", p.LLMWebhookURL}} {
		if f.o.Set && strings.ContainsRune(f.o.Value, 0) {
			errs.Add(f.name, parley.NoNUL)
		}
	}
	for _, o := range []*parley.Opt[string]{&p.Description, &p.BotName, &p.BotTitle, &p.BotLore, &p.SecondaryColor,
		&p.BotAvatar, &p.AvatarBackground, &p.TeaserText, &p.VisitorAuthMode, &p.VisitorContextURL, &p.CaptchaSiteKey, &p.LLMWebhookURL} {
		parley.NullIfEmpty(o)
	}
	if parley.NotNull(errs, "name", p.Name) {
		p.Name.Value = strings.TrimSpace(p.Name.Value)
		if p.Name.Value == "" {
			errs.Add("name", "must not be empty")
		}
		parley.CheckLen(errs, "name", p.Name, maxTenantName)
	}
	parley.CheckLen(errs, "description", p.Description, maxDescription)
	if parley.NotNull(errs, "timezone", p.Timezone) {
		if _, err := time.LoadLocation(p.Timezone.Value); err != nil || p.Timezone.Value == "" || p.Timezone.Value == "Local" {
			errs.Add("timezone", "must be an IANA time zone such as Europe/Paris or UTC")
		}
	}
	parley.CheckLen(errs, "botName", p.BotName, maxBotName)
	parley.CheckLen(errs, "botTitle", p.BotTitle, maxBotTitle)
	parley.CheckLen(errs, "botLore", p.BotLore, maxBotLore)
	parley.CheckEnum(errs, "botTone", p.BotTone, BotTones)
	parley.NotNull(errs, "useTutoiement", p.UseTutoiement)
	parley.NotNull(errs, "allowEmojis", p.AllowEmojis)
	if parley.NotNull(errs, "primaryColor", p.PrimaryColor) && !hexColor.MatchString(p.PrimaryColor.Value) {
		errs.Add("primaryColor", "must be a hex colour #RRGGBB")
	}
	if p.SecondaryColor.Set && !p.SecondaryColor.Null && !hexColor.MatchString(p.SecondaryColor.Value) {
		errs.Add("secondaryColor", "must be a hex colour #RRGGBB")
	}
	parley.NotNull(errs, "showAiBadge", p.ShowAIBadge)
	parley.CheckHTTPURL(errs, "botAvatar", p.BotAvatar, false)
	parley.CheckEnum(errs, "avatarType", p.AvatarType, AvatarTypes)
	parley.CheckLen(errs, "avatarBackground", p.AvatarBackground, maxAvatarBackground)
	parley.CheckLen(errs, "teaserText", p.TeaserText, maxTeaserText)
	parley.NotNull(errs, "autoOpen", p.AutoOpen)
	if parley.NotNull(errs, "autoOpenDelay", p.AutoOpenDelay) && (p.AutoOpenDelay.Value < minAutoOpenDelay || p.AutoOpenDelay.Value > maxAutoOpenDelay) {
		errs.Add("autoOpenDelay", fmt.Sprintf("must be between %d and %d seconds", minAutoOpenDelay, maxAutoOpenDelay))
	}
	parley.NotNull(errs, "bubblePulse", p.BubblePulse)
	if p.AllowedDomains.Set && !p.AllowedDomains.Null {
		p.AllowedDomains.Value = validateDomains(errs, p.AllowedDomains.Value)
	}
	parley.CheckEnum(errs, "contentPolicy", p.ContentPolicy, ContentPolicies)
	if p.VisitorAuthMode.Set && !p.VisitorAuthMode.Null && !slices.Contains(VisitorAuthModes, p.VisitorAuthMode.Value) {
		errs.Add("visitorAuthMode", "must be one of jwt, otp, all, or null")
	}
	for _, o := range []*parley.Opt[string]{&p.VisitorContextURL, &p.LLMWebhookURL} {
		if o.Set && !o.Null {
			o.Value = strings.TrimSpace(o.Value)
		}
	}
	// https is enforced with the SSRF check (plain http for exempt hosts),
	// which needs the outbound client: see checkSignedCallURL.
	parley.CheckHTTPURL(errs, "visitorContextUrl", p.VisitorContextURL, false)
	parley.CheckHTTPURL(errs, "llmWebhookUrl", p.LLMWebhookURL, false)
	parley.NotNull(errs, "captchaEnabled", p.CaptchaEnabled)
	parley.CheckLen(errs, "captchaSiteKey", p.CaptchaSiteKey, maxCaptchaKey)
	parley.CheckLen(errs, "captchaSecretKey", p.CaptchaSecretKey, maxCaptchaKey)
	parley.NotNull(errs, "bookingCtaEnabled", p.BookingCTAEnabled)
	if p.BookingCTAConfig.Set && !p.BookingCTAConfig.Null {
		cfg := p.BookingCTAConfig.Value
		for _, f := range []struct {
			name, value string
			max         int
		}{{"headline", cfg.Headline, maxCTAHeadline}, {"subtitle", cfg.Subtitle, maxCTASubtitle},
			{"ctaText", cfg.CTAText, maxCTAText}, {"officeHours", cfg.OfficeHours, maxCTAOfficeHours}} {
			if strings.ContainsRune(f.value, 0) {
				errs.Add("bookingCtaConfig", f.name+" "+parley.NoNUL)
			}
			if utf8.RuneCountInString(f.value) > f.max {
				errs.Add("bookingCtaConfig", fmt.Sprintf("%s %s", f.name, parley.TooLong(f.max)))
			}
		}
	}
	parley.NotNull(errs, "isOnboarded", p.IsOnboarded)
	return errs
}

// validateDomains checks allowedDomains and returns them lower-cased, without duplicates.
func validateDomains(errs parley.FieldErrors, domains []string) []string {
	if len(domains) > maxDomains {
		errs.Add("allowedDomains", fmt.Sprintf("must have at most %d entries", maxDomains))
		return domains
	}
	seen := map[string]bool{}
	out := []string{}
	for i, d := range domains {
		d = strings.ToLower(strings.TrimSpace(d))
		switch {
		case utf8.RuneCountInString(d) > maxDomain:
			errs.Add("allowedDomains", fmt.Sprintf("entry %d %s", i+1, parley.TooLong(maxDomain)))
		case !domainLike.MatchString(d):
			errs.Add("allowedDomains", fmt.Sprintf("entry %d (%q) must be a domain such as example.com or *.example.com, without scheme or path", i+1, d))
		}
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

// checkCaptcha refuses enabling the bot-challenge gate without both keys,
// looking at the patch and at what the tenant already has.
func checkCaptcha(errs parley.FieldErrors, t parley.Tenant, p db.TenantPatch) {
	enabled := t.CaptchaEnabled
	if p.CaptchaEnabled.Set {
		enabled = p.CaptchaEnabled.Value
	}
	if !enabled {
		return
	}
	hasSite := t.CaptchaSiteKey != nil
	if p.CaptchaSiteKey.Set {
		hasSite = !p.CaptchaSiteKey.Null
	}
	hasSecret := t.CaptchaSecretKey != nil
	if p.CaptchaSecretKey.Set {
		hasSecret = !p.CaptchaSecretKey.Null && p.CaptchaSecretKey.Value != ""
	}
	if !hasSite {
		errs.Add("captchaSiteKey", "is required while captchaEnabled is true")
	}
	if !hasSecret {
		errs.Add("captchaSecretKey", "is required while captchaEnabled is true")
	}
}

// checkSignedCallURL refuses a tenant endpoint the service calls with
// requests signed by the visitor signing key (the reply endpoint, the
// context webhook) when it must not call it: credentials in the URL, plain
// http to a host the operator did not exempt (PARLEY_SSRF_ALLOW), or a host
// that is or resolves to a private or reserved address. Length and shape
// were checked with the other fields.
func (h *Handler) checkSignedCallURL(ctx context.Context, errs parley.FieldErrors, field, raw string) {
	if _, bad := errs[field]; bad {
		return
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		errs.Add(field, "must be an absolute URL such as https://example.com/path")
	case u.User != nil:
		errs.Add(field, "must not contain credentials; calls are signed with the visitor signing key")
	case h.plainHTTPRefused(ctx, u, raw):
		errs.Add(field, "must use https")
	default:
		h.checkOutboundURL(ctx, errs, field, raw)
	}
}
