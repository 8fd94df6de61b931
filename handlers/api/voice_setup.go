package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/jsonbody"
)

// voiceSetupJSON is the answer of both voice setups. Secret is the one the
// orchestrator must send (Authorization: Bearer or X-Vapi-Secret); it is
// shown here once and stored sealed.
type voiceSetupJSON struct {
	AssistantID  string  `json:"assistantId"`
	PhoneNumber  *string `json:"phoneNumber"`
	CustomLLMURL string  `json:"customLlmUrl"`
	ServerURL    string  `json:"serverUrl"`
	Secret       string  `json:"secret"`
}

// voiceSetupAnswer is the answer of a setup stored: saved is the tenant as
// stored, secret the one to show once.
func (h *core) voiceSetupAnswer(saved parley.Tenant, secret string) voiceSetupJSON {
	llmURL, serverURL := handlers.VoiceURLs(h.BaseURL, saved.Slug)
	return voiceSetupJSON{AssistantID: handlers.Deref(saved.VoiceAssistantID), PhoneNumber: saved.VoicePhoneNumber,
		CustomLLMURL: llmURL, ServerURL: serverURL, Secret: secret}
}

// SetUpVoice answers POST /tenants/{slug}/voice/setup: the managed setup.
func (h *Settings) SetUpVoice(c echo.Context) error {
	t := handlers.TenantFrom(c)
	if !t.PlanInfo().Voice {
		return parley.VoicePlanRequired(t.Plan)
	}
	if !h.Vapi.Configured() {
		return handlers.ManagedSetupUnavailable
	}
	raw, err := jsonbody.DecodeObject(c, jsonbody.MaxJSONBody)
	if err != nil {
		return err
	}
	var in parley.VoiceSetupInput
	in.Problems = jsonbody.DecodeFields(raw, &in)
	saved, secret, err := h.Manage.SetUpVoice(c.Request().Context(), t, in, h.VoiceOrchestrator())
	if err != nil {
		return err
	}
	out := h.voiceSetupAnswer(saved, secret)
	c.Response().Header().Set("Cache-Control", "no-store") // the secret
	return c.JSON(http.StatusOK, out)
}

// LinkVoice answers PUT /tenants/{slug}/voice/setup: the tenant's own
// assistant. The voice settings are the tenant's: an If-Match holds the
// tenant's ETag (GET /tenants/{slug}), and the answer carries its new one.
func (h *Settings) LinkVoice(c echo.Context) error {
	t := handlers.TenantFrom(c)
	if !t.PlanInfo().Voice {
		return parley.VoicePlanRequired(t.Plan)
	}
	ctx := handlers.Conditional(c)
	if err := db.CheckIfMatch(ctx, db.TenantETag(t)); err != nil {
		return err
	}
	raw, err := jsonbody.DecodeObject(c, jsonbody.MaxJSONBody)
	if err != nil {
		return err
	}
	var in parley.VoiceLinkInput
	in.Problems = jsonbody.DecodeFields(raw, &in)
	saved, secret, err := h.Manage.LinkVoice(ctx, t, in)
	if err != nil {
		return err
	}
	out := h.voiceSetupAnswer(saved, secret)
	c.Response().Header().Set("Cache-Control", "no-store") // the secret
	return handlers.JSONWithETag(c, http.StatusOK, db.TenantETag(saved), out)
}

// ShowVoiceRecording answers GET /voice/{slug}/recordings/{callId} for an
// API token of the tenant with conversations:read.
func (h *Settings) ShowVoiceRecording(c echo.Context) error {
	return h.RelayRecording(c, handlers.TenantFrom(c).ID, c.Param("callId"))
}
