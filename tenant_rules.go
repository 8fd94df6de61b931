package parley

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The rules of a tenant's own settings (PUT /tenants/{slug}, the
// dashboard's settings and voice pages, the MCP tool update_persona), and
// the voice rules they share with a voice setup.

// The values of the tenant's enumerated settings.
var (
	BotTones         = []string{"FORMAL", "NEUTRAL", "FRIENDLY", "PLAYFUL", "TECHNICAL"}
	AvatarTypes      = []string{"DEFAULT", "UPLOAD", "LIBRARY", "GENERATED"}
	ContentPolicies  = []string{"SFW_STRICT", "SFW", "MODERATE", "UNFILTERED"}
	VisitorAuthModes = []string{"jwt", "otp", "all"}
	VoiceProviders   = []string{VoiceProviderVapi}
)

// The shapes of the tenant's patterned settings.
var (
	// HexColorPattern is a colour's shape: #RRGGBB.
	HexColorPattern = regexp.MustCompile(`^#[0-9A-Fa-f]{6}$`)
	// DomainPattern is an allowed domain's shape, lower-cased: a host, a
	// leading *. for its subdomains, an optional port.
	DomainPattern = regexp.MustCompile(`^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(:[0-9]{1,5})?$`)
	// PhonePattern (E.164) matches the database's check on voice_phone_number.
	PhonePattern = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)
	// AssistantIDPattern: the orchestrator's ids are UUIDs; any id of
	// letters, digits and . _ : - is taken.
	AssistantIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]*$`)
	// languagePattern (BCP 47) is a language tag's shape: a primary
	// language subtag, then subtags such as a script or a region (en,
	// en-US, fr-FR, zh-Hant-TW).
	languagePattern = regexp.MustCompile(`^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$`)
)

// The tenant's limits not given by the spec, chosen here and documented in
// the OpenAPI document.
const (
	MaxTenantName       = 255
	MaxDescription      = 500
	MaxBotName          = 50
	MaxBotTitle         = 100
	MaxBotLore          = 10000
	MaxTeaserText       = 160
	MaxAvatarBackground = 100
	MaxDomain           = 255
	MaxDomains          = 100
	MaxCaptchaKey       = 255
	MinAutoOpenDelay    = 3
	MaxAutoOpenDelay    = 120
	MaxCTAHeadline      = 100
	MaxCTASubtitle      = 200
	MaxCTAText          = 50
	MaxCTAOfficeHours   = 200
)

// The voice limits: the spec gives none; chosen here and documented in the
// OpenAPI document.
const (
	MaxVoiceID          = 100
	MaxVoiceLanguage    = 35
	MaxFirstMessage     = 1000
	MaxEndCallPhrases   = 10
	MaxEndCallPhrase    = 100
	MinCallDuration     = 10   // seconds; 0 leaves the orchestrator's default
	MaxCallDuration     = 3600 // one hour
	MaxVoiceAssistantID = 200
)

const (
	phoneMessage    = "must be an E.164 phone number: + then the country code and number, 8 to 16 characters, such as +33198765432"
	languageMessage = "must be a BCP-47 language tag such as en-US or fr-FR"
)

// VoicePlanRequired is the refusal of a voice setting on a plan without
// voice.
func VoicePlanRequired(plan string) error {
	return PlanRequired("Voice calls", plan, "scale")
}

// TenantInput is a change of the tenant's own settings as a caller gives
// it, through any surface (its JSON is the REST API's and the MCP tools'):
// the fields set change. CaptchaSecretKey is plain text, sealed before it
// is stored. Problems holds what the surface could not read of it,
// reported first.
type TenantInput struct {
	Name              Opt[string]           `json:"name"`
	Description       Opt[string]           `json:"description"`
	Timezone          Opt[string]           `json:"timezone"`
	BotName           Opt[string]           `json:"botName"`
	BotTitle          Opt[string]           `json:"botTitle"`
	BotLore           Opt[string]           `json:"botLore"`
	BotTone           Opt[string]           `json:"botTone"`
	UseTutoiement     Opt[bool]             `json:"useTutoiement"`
	AllowEmojis       Opt[bool]             `json:"allowEmojis"`
	PrimaryColor      Opt[string]           `json:"primaryColor"`
	SecondaryColor    Opt[string]           `json:"secondaryColor"`
	ShowAIBadge       Opt[bool]             `json:"showAiBadge"`
	ShowSources       Opt[bool]             `json:"showSources"`
	BotAvatar         Opt[string]           `json:"botAvatar"`
	AvatarType        Opt[string]           `json:"avatarType"`
	AvatarBackground  Opt[string]           `json:"avatarBackground"`
	TeaserText        Opt[string]           `json:"teaserText"`
	AutoOpen          Opt[bool]             `json:"autoOpen"`
	AutoOpenDelay     Opt[int]              `json:"autoOpenDelay"`
	BubblePulse       Opt[bool]             `json:"bubblePulse"`
	AllowedDomains    Opt[[]string]         `json:"allowedDomains"`
	ContentPolicy     Opt[string]           `json:"contentPolicy"`
	VisitorAuthMode   Opt[string]           `json:"visitorAuthMode"`
	VisitorContextURL Opt[string]           `json:"visitorContextUrl"`
	CaptchaEnabled    Opt[bool]             `json:"captchaEnabled"`
	CaptchaSiteKey    Opt[string]           `json:"captchaSiteKey"`
	CaptchaSecretKey  Opt[string]           `json:"captchaSecretKey"`
	BookingCTAEnabled Opt[bool]             `json:"bookingCtaEnabled"`
	BookingCTAConfig  Opt[BookingCTAConfig] `json:"bookingCtaConfig"`
	IsOnboarded       Opt[bool]             `json:"isOnboarded"`
	LLMWebhookURL     Opt[string]           `json:"llmWebhookUrl"`
	VoiceEnabled      Opt[bool]             `json:"voiceEnabled"`
	VoiceProvider     Opt[string]           `json:"voiceProvider"`
	VoicePhoneNumber  Opt[string]           `json:"voicePhoneNumber"`
	VoiceAssistantID  Opt[string]           `json:"voiceAssistantId"`
	VoiceConfig       Opt[VoiceConfig]      `json:"voiceConfig"`
	HumanHours        Opt[HumanHours]       `json:"humanHours"`
	HumanWaitSeconds  Opt[int]              `json:"humanWaitSeconds"`
	HumanIdleSeconds  Opt[int]              `json:"humanIdleSeconds"`
	Problems          FieldErrors           `json:"-"`
}

// Check normalises in (texts trimmed, empty strings clear nullable fields,
// domains lower-cased and deduplicated) and returns its problems against
// cur, the tenant as stored, Problems first. Whether Parley may call the
// two URLs it signs its calls to (llmWebhookUrl, visitorContextUrl) is
// the caller's to vet: it needs the outbound guard.
func (in *TenantInput) Check(cur Tenant) FieldErrors {
	errs := in.Problems.Copy()
	in.checkSettings(errs)
	in.checkVoice(errs, cur)
	in.checkCaptcha(errs, cur)
	return errs
}

// checkSettings checks every rule of the tenant table but voice's.
func (in *TenantInput) checkSettings(errs FieldErrors) {
	// PostgreSQL text cannot hold NUL; refuse it here rather than fail the UPDATE with a 500.
	for _, f := range []struct {
		name string
		o    Opt[string]
	}{{"name", in.Name}, {"description", in.Description}, {"timezone", in.Timezone}, {"botName", in.BotName},
		{"botTitle", in.BotTitle}, {"botLore", in.BotLore}, {"botTone", in.BotTone}, {"primaryColor", in.PrimaryColor},
		{"secondaryColor", in.SecondaryColor}, {"botAvatar", in.BotAvatar}, {"avatarType", in.AvatarType},
		{"avatarBackground", in.AvatarBackground}, {"teaserText", in.TeaserText}, {"contentPolicy", in.ContentPolicy},
		{"visitorAuthMode", in.VisitorAuthMode}, {"visitorContextUrl", in.VisitorContextURL}, {"captchaSiteKey", in.CaptchaSiteKey},
		{"llmWebhookUrl", in.LLMWebhookURL}} {
		if f.o.Set && strings.ContainsRune(f.o.Value, 0) {
			errs.Add(f.name, NoNUL)
		}
	}
	for _, o := range []*Opt[string]{&in.Description, &in.BotName, &in.BotTitle, &in.BotLore, &in.SecondaryColor,
		&in.BotAvatar, &in.AvatarBackground, &in.TeaserText, &in.VisitorAuthMode, &in.VisitorContextURL, &in.CaptchaSiteKey, &in.LLMWebhookURL} {
		NullIfEmpty(o)
	}
	in.Name.Value = strings.TrimSpace(in.Name.Value)
	CheckText(errs, "name", in.Name, MaxTenantName, false)
	CheckLen(errs, "description", in.Description, MaxDescription)
	if NotNull(errs, "timezone", in.Timezone) {
		if _, err := time.LoadLocation(in.Timezone.Value); err != nil || in.Timezone.Value == "" || in.Timezone.Value == "Local" {
			errs.Add("timezone", "must be an IANA time zone such as Europe/Paris or UTC")
		}
	}
	CheckLen(errs, "botName", in.BotName, MaxBotName)
	CheckLen(errs, "botTitle", in.BotTitle, MaxBotTitle)
	CheckLen(errs, "botLore", in.BotLore, MaxBotLore)
	CheckEnum(errs, "botTone", in.BotTone, BotTones)
	NotNull(errs, "useTutoiement", in.UseTutoiement)
	NotNull(errs, "allowEmojis", in.AllowEmojis)
	if NotNull(errs, "primaryColor", in.PrimaryColor) && !HexColorPattern.MatchString(in.PrimaryColor.Value) {
		errs.Add("primaryColor", "must be a hex colour #RRGGBB")
	}
	if in.SecondaryColor.Set && !in.SecondaryColor.Null && !HexColorPattern.MatchString(in.SecondaryColor.Value) {
		errs.Add("secondaryColor", "must be a hex colour #RRGGBB")
	}
	NotNull(errs, "showAiBadge", in.ShowAIBadge)
	NotNull(errs, "showSources", in.ShowSources)
	CheckHTTPURL(errs, "botAvatar", in.BotAvatar, false)
	CheckEnum(errs, "avatarType", in.AvatarType, AvatarTypes)
	CheckLen(errs, "avatarBackground", in.AvatarBackground, MaxAvatarBackground)
	CheckLen(errs, "teaserText", in.TeaserText, MaxTeaserText)
	NotNull(errs, "autoOpen", in.AutoOpen)
	if NotNull(errs, "autoOpenDelay", in.AutoOpenDelay) && (in.AutoOpenDelay.Value < MinAutoOpenDelay || in.AutoOpenDelay.Value > MaxAutoOpenDelay) {
		errs.Add("autoOpenDelay", fmt.Sprintf("must be between %d and %d seconds", MinAutoOpenDelay, MaxAutoOpenDelay))
	}
	NotNull(errs, "bubblePulse", in.BubblePulse)
	if in.AllowedDomains.Set && !in.AllowedDomains.Null {
		in.AllowedDomains.Value = checkDomains(errs, in.AllowedDomains.Value)
	}
	CheckEnum(errs, "contentPolicy", in.ContentPolicy, ContentPolicies)
	if in.VisitorAuthMode.Set && !in.VisitorAuthMode.Null && !slices.Contains(VisitorAuthModes, in.VisitorAuthMode.Value) {
		errs.Add("visitorAuthMode", "must be one of jwt, otp, all, or null")
	}
	for _, o := range []*Opt[string]{&in.VisitorContextURL, &in.LLMWebhookURL} {
		if o.Set && !o.Null {
			o.Value = strings.TrimSpace(o.Value)
		}
	}
	// https is enforced with the address check (plain http for exempt
	// hosts), which needs the outbound guard: the caller's.
	CheckHTTPURL(errs, "visitorContextUrl", in.VisitorContextURL, false)
	CheckHTTPURL(errs, "llmWebhookUrl", in.LLMWebhookURL, false)
	NotNull(errs, "captchaEnabled", in.CaptchaEnabled)
	CheckLen(errs, "captchaSiteKey", in.CaptchaSiteKey, MaxCaptchaKey)
	CheckLen(errs, "captchaSecretKey", in.CaptchaSecretKey, MaxCaptchaKey)
	NotNull(errs, "bookingCtaEnabled", in.BookingCTAEnabled)
	if in.BookingCTAConfig.Set && !in.BookingCTAConfig.Null {
		cfg := in.BookingCTAConfig.Value
		for _, f := range []struct {
			name, value string
			max         int
		}{{"headline", cfg.Headline, MaxCTAHeadline}, {"subtitle", cfg.Subtitle, MaxCTASubtitle},
			{"ctaText", cfg.CTAText, MaxCTAText}, {"officeHours", cfg.OfficeHours, MaxCTAOfficeHours}} {
			if strings.ContainsRune(f.value, 0) {
				errs.Add("bookingCtaConfig", f.name+" "+NoNUL)
			}
			if utf8.RuneCountInString(f.value) > f.max {
				errs.Add("bookingCtaConfig", fmt.Sprintf("%s %s", f.name, TooLong(f.max)))
			}
		}
	}
	NotNull(errs, "isOnboarded", in.IsOnboarded)
}

// checkDomains checks allowedDomains and returns them lower-cased, without
// duplicates.
func checkDomains(errs FieldErrors, domains []string) []string {
	if len(domains) > MaxDomains {
		errs.Add("allowedDomains", fmt.Sprintf("must have at most %d entries", MaxDomains))
		return domains
	}
	seen := map[string]bool{}
	out := []string{}
	for i, d := range domains {
		d = strings.ToLower(strings.TrimSpace(d))
		switch {
		case utf8.RuneCountInString(d) > MaxDomain:
			errs.Add("allowedDomains", fmt.Sprintf("entry %d %s", i+1, TooLong(MaxDomain)))
		case !DomainPattern.MatchString(d):
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
// looking at in and at what cur already has.
func (in *TenantInput) checkCaptcha(errs FieldErrors, cur Tenant) {
	enabled := cur.CaptchaEnabled
	if in.CaptchaEnabled.Set {
		enabled = in.CaptchaEnabled.Value
	}
	if !enabled {
		return
	}
	hasSite := cur.CaptchaSiteKey != nil
	if in.CaptchaSiteKey.Set {
		hasSite = !in.CaptchaSiteKey.Null
	}
	hasSecret := cur.CaptchaSecretKey != nil
	if in.CaptchaSecretKey.Set {
		hasSecret = !in.CaptchaSecretKey.Null && in.CaptchaSecretKey.Value != ""
	}
	if !hasSite {
		errs.Add("captchaSiteKey", "is required while captchaEnabled is true")
	}
	if !hasSecret {
		errs.Add("captchaSecretKey", "is required while captchaEnabled is true")
	}
}

// checkVoice checks the voice fields against cur: voiceEnabled true needs
// a secret, which only a setup sets.
func (in *TenantInput) checkVoice(errs FieldErrors, cur Tenant) {
	if NotNull(errs, "voiceEnabled", in.VoiceEnabled) && in.VoiceEnabled.Value && cur.VoiceSecret == nil {
		errs.Add("voiceEnabled", "needs the secret the orchestrator sends, which a voice setup creates: "+
			"set up a phone line or link your own assistant first")
	}
	CheckEnum(errs, "voiceProvider", in.VoiceProvider, VoiceProviders)
	NullIfEmpty(&in.VoicePhoneNumber)
	NullIfEmpty(&in.VoiceAssistantID)
	CheckPhoneNumber(errs, "voicePhoneNumber", &in.VoicePhoneNumber)
	CheckAssistantID(errs, "voiceAssistantId", &in.VoiceAssistantID)
	if in.VoiceConfig.Set && !in.VoiceConfig.Null {
		CheckVoiceConfig(errs, "voiceConfig", &in.VoiceConfig.Value)
	}
}

// ChangesVoice reports whether in would change one of cur's voice
// settings: sending back the values read changes nothing, on any plan.
func (in *TenantInput) ChangesVoice(cur Tenant) bool {
	differs := func(o Opt[string], stored *string) bool {
		if !o.Set {
			return false
		}
		if o.Null || o.Value == "" {
			return stored != nil
		}
		return stored == nil || *stored != o.Value
	}
	if in.VoiceEnabled.Set && (in.VoiceEnabled.Null || in.VoiceEnabled.Value != cur.VoiceEnabled) {
		return true
	}
	if in.VoiceProvider.Set && (in.VoiceProvider.Null || in.VoiceProvider.Value != cur.VoiceProvider) {
		return true
	}
	if differs(in.VoicePhoneNumber, cur.VoicePhoneNumber) || differs(in.VoiceAssistantID, cur.VoiceAssistantID) {
		return true
	}
	if in.VoiceConfig.Set {
		a, _ := json.Marshal(in.VoiceConfig.Value)
		b, _ := json.Marshal(cur.VoiceConfig)
		return string(a) != string(b)
	}
	return false
}

// printable reports whether s holds no control characters.
func printable(s string) bool {
	return !strings.ContainsFunc(s, unicode.IsControl)
}

// CheckVoiceConfig checks a voiceConfig (its texts trimmed, its phrases
// trimmed, none an empty list), adding its problems under field
// (voiceConfig for the tenant, the body's own names for a setup when field
// is "").
func CheckVoiceConfig(errs FieldErrors, field string, cfg *VoiceConfig) {
	name := func(member string) string {
		if field == "" {
			return member
		}
		return field
	}
	prefix := func(member string) string {
		if field == "" {
			return ""
		}
		return member + " "
	}
	cfg.VoiceID = strings.TrimSpace(cfg.VoiceID)
	cfg.Language = strings.TrimSpace(cfg.Language)
	cfg.FirstMessage = strings.TrimSpace(cfg.FirstMessage)
	switch {
	case utf8.RuneCountInString(cfg.VoiceID) > MaxVoiceID:
		errs.Add(name("voiceId"), prefix("voiceId")+TooLong(MaxVoiceID))
	case !printable(cfg.VoiceID):
		errs.Add(name("voiceId"), prefix("voiceId")+"must not contain control characters")
	}
	if cfg.Language != "" && (len(cfg.Language) > MaxVoiceLanguage || !languagePattern.MatchString(cfg.Language)) {
		errs.Add(name("language"), prefix("language")+languageMessage)
	}
	switch {
	case utf8.RuneCountInString(cfg.FirstMessage) > MaxFirstMessage:
		errs.Add(name("firstMessage"), prefix("firstMessage")+TooLong(MaxFirstMessage))
	case strings.ContainsRune(cfg.FirstMessage, 0):
		errs.Add(name("firstMessage"), prefix("firstMessage")+NoNUL)
	}
	if len(cfg.EndCallPhrases) > MaxEndCallPhrases {
		errs.Add(name("endCallPhrases"), prefix("endCallPhrases")+fmt.Sprintf("must have at most %d phrases", MaxEndCallPhrases))
	} else {
		phrases := make([]string, 0, len(cfg.EndCallPhrases))
		for i, p := range cfg.EndCallPhrases {
			p = strings.TrimSpace(p)
			switch {
			case p == "":
				errs.Add(name("endCallPhrases"), prefix("endCallPhrases")+fmt.Sprintf("phrase %d is empty", i+1))
			case utf8.RuneCountInString(p) > MaxEndCallPhrase:
				errs.Add(name("endCallPhrases"), prefix("endCallPhrases")+fmt.Sprintf("phrase %d %s", i+1, TooLong(MaxEndCallPhrase)))
			case !printable(p):
				errs.Add(name("endCallPhrases"), prefix("endCallPhrases")+fmt.Sprintf("phrase %d must not contain control characters", i+1))
			}
			phrases = append(phrases, p)
		}
		cfg.EndCallPhrases = phrases
		if len(phrases) == 0 {
			cfg.EndCallPhrases = nil
		}
	}
	if d := cfg.MaxCallDuration; d != 0 && (d < MinCallDuration || d > MaxCallDuration) {
		errs.Add(name("maxCallDuration"), prefix("maxCallDuration")+
			fmt.Sprintf("must be between %d and %d seconds (0 for the orchestrator's default)", MinCallDuration, MaxCallDuration))
	}
}

// CheckPhoneNumber checks an E.164 number (trimmed in place).
func CheckPhoneNumber(errs FieldErrors, field string, o *Opt[string]) {
	if !o.Set || o.Null {
		return
	}
	o.Value = strings.TrimSpace(o.Value)
	if !PhonePattern.MatchString(o.Value) {
		errs.Add(field, phoneMessage)
	}
}

// CheckAssistantID checks an orchestrator assistant id (trimmed in place).
func CheckAssistantID(errs FieldErrors, field string, o *Opt[string]) {
	if !o.Set || o.Null {
		return
	}
	o.Value = strings.TrimSpace(o.Value)
	switch {
	case utf8.RuneCountInString(o.Value) > MaxVoiceAssistantID:
		errs.Add(field, TooLong(MaxVoiceAssistantID))
	case !AssistantIDPattern.MatchString(o.Value):
		errs.Add(field, "must be the orchestrator's assistant id: letters, digits, and . _ : -")
	}
}
