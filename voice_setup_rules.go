package parley

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// The rules of a voice setup (POST and PUT /tenants/{slug}/voice/setup, the
// dashboard's voice page): the managed setup, where Parley creates the
// assistant at the orchestrator, and the link of the tenant's own
// assistant. The voice settings' own rules are the tenant's
// (CheckVoiceConfig, CheckPhoneNumber, CheckAssistantID).

// A voice setup's own limits: the spec gives none; chosen here and
// documented in the OpenAPI document.
const (
	MinVoiceSecret = 16
	MaxVoiceSecret = 200
)

// areaCodePattern is the shape of the area code a bought number is asked
// in (Vapi's numbers are North American: three digits).
var areaCodePattern = regexp.MustCompile(`^[0-9]{3}$`)

// VoiceSetupInput is a managed voice setup as a caller gives it, through
// any surface (its JSON is the REST API's): the voice settings it sets
// change the tenant's for the assistant created; BuyNumber buys a number
// for it. Problems holds what the surface could not read of it, reported
// first.
type VoiceSetupInput struct {
	Language       Opt[string] `json:"language"`
	VoiceID        Opt[string] `json:"voiceId"`
	FirstMessage   Opt[string] `json:"firstMessage"`
	BuyNumber      Opt[bool]   `json:"buyNumber"`
	NumberAreaCode Opt[string] `json:"numberAreaCode"`
	Problems       FieldErrors `json:"-"`
}

// Check checks in against cur, the tenant as stored (the area code
// trimmed), and returns the voice settings the setup leads to (cur's with
// what in sets) and its problems, Problems first. A tenant with a number
// cannot buy another: managed setup links one number per tenant.
func (in *VoiceSetupInput) Check(cur Tenant) (VoiceConfig, FieldErrors) {
	errs := in.Problems.Copy()
	cfg := mergeVoiceConfig(cur.VoiceConfig, in.Language, in.VoiceID, in.FirstMessage)
	CheckVoiceConfig(errs, "", &cfg)
	NotNull(errs, "buyNumber", in.BuyNumber)
	if in.NumberAreaCode.Set && !in.NumberAreaCode.Null {
		in.NumberAreaCode.Value = strings.TrimSpace(in.NumberAreaCode.Value)
		if in.NumberAreaCode.Value != "" && !areaCodePattern.MatchString(in.NumberAreaCode.Value) {
			errs.Add("numberAreaCode", "must be a 3-digit area code such as 415")
		}
	}
	if in.NumberAreaCode.Value != "" && !in.BuyNumber.Value {
		errs.Add("numberAreaCode", "is only used when a number is bought (buyNumber true)")
	}
	if in.BuyNumber.Value && cur.VoicePhoneNumber != nil {
		errs.Add("buyNumber", fmt.Sprintf("this tenant already has the number %s: managed setup links one number per tenant", *cur.VoicePhoneNumber))
	}
	return cfg, errs
}

// VoiceLinkInput is the link of the tenant's own assistant at the
// orchestrator as a caller gives it, through any surface (its JSON is the
// REST API's). Secret is the one the orchestrator will send, in plain
// text: unset or empty, one is generated. Problems holds what the surface
// could not read of it, reported first.
type VoiceLinkInput struct {
	AssistantID Opt[string] `json:"assistantId"`
	PhoneNumber Opt[string] `json:"phoneNumber"`
	Language    Opt[string] `json:"language"`
	Secret      Opt[string] `json:"secret"`
	Problems    FieldErrors `json:"-"`
}

// Check checks in against cur, the tenant as stored (the assistant id and
// number trimmed, an empty number a clear), and returns the voice settings
// the link leads to (cur's with the language in sets) and its problems,
// Problems first. The secret, when given, is taken as typed: it travels in
// an HTTP header.
func (in *VoiceLinkInput) Check(cur Tenant) (VoiceConfig, FieldErrors) {
	errs := in.Problems.Copy()
	if !in.AssistantID.Set || in.AssistantID.Null || strings.TrimSpace(in.AssistantID.Value) == "" {
		errs.Add("assistantId", "is required: the id of your assistant at the orchestrator")
	} else {
		CheckAssistantID(errs, "assistantId", &in.AssistantID)
	}
	NullIfEmpty(&in.PhoneNumber)
	CheckPhoneNumber(errs, "phoneNumber", &in.PhoneNumber)
	cfg := mergeVoiceConfig(cur.VoiceConfig, in.Language, Opt[string]{}, Opt[string]{})
	CheckVoiceConfig(errs, "", &cfg)
	if secret, ok := in.GivenSecret(); ok {
		n := utf8.RuneCountInString(secret)
		switch {
		case n < MinVoiceSecret || n > MaxVoiceSecret:
			errs.Add("secret", fmt.Sprintf("must be %d to %d characters (omit it to have one generated)", MinVoiceSecret, MaxVoiceSecret))
		case strings.ContainsFunc(secret, func(r rune) bool { return r <= ' ' || r == 0x7f || r > '~' }):
			errs.Add("secret", "must be printable ASCII without spaces: it travels in an HTTP header")
		}
	}
	return cfg, errs
}

// GivenSecret is the secret the caller gave, ok false when it gave none
// (unset, null or empty): one is generated then.
func (in *VoiceLinkInput) GivenSecret() (string, bool) {
	if in.Secret.Set && !in.Secret.Null && in.Secret.Value != "" {
		return in.Secret.Value, true
	}
	return "", false
}

// mergeVoiceConfig is cur with what a setup sets: a null clears.
func mergeVoiceConfig(cur VoiceConfig, language, voiceID, firstMessage Opt[string]) VoiceConfig {
	cfg := cur
	cfg.EndCallPhrases = append([]string(nil), cur.EndCallPhrases...)
	for _, f := range []struct {
		o   Opt[string]
		dst *string
	}{{language, &cfg.Language}, {voiceID, &cfg.VoiceID}, {firstMessage, &cfg.FirstMessage}} {
		if f.o.Set {
			*f.dst = f.o.Value // null clears
		}
	}
	return cfg
}
