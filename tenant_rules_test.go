package parley_test

import (
	"strings"
	"testing"

	"github.com/parley/parley"
)

// The tenant's settings' rules: limits at N and N+1, enumerations,
// colours, the captcha gate against the stored tenant, and the surface's
// problems first.
func TestTenantRules(t *testing.T) {
	t.Parallel()
	domains := func(n int) parley.Opt[[]string] {
		d := make([]string, n)
		for i := range d {
			d[i] = "Shop.Example.com"
		}
		return parley.Some(d)
	}
	site := "0x4AAA-site"
	keys := parley.Tenant{CaptchaSiteKey: &site, CaptchaSecretKey: []byte("sealed")}
	for name, c := range map[string]struct {
		in    parley.TenantInput
		cur   parley.Tenant
		field string
		want  string
	}{
		"NameAtLimit":          {parley.TenantInput{Name: parley.Some(strings.Repeat("n", parley.MaxTenantName))}, parley.Tenant{}, "", ""},
		"NamePast":             {parley.TenantInput{Name: parley.Some(strings.Repeat("n", parley.MaxTenantName+1))}, parley.Tenant{}, "name", "must be at most 255 characters"},
		"NameBlank":            {parley.TenantInput{Name: parley.Some("  ")}, parley.Tenant{}, "name", "must not be empty"},
		"BotLoreAtLimit":       {parley.TenantInput{BotLore: parley.Some(strings.Repeat("l", parley.MaxBotLore))}, parley.Tenant{}, "", ""},
		"BotLorePast":          {parley.TenantInput{BotLore: parley.Some(strings.Repeat("l", parley.MaxBotLore+1))}, parley.Tenant{}, "botLore", "must be at most 10000 characters"},
		"TeaserAtLimit":        {parley.TenantInput{TeaserText: parley.Some(strings.Repeat("é", parley.MaxTeaserText))}, parley.Tenant{}, "", ""},
		"TeaserPast":           {parley.TenantInput{TeaserText: parley.Some(strings.Repeat("é", parley.MaxTeaserText+1))}, parley.Tenant{}, "teaserText", "must be at most 160 characters"},
		"DomainsAtLimit":       {parley.TenantInput{AllowedDomains: domains(parley.MaxDomains)}, parley.Tenant{}, "", ""},
		"DomainsPast":          {parley.TenantInput{AllowedDomains: domains(parley.MaxDomains + 1)}, parley.Tenant{}, "allowedDomains", "must have at most 100 entries"},
		"DomainWithScheme":     {parley.TenantInput{AllowedDomains: parley.Some([]string{"https://shop.example.com"})}, parley.Tenant{}, "allowedDomains", `entry 1 ("https://shop.example.com") must be a domain`},
		"BadTone":              {parley.TenantInput{BotTone: parley.Some("GRUMPY")}, parley.Tenant{}, "botTone", "must be one of FORMAL, NEUTRAL, FRIENDLY, PLAYFUL, TECHNICAL"},
		"NullTone":             {parley.TenantInput{BotTone: parley.Opt[string]{Set: true, Null: true}}, parley.Tenant{}, "botTone", "must not be null"},
		"BadPolicy":            {parley.TenantInput{ContentPolicy: parley.Some("NSFW")}, parley.Tenant{}, "contentPolicy", "must be one of SFW_STRICT, SFW, MODERATE, UNFILTERED"},
		"BadAuthMode":          {parley.TenantInput{VisitorAuthMode: parley.Some("sso")}, parley.Tenant{}, "visitorAuthMode", "must be one of jwt, otp, all, or null"},
		"BadAvatarType":        {parley.TenantInput{AvatarType: parley.Some("EMOJI")}, parley.Tenant{}, "avatarType", "must be one of DEFAULT"},
		"BadColour":            {parley.TenantInput{PrimaryColor: parley.Some("#12345")}, parley.Tenant{}, "primaryColor", "must be a hex colour #RRGGBB"},
		"BadSecondColour":      {parley.TenantInput{SecondaryColor: parley.Some("red")}, parley.Tenant{}, "secondaryColor", "must be a hex colour #RRGGBB"},
		"EmptySecondColour":    {parley.TenantInput{SecondaryColor: parley.Some("")}, parley.Tenant{}, "", ""},
		"DelayPast":            {parley.TenantInput{AutoOpenDelay: parley.Some(parley.MaxAutoOpenDelay + 1)}, parley.Tenant{}, "autoOpenDelay", "must be between 3 and 120 seconds"},
		"BadTimezone":          {parley.TenantInput{Timezone: parley.Some("Local")}, parley.Tenant{}, "timezone", "IANA time zone"},
		"NUL":                  {parley.TenantInput{BotName: parley.Some("a\x00b")}, parley.Tenant{}, "botName", parley.NoNUL},
		"CaptchaWithoutKeys":   {parley.TenantInput{CaptchaEnabled: parley.Some(true)}, parley.Tenant{}, "captchaSiteKey", "is required while captchaEnabled is true"},
		"CaptchaNoSecret":      {parley.TenantInput{CaptchaEnabled: parley.Some(true), CaptchaSiteKey: parley.Some(site)}, parley.Tenant{}, "captchaSecretKey", "is required while captchaEnabled is true"},
		"CaptchaStoredKeys":    {parley.TenantInput{CaptchaEnabled: parley.Some(true)}, keys, "", ""},
		"CaptchaClearsStored":  {parley.TenantInput{CaptchaSiteKey: parley.Some("")}, parley.Tenant{CaptchaEnabled: true, CaptchaSecretKey: []byte("s")}, "captchaSiteKey", "is required while captchaEnabled is true"},
		"VoiceWithoutSecret":   {parley.TenantInput{VoiceEnabled: parley.Some(true)}, parley.Tenant{}, "voiceEnabled", "needs the secret"},
		"BadPhone":             {parley.TenantInput{VoicePhoneNumber: parley.Some("0612345678")}, parley.Tenant{}, "voicePhoneNumber", "must be an E.164 phone number"},
		"BadLanguage":          {parley.TenantInput{VoiceConfig: parley.Some(parley.VoiceConfig{Language: "english"})}, parley.Tenant{}, "voiceConfig", "language must be a BCP-47 language tag"},
		"URLShapeOnly":         {parley.TenantInput{LLMWebhookURL: parley.Some("ftp://x.example.com")}, parley.Tenant{}, "llmWebhookUrl", "must be an absolute URL"},
		"ProblemsFirst":        {parley.TenantInput{Name: parley.Some(""), Problems: parley.FieldErrors{"name": "must be a string"}}, parley.Tenant{}, "name", "must be a string"},
		"ProblemsOfOtherField": {parley.TenantInput{Problems: parley.FieldErrors{"autoOpenDelay": "must be a whole number of seconds"}}, parley.Tenant{}, "autoOpenDelay", "must be a whole number of seconds"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			errs := c.in.Check(c.cur)
			if c.field == "" {
				if len(errs) != 0 {
					t.Fatalf("problems %v, want none", errs)
				}
				return
			}
			if !strings.Contains(errs[c.field], c.want) {
				t.Errorf("%s: %q, want %q (all: %v)", c.field, errs[c.field], c.want, errs)
			}
		})
	}
}

