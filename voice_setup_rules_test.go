package parley

import (
	"strings"
	"testing"
)

// The managed setup's rules at their limits and one past, against the
// stored tenant, and the problems read by the surface first.
func TestVoiceSetupInputCheck(t *testing.T) {
	t.Parallel()
	long := func(n int) Opt[string] { return Some(strings.Repeat("x", n)) }
	withNumber := Tenant{VoicePhoneNumber: new("+14155550123")}
	for name, c := range map[string]struct {
		cur     Tenant
		in      VoiceSetupInput
		field   string
		problem string
	}{
		"Empty":                {Tenant{}, VoiceSetupInput{}, "", ""},
		"BuyWithAreaCode":      {Tenant{}, VoiceSetupInput{BuyNumber: Some(true), NumberAreaCode: Some(" 415 ")}, "", ""},
		"AreaCodeTwoDigits":    {Tenant{}, VoiceSetupInput{BuyNumber: Some(true), NumberAreaCode: Some("41")}, "numberAreaCode", "must be a 3-digit area code such as 415"},
		"AreaCodeFourDigits":   {Tenant{}, VoiceSetupInput{BuyNumber: Some(true), NumberAreaCode: Some("4150")}, "numberAreaCode", "must be a 3-digit area code such as 415"},
		"AreaCodeLetters":      {Tenant{}, VoiceSetupInput{BuyNumber: Some(true), NumberAreaCode: Some("abc")}, "numberAreaCode", "must be a 3-digit area code such as 415"},
		"AreaCodeWithoutBuy":   {Tenant{}, VoiceSetupInput{NumberAreaCode: Some("415")}, "numberAreaCode", "is only used when a number is bought (buyNumber true)"},
		"EmptyAreaCode":        {Tenant{}, VoiceSetupInput{NumberAreaCode: Some("  ")}, "", ""},
		"NullAreaCode":         {Tenant{}, VoiceSetupInput{NumberAreaCode: Opt[string]{Set: true, Null: true}}, "", ""},
		"NullBuyNumber":        {Tenant{}, VoiceSetupInput{BuyNumber: Opt[bool]{Set: true, Null: true}}, "buyNumber", "must not be null"},
		"SecondNumber":         {withNumber, VoiceSetupInput{BuyNumber: Some(true)}, "buyNumber", "this tenant already has the number +14155550123: managed setup links one number per tenant"},
		"KeepNumber":           {withNumber, VoiceSetupInput{BuyNumber: Some(false)}, "", ""},
		"BadLanguage":          {Tenant{}, VoiceSetupInput{Language: Some("english!")}, "language", languageMessage},
		"LanguageAtLimit":      {Tenant{}, VoiceSetupInput{Language: Some("en" + strings.Repeat("-abcdefgh", 3) + "-abcde")}, "", ""},
		"LanguagePastLimit":    {Tenant{}, VoiceSetupInput{Language: Some("en" + strings.Repeat("-abcdefgh", 3) + "-abcdef")}, "language", languageMessage},
		"VoiceIDAtLimit":       {Tenant{}, VoiceSetupInput{VoiceID: long(MaxVoiceID)}, "", ""},
		"VoiceIDPastLimit":     {Tenant{}, VoiceSetupInput{VoiceID: long(MaxVoiceID + 1)}, "voiceId", "must be at most 100 characters"},
		"FirstMessageAtLimit":  {Tenant{}, VoiceSetupInput{FirstMessage: long(MaxFirstMessage)}, "", ""},
		"FirstMessagePastLim":  {Tenant{}, VoiceSetupInput{FirstMessage: long(MaxFirstMessage + 1)}, "firstMessage", "must be at most 1000 characters"},
		"StoredConfigChecked":  {Tenant{VoiceConfig: VoiceConfig{MaxCallDuration: 5}}, VoiceSetupInput{}, "maxCallDuration", "must be between 10 and 3600 seconds (0 for the orchestrator's default)"},
		"ReadProblemFirst":     {Tenant{}, VoiceSetupInput{Problems: FieldErrors{"buyNumber": "must be a boolean"}, BuyNumber: Opt[bool]{Set: true, Null: true}}, "buyNumber", "must be a boolean"},
		"ReadProblemOtherKept": {Tenant{}, VoiceSetupInput{Problems: FieldErrors{"voiceId": "must be a string"}, NumberAreaCode: Some("415")}, "voiceId", "must be a string"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, errs := c.in.Check(c.cur)
			if c.field == "" {
				if len(errs) != 0 {
					t.Fatalf("problems %v, want none", errs)
				}
				return
			}
			if errs[c.field] != c.problem {
				t.Fatalf("%s: %q, want %q (all: %v)", c.field, errs[c.field], c.problem, errs)
			}
		})
	}
}

