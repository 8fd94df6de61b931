package handlers

import (
	"crypto/rand"
	"encoding/base64"
	"regexp"
)

// A voice setup's own limits: the spec gives none; chosen here and
// documented in the OpenAPI document.
const (
	minVoiceSecret   = 16
	maxVoiceSecret   = 200
	voiceSecretBytes = 32
)

var areaCodePattern = regexp.MustCompile(`^[0-9]{3}$`)

// newVoiceSecret returns a random secret for the orchestrator to send.
func newVoiceSecret() string {
	b := make([]byte, voiceSecretBytes)
	_, _ = rand.Read(b)
	return "vs_" + base64.RawURLEncoding.EncodeToString(b)
}
