package handlers

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
)

// Voice field limits: the spec gives none; chosen here and documented in
// the OpenAPI document.
const (
	maxVoiceID          = 100
	maxVoiceLanguage    = 35
	maxFirstMessage     = 1000
	maxEndCallPhrases   = 10
	maxEndCallPhrase    = 100
	minCallDuration     = 10   // seconds; 0 leaves the orchestrator's default
	maxCallDuration     = 3600 // one hour
	maxVoiceAssistantID = 200
	minVoiceSecret      = 16
	maxVoiceSecret      = 200
	voiceSecretBytes    = 32
)

var (
	// e164 matches the database's check on voice_phone_number.
	e164 = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)
	// bcp47 is the shape of a language tag: a primary language subtag, then
	// subtags such as a script or a region (en, en-US, fr-FR, zh-Hant-TW).
	bcp47 = regexp.MustCompile(`^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$`)
	// assistantIDPattern: the orchestrator's ids are UUIDs; any id of
	// letters, digits and . _ : - is taken.
	assistantIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]*$`)
	areaCodePattern    = regexp.MustCompile(`^[0-9]{3}$`)
	// VoiceProviders are the values of voiceProvider.
	VoiceProviders = []string{parley.VoiceProviderVapi}
)

const (
	e164Message     = "must be an E.164 phone number: + then the country code and number, 8 to 16 characters, such as +33198765432"
	languageMessage = "must be a BCP-47 language tag such as en-US or fr-FR"
)

// printable reports whether s holds no control characters.
func printable(s string) bool {
	return !strings.ContainsFunc(s, unicode.IsControl)
}

// checkVoiceConfig checks a voiceConfig, adding its problems under field
// (voiceConfig for the tenant, the body's own names for a setup when field
// is "").
func checkVoiceConfig(errs parley.FieldErrors, field string, cfg *parley.VoiceConfig) {
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
	case utf8.RuneCountInString(cfg.VoiceID) > maxVoiceID:
		errs.Add(name("voiceId"), prefix("voiceId")+parley.TooLong(maxVoiceID))
	case !printable(cfg.VoiceID):
		errs.Add(name("voiceId"), prefix("voiceId")+"must not contain control characters")
	}
	if cfg.Language != "" && (len(cfg.Language) > maxVoiceLanguage || !bcp47.MatchString(cfg.Language)) {
		errs.Add(name("language"), prefix("language")+languageMessage)
	}
	switch {
	case utf8.RuneCountInString(cfg.FirstMessage) > maxFirstMessage:
		errs.Add(name("firstMessage"), prefix("firstMessage")+parley.TooLong(maxFirstMessage))
	case strings.ContainsRune(cfg.FirstMessage, 0):
		errs.Add(name("firstMessage"), prefix("firstMessage")+parley.NoNUL)
	}
	if len(cfg.EndCallPhrases) > maxEndCallPhrases {
		errs.Add(name("endCallPhrases"), prefix("endCallPhrases")+fmt.Sprintf("must have at most %d phrases", maxEndCallPhrases))
	} else {
		phrases := make([]string, 0, len(cfg.EndCallPhrases))
		for i, p := range cfg.EndCallPhrases {
			p = strings.TrimSpace(p)
			switch {
			case p == "":
				errs.Add(name("endCallPhrases"), prefix("endCallPhrases")+fmt.Sprintf("phrase %d is empty", i+1))
			case utf8.RuneCountInString(p) > maxEndCallPhrase:
				errs.Add(name("endCallPhrases"), prefix("endCallPhrases")+fmt.Sprintf("phrase %d %s", i+1, parley.TooLong(maxEndCallPhrase)))
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
	if d := cfg.MaxCallDuration; d != 0 && (d < minCallDuration || d > maxCallDuration) {
		errs.Add(name("maxCallDuration"), prefix("maxCallDuration")+
			fmt.Sprintf("must be between %d and %d seconds (0 for the orchestrator's default)", minCallDuration, maxCallDuration))
	}
}

// checkPhoneNumber checks an E.164 number (trimmed in place).
func checkPhoneNumber(errs parley.FieldErrors, field string, o *parley.Opt[string]) {
	if !o.Set || o.Null {
		return
	}
	o.Value = strings.TrimSpace(o.Value)
	if !e164.MatchString(o.Value) {
		errs.Add(field, e164Message)
	}
}

// checkAssistantID checks an orchestrator assistant id (trimmed in place).
func checkAssistantID(errs parley.FieldErrors, field string, o *parley.Opt[string]) {
	if !o.Set || o.Null {
		return
	}
	o.Value = strings.TrimSpace(o.Value)
	switch {
	case utf8.RuneCountInString(o.Value) > maxVoiceAssistantID:
		errs.Add(field, parley.TooLong(maxVoiceAssistantID))
	case !assistantIDPattern.MatchString(o.Value):
		errs.Add(field, "must be the orchestrator's assistant id: letters, digits, and . _ : -")
	}
}

// validateVoicePatch checks the voice fields of a tenant patch against the
// tenant t: voiceEnabled true needs a secret, which only a setup sets.
func validateVoicePatch(errs parley.FieldErrors, t parley.Tenant, p *db.TenantPatch) {
	if parley.NotNull(errs, "voiceEnabled", p.VoiceEnabled) && p.VoiceEnabled.Value && t.VoiceSecret == nil {
		errs.Add("voiceEnabled", "needs the secret the orchestrator sends, which a voice setup creates: "+
			"set up a phone line or link your own assistant first")
	}
	parley.CheckEnum(errs, "voiceProvider", p.VoiceProvider, VoiceProviders)
	parley.NullIfEmpty(&p.VoicePhoneNumber)
	parley.NullIfEmpty(&p.VoiceAssistantID)
	checkPhoneNumber(errs, "voicePhoneNumber", &p.VoicePhoneNumber)
	checkAssistantID(errs, "voiceAssistantId", &p.VoiceAssistantID)
	if p.VoiceConfig.Set && !p.VoiceConfig.Null {
		checkVoiceConfig(errs, "voiceConfig", &p.VoiceConfig.Value)
	}
}

// changesVoice reports whether p would change one of t's voice settings:
// sending back the values read changes nothing, on any plan.
func changesVoice(t parley.Tenant, p db.TenantPatch) bool {
	differs := func(o parley.Opt[string], cur *string) bool {
		if !o.Set {
			return false
		}
		if o.Null || o.Value == "" {
			return cur != nil
		}
		return cur == nil || *cur != o.Value
	}
	if p.VoiceEnabled.Set && (p.VoiceEnabled.Null || p.VoiceEnabled.Value != t.VoiceEnabled) {
		return true
	}
	if p.VoiceProvider.Set && (p.VoiceProvider.Null || p.VoiceProvider.Value != t.VoiceProvider) {
		return true
	}
	if differs(p.VoicePhoneNumber, t.VoicePhoneNumber) || differs(p.VoiceAssistantID, t.VoiceAssistantID) {
		return true
	}
	if p.VoiceConfig.Set {
		a, _ := json.Marshal(p.VoiceConfig.Value)
		b, _ := json.Marshal(t.VoiceConfig)
		return string(a) != string(b)
	}
	return false
}

// voicePlanRequired is the 402 of a voice setting on a plan without voice.
func voicePlanRequired(plan string) error {
	return parley.PlanRequired("Voice calls", plan, "scale")
}

// newVoiceSecret returns a random secret for the orchestrator to send.
func newVoiceSecret() string {
	b := make([]byte, voiceSecretBytes)
	_, _ = rand.Read(b)
	return "vs_" + base64.RawURLEncoding.EncodeToString(b)
}