// Check normalises what it passes: domains lower-cased and deduplicated,
// empty texts cleared, URLs trimmed.
func TestTenantRulesNormalise(t *testing.T) {
	t.Parallel()
	in := parley.TenantInput{AllowedDomains: parley.Some([]string{" Shop.Example.com ", "shop.example.com", "*.example.org:8080"}),
		BotTitle: parley.Some("  "), LLMWebhookURL: parley.Some(" https://hooks.example.com/reply ")}
	if errs := in.Check(parley.Tenant{}); len(errs) != 0 {
		t.Fatalf("problems %v", errs)
	}
	if got := strings.Join(in.AllowedDomains.Value, ","); got != "shop.example.com,*.example.org:8080" {
		t.Errorf("domains %q", got)
	}
	if !in.BotTitle.Null {
		t.Errorf("blank botTitle not cleared: %+v", in.BotTitle)
	}
	if in.LLMWebhookURL.Value != "https://hooks.example.com/reply" {
		t.Errorf("llmWebhookUrl %q", in.LLMWebhookURL.Value)
	}
}

// Sending back the voice settings read changes nothing; any other value
// does.
func TestTenantChangesVoice(t *testing.T) {
	t.Parallel()
	num := "+33198765432"
	cur := parley.Tenant{VoiceProvider: parley.VoiceProviderVapi, VoicePhoneNumber: &num}
	same := parley.TenantInput{VoiceEnabled: parley.Some(false), VoiceProvider: parley.Some(parley.VoiceProviderVapi),
		VoicePhoneNumber: parley.Some(num), VoiceAssistantID: parley.Some(""), VoiceConfig: parley.Some(parley.VoiceConfig{})}
	if same.ChangesVoice(cur) {
		t.Error("the values read count as a change")
	}
	other := parley.TenantInput{VoicePhoneNumber: parley.Some("+33100000000")}
	if !other.ChangesVoice(cur) {
		t.Error("a new number is not a change")
	}
	if (&parley.TenantInput{Name: parley.Some("Acme")}).ChangesVoice(cur) {
		t.Error("a name counts as a voice change")
	}
}