// The managed setup's voice settings are the tenant's with what the input
// sets: unset keeps, null clears; the tenant's phrases are not shared.
func TestVoiceSetupInputConfig(t *testing.T) {
	t.Parallel()
	cur := Tenant{VoiceConfig: VoiceConfig{VoiceID: "Kylie", Language: "fr-FR", FirstMessage: "Bonjour",
		EndCallPhrases: []string{" au revoir "}, MaxCallDuration: 600}}
	in := VoiceSetupInput{Language: Some(" en-US "), FirstMessage: Opt[string]{Set: true, Null: true}, NumberAreaCode: Some(" ")}
	cfg, errs := in.Check(cur)
	if len(errs) != 0 {
		t.Fatalf("problems %v", errs)
	}
	want := VoiceConfig{VoiceID: "Kylie", Language: "en-US", EndCallPhrases: []string{"au revoir"}, MaxCallDuration: 600}
	if cfg.VoiceID != want.VoiceID || cfg.Language != want.Language || cfg.FirstMessage != "" ||
		len(cfg.EndCallPhrases) != 1 || cfg.EndCallPhrases[0] != "au revoir" || cfg.MaxCallDuration != 600 {
		t.Errorf("config %+v, want %+v", cfg, want)
	}
	if cur.VoiceConfig.EndCallPhrases[0] != " au revoir " {
		t.Errorf("the tenant's phrases changed: %q", cur.VoiceConfig.EndCallPhrases)
	}
	if in.NumberAreaCode.Value != "" {
		t.Errorf("area code %q, want trimmed", in.NumberAreaCode.Value)
	}
}

