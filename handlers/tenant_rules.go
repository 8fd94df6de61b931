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
	maxURL              = 500
	maxCaptchaKey       = 255
	minAutoOpenDelay    = 3
	maxAutoOpenDelay    = 120
	maxCTAHeadline      = 100
	maxCTASubtitle      = 200
	maxCTAText          = 50
	maxCTAOfficeHours   = 200
)

// noNUL is the message for text holding a NUL character, which PostgreSQL cannot store.
const noNUL = "must not contain NUL characters"

func tooLong(n int) string { return fmt.Sprintf("must be at most %d characters", n) }

func checkLen(errs parley.FieldErrors, field string, o parley.Opt[string], max int) {
	if o.Set && !o.Null && utf8.RuneCountInString(o.Value) > max {
		errs.Add(field, tooLong(max))
	}
}

// nullIfEmpty makes an empty string a clear: forms send "" for an emptied field.
func nullIfEmpty(o *parley.Opt[string]) {
	if o.Set && !o.Null && strings.TrimSpace(o.Value) == "" {
		o.Null = true
		o.Value = ""
	}
}

func notNull[T any](errs parley.FieldErrors, field string, o parley.Opt[T]) bool {
	if o.Set && o.Null {
		errs.Add(field, "must not be null")
		return false
	}
	return o.Set
}

func checkEnum(errs parley.FieldErrors, field string, o parley.Opt[string], allowed []string) {
	if notNull(errs, field, o) && !slices.Contains(allowed, o.Value) {
		errs.Add(field, "must be one of "+strings.Join(allowed, ", "))
	}
}

func checkHTTPURL(errs parley.FieldErrors, field string, o parley.Opt[string], httpsOnly bool) {
	if !o.Set || o.Null {
		return
	}
	if utf8.RuneCountInString(o.Value) > maxURL {
		errs.Add(field, tooLong(maxURL))
		return
	}
	u, err := url.Parse(o.Value)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		errs.Add(field, "must be an absolute URL such as https://example.com/path")
	case httpsOnly && u.Scheme != "https":
		errs.Add(field, "must use https")
	}
}

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
			errs.Add(f.name, noNUL)
		}
	}
	for _, o := range []*parley.Opt[string]{&p.Description, &p.BotName, &p.BotTitle, &p.BotLore, &p.SecondaryColor,
		&p.BotAvatar, &p.AvatarBackground, &p.TeaserText, &p.VisitorAuthMode, &p.VisitorContextURL, &p.CaptchaSiteKey, &p.LLMWebhookURL} {
		nullIfEmpty(o)
	}
	if notNull(errs, "name", p.Name) {
		p.Name.Value = strings.TrimSpace(p.Name.Value)
		if p.Name.Value == "" {
			errs.Add("name", "must not be empty")
		}
		checkLen(errs, "name", p.Name, maxTenantName)
	}
	checkLen(errs, "description", p.Description, maxDescription)
	if notNull(errs, "timezone", p.Timezone) {
		if _, err := time.LoadLocation(p.Timezone.Value); err != nil || p.Timezone.Value == "" || p.Timezone.Value == "Local" {
			errs.Add("timezone", "must be an IANA time zone such as Europe/Paris or UTC")
		}
	}
	checkLen(errs, "botName", p.BotName, maxBotName)
	checkLen(errs, "botTitle", p.BotTitle, maxBotTitle)
	checkLen(errs, "botLore", p.BotLore, maxBotLore)
	checkEnum(errs, "botTone", p.BotTone, BotTones)
	notNull(errs, "useTutoiement", p.UseTutoiement)
	notNull(errs, "allowEmojis", p.AllowEmojis)
	if notNull(errs, "primaryColor", p.PrimaryColor) && !hexColor.MatchString(p.PrimaryColor.Value) {
		errs.Add("primaryColor", "must be a hex colour #RRGGBB")
	}
	if p.SecondaryColor.Set && !p.SecondaryColor.Null && !hexColor.MatchString(p.SecondaryColor.Value) {
		errs.Add("secondaryColor", "must be a hex colour #RRGGBB")
	}
	notNull(errs, "showAiBadge", p.ShowAIBadge)
	checkHTTPURL(errs, "botAvatar", p.BotAvatar, false)
	checkEnum(errs, "avatarType", p.AvatarType, AvatarTypes)
	checkLen(errs, "avatarBackground", p.AvatarBackground, maxAvatarBackground)
	checkLen(errs, "teaserText", p.TeaserText, maxTeaserText)
	notNull(errs, "autoOpen", p.AutoOpen)
	if notNull(errs, "autoOpenDelay", p.AutoOpenDelay) && (p.AutoOpenDelay.Value < minAutoOpenDelay || p.AutoOpenDelay.Value > maxAutoOpenDelay) {
		errs.Add("autoOpenDelay", fmt.Sprintf("must be between %d and %d seconds", minAutoOpenDelay, maxAutoOpenDelay))
	}
	notNull(errs, "bubblePulse", p.BubblePulse)
	if p.AllowedDomains.Set && !p.AllowedDomains.Null {
		p.AllowedDomains.Value = validateDomains(errs, p.AllowedDomains.Value)
	}
	checkEnum(errs, "contentPolicy", p.ContentPolicy, ContentPolicies)
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
	checkHTTPURL(errs, "visitorContextUrl", p.VisitorContextURL, false)
	checkHTTPURL(errs, "llmWebhookUrl", p.LLMWebhookURL, false)
	notNull(errs, "captchaEnabled", p.CaptchaEnabled)
	checkLen(errs, "captchaSiteKey", p.CaptchaSiteKey, maxCaptchaKey)
	checkLen(errs, "captchaSecretKey", p.CaptchaSecretKey, maxCaptchaKey)
	notNull(errs, "bookingCtaEnabled", p.BookingCTAEnabled)
	if p.BookingCTAConfig.Set && !p.BookingCTAConfig.Null {
		cfg := p.BookingCTAConfig.Value
		for _, f := range []struct {
			name, value string
			max         int
		}{{"headline", cfg.Headline, maxCTAHeadline}, {"subtitle", cfg.Subtitle, maxCTASubtitle},
			{"ctaText", cfg.CTAText, maxCTAText}, {"officeHours", cfg.OfficeHours, maxCTAOfficeHours}} {
			if strings.ContainsRune(f.value, 0) {
				errs.Add("bookingCtaConfig", f.name+" "+noNUL)
			}
			if utf8.RuneCountInString(f.value) > f.max {
				errs.Add("bookingCtaConfig", fmt.Sprintf("%s %s", f.name, tooLong(f.max)))
			}
		}
	}
	notNull(errs, "isOnboarded", p.IsOnboarded)
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
			errs.Add("allowedDomains", fmt.Sprintf("entry %d %s", i+1, tooLong(maxDomain)))
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
