package parley

// VoiceProviderVapi names the single supported voice orchestrator (the
// tenant's voiceProvider).
const VoiceProviderVapi = "vapi"

// VoiceConfig is a tenant's voiceConfig: how the orchestrator's assistant
// speaks. Stored as JSON on the tenant (tenants.voice_config); absent fields
// take the orchestrator's defaults.
type VoiceConfig struct {
	// VoiceID names the orchestrator's voice.
	VoiceID string `json:"voiceId,omitempty"`
	// Language is a BCP-47 tag such as en-US or fr-FR.
	Language string `json:"language,omitempty"`
	// FirstMessage is spoken when the call connects.
	FirstMessage string `json:"firstMessage,omitempty"`
	// EndCallPhrases end the call when the assistant says one.
	EndCallPhrases []string `json:"endCallPhrases,omitempty"`
	// MaxCallDuration is in seconds; 0 leaves the orchestrator's default.
	MaxCallDuration int `json:"maxCallDuration,omitempty"`
}