// The link's rules at their limits and one past, and the secret given or
// left to be generated.
func TestVoiceLinkInputCheck(t *testing.T) {
	t.Parallel()
	ok := func() VoiceLinkInput {
		return VoiceLinkInput{AssistantID: Some(" 5b6c1d2e-0f9a-4b8c "), PhoneNumber: Some("+33198765432")}
	}
	secret := func(n int) Opt[string] { return Some(strings.Repeat("s", n)) }
	const secretSize = "must be 16 to 200 characters (omit it to have one generated)"
	for name, c := range map[string]struct {
		edit    func(*VoiceLinkInput)
		field   string
		problem string
	}{
		"Valid":                {func(*VoiceLinkInput) {}, "", ""},
		"NoAssistant":          {func(in *VoiceLinkInput) { in.AssistantID = Opt[string]{} }, "assistantId", "is required: the id of your assistant at the orchestrator"},
		"NullAssistant":        {func(in *VoiceLinkInput) { in.AssistantID = Opt[string]{Set: true, Null: true} }, "assistantId", "is required: the id of your assistant at the orchestrator"},
		"BlankAssistant":       {func(in *VoiceLinkInput) { in.AssistantID = Some("  ") }, "assistantId", "is required: the id of your assistant at the orchestrator"},
		"AssistantAtLimit":     {func(in *VoiceLinkInput) { in.AssistantID = Some(strings.Repeat("a", MaxVoiceAssistantID)) }, "", ""},
		"AssistantPastLimit":   {func(in *VoiceLinkInput) { in.AssistantID = Some(strings.Repeat("a", MaxVoiceAssistantID+1)) }, "assistantId", "must be at most 200 characters"},
		"AssistantBadChars":    {func(in *VoiceLinkInput) { in.AssistantID = Some("asst/1") }, "assistantId", "must be the orchestrator's assistant id: letters, digits, and . _ : -"},
		"NoNumber":             {func(in *VoiceLinkInput) { in.PhoneNumber = Opt[string]{} }, "", ""},
		"EmptyNumber":          {func(in *VoiceLinkInput) { in.PhoneNumber = Some("") }, "", ""},
		"NumberAtLimit":        {func(in *VoiceLinkInput) { in.PhoneNumber = Some("+123456789012345") }, "", ""},
		"NumberPastLimit":      {func(in *VoiceLinkInput) { in.PhoneNumber = Some("+1234567890123456") }, "phoneNumber", phoneMessage},
		"NumberAtShortest":     {func(in *VoiceLinkInput) { in.PhoneNumber = Some("+1234567") }, "", ""},
		"NumberTooShort":       {func(in *VoiceLinkInput) { in.PhoneNumber = Some("+123456") }, "phoneNumber", phoneMessage},
		"NumberNoPlus":         {func(in *VoiceLinkInput) { in.PhoneNumber = Some("0198765432") }, "phoneNumber", phoneMessage},
		"BadLanguage":          {func(in *VoiceLinkInput) { in.Language = Some("français") }, "language", languageMessage},
		"SecretAtShortest":     {func(in *VoiceLinkInput) { in.Secret = secret(MinVoiceSecret) }, "", ""},
		"SecretTooShort":       {func(in *VoiceLinkInput) { in.Secret = secret(MinVoiceSecret - 1) }, "secret", secretSize},
		"SecretAtLongest":      {func(in *VoiceLinkInput) { in.Secret = secret(MaxVoiceSecret) }, "", ""},
		"SecretTooLong":        {func(in *VoiceLinkInput) { in.Secret = secret(MaxVoiceSecret + 1) }, "secret", secretSize},
		"SecretWithSpace":      {func(in *VoiceLinkInput) { in.Secret = Some("my own secret 0123456") }, "secret", "must be printable ASCII without spaces: it travels in an HTTP header"},
		"SecretNotASCII":       {func(in *VoiceLinkInput) { in.Secret = Some("my-own-sécret-0123456") }, "secret", "must be printable ASCII without spaces: it travels in an HTTP header"},
		"SecretDelete":         {func(in *VoiceLinkInput) { in.Secret = Some("my-own-secret-0123\x7f") }, "secret", "must be printable ASCII without spaces: it travels in an HTTP header"},
		"EmptySecretGenerated": {func(in *VoiceLinkInput) { in.Secret = Some("") }, "", ""},
		"NullSecretGenerated":  {func(in *VoiceLinkInput) { in.Secret = Opt[string]{Set: true, Null: true} }, "", ""},
		"ReadProblemFirst": {func(in *VoiceLinkInput) {
			in.Problems = FieldErrors{"assistantId": "must be a string"}
			in.AssistantID = Opt[string]{}
		}, "assistantId", "must be a string"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			in := ok()
			c.edit(&in)
			_, errs := in.Check(Tenant{})
			if c.field == "" {
				if len(errs) != 0 {
					t.Fatalf("problems %v, want none", errs)
				}
				return
			}
			if errs[c.field] != c.problem {
				t.Fatalf("%s: %q, want %q (all: %v)", c.field, errs[c.field], c.problem, errs)
			}
		})
	}
	t.Run("Normalised", func(t *testing.T) {
		t.Parallel()
		in := VoiceLinkInput{AssistantID: Some(" asst-1 "), PhoneNumber: Some(" "), Language: Some("en-GB"),
			Secret: Some(" padded-secret-0123 ")}
		cfg, errs := in.Check(Tenant{VoiceConfig: VoiceConfig{VoiceID: "Kylie", Language: "fr-FR"}})
		if errs["secret"] == "" {
			t.Errorf("a secret with spaces taken: %v", errs)
		}
		if in.AssistantID.Value != "asst-1" || !in.PhoneNumber.Null || cfg.Language != "en-GB" || cfg.VoiceID != "Kylie" {
			t.Errorf("input %+v, config %+v", in, cfg)
		}
	})
	t.Run("GivenSecret", func(t *testing.T) {
		t.Parallel()
		for _, c := range []struct {
			o    Opt[string]
			want string
			ok   bool
		}{{Opt[string]{}, "", false}, {Opt[string]{Set: true, Null: true}, "", false}, {Some(""), "", false}, {Some("given"), "given", true}} {
			in := VoiceLinkInput{Secret: c.o}
			if got, ok := in.GivenSecret(); got != c.want || ok != c.ok {
				t.Errorf("%+v: %q %v, want %q %v", c.o, got, ok, c.want, c.ok)
			}
		}
	})
}
