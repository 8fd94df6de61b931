// Package voice is the voice channel's runtime: Parley is the custom LLM
// (POST /voice/{slug}/chat[/completions], chat.go) and the server URL
// (POST /voice/{slug}/events, events.go) of the tenant's voice
// orchestrator, Vapi. Both are called by the orchestrator, authenticated
// by the tenant's voice secret.
package voice

import (
	"crypto/sha256"
	"crypto/subtle"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/agent"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/handlers"
)

// Handler answers the tenant's voice orchestrator.
type Handler struct {
	*handlers.Runtime
	DB  *db.DB
	Box *auth.Box
	// Engine runs the calls' turns and tool calls.
	Engine *agent.Engine
}

// maxVoiceBody bounds a request of the orchestrator: a custom LLM request
// carries the whole call so far, an end-of-call report its transcript.
const maxVoiceBody = 2 << 20

// errVoiceSecret answers a request without the tenant's voice secret.
var errVoiceSecret = &parley.Error{Kind: parley.KindUnauthorized,
	Message: "Missing or wrong voice secret: send the tenant's voice secret as Authorization: Bearer <secret> or X-Vapi-Secret: <secret>"}

// errVoiceDisabled answers a tenant whose voice channel is off.
var errVoiceDisabled = &parley.Error{Kind: parley.KindForbidden, Code: "VOICE_DISABLED",
	Message: "Voice is not enabled for this tenant: turn it on in the tenant's voice settings (voiceEnabled)"}

// voiceTenant runs the gates of every /voice/{slug} request of the
// orchestrator, in order: the tenant exists (404), the request carries its
// voice secret (401: a tenant without one refuses every request), its plan
// has voice (402 PLAN_REQUIRED), voice is enabled (403 VOICE_DISABLED). The
// secret is checked before anything else is said about the tenant. The
// tenant's default segment (nil: none), which turns and tool runs need, is
// read in the same round trip.
func (h *Handler) voiceTenant(c echo.Context) (parley.Tenant, *parley.Segment, error) {
	t, seg, err := h.DB.TenantAndSegment(c.Request().Context(), c.Param("slug"), "")
	if err != nil {
		return t, nil, err
	}
	handlers.SetTenant(c, t)
	if !h.voiceSecretMatches(c, t.VoiceSecret) {
		return t, nil, errVoiceSecret
	}
	if !t.PlanInfo().Voice {
		return t, nil, parley.PlanRequired("Voice calls", t.Plan, "scale")
	}
	if !t.VoiceEnabled {
		return t, nil, errVoiceDisabled
	}
	return t, seg, nil
}

// errNoDefaultSegment answers a voice request that needs the tenant's
// default segment when it has none.
var errNoDefaultSegment = parley.Errorf(parley.KindNotFound, "Default segment not found")

// voiceSecretMatches compares the secret sent (X-Vapi-Secret, Vapi's inline
// server secret, else an Authorization bearer credential) with the
// tenant's, in constant time over their SHA-256.
func (h *Handler) voiceSecretMatches(c echo.Context, sealed []byte) bool {
	sent := sentVoiceSecret(c)
	if sent == "" || len(sealed) == 0 {
		return false
	}
	secret, err := h.Box.Open(sealed)
	if err != nil {
		h.Log(c).Error("opening the voice secret", "err", err)
		return false
	}
	a, b := sha256.Sum256([]byte(sent)), sha256.Sum256(secret)
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// sentVoiceSecret is the voice secret the request sent: X-Vapi-Secret, else
// an Authorization bearer credential; "" when neither.
func sentVoiceSecret(c echo.Context) string {
	hdr := c.Request().Header
	if sent := strings.TrimSpace(hdr.Get("X-Vapi-Secret")); sent != "" {
		return sent
	}
	scheme, token, ok := strings.Cut(strings.TrimSpace(hdr.Get("Authorization")), " ")
	if ok && strings.EqualFold(scheme, "Bearer") {
		return strings.TrimSpace(token)
	}
	return ""
}
