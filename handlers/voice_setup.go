package handlers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound"
	"github.com/parley/parley/db"
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

// VoiceURLs are the addresses an orchestrator is given for a tenant: the
// custom LLM's base URL (the orchestrator posts to {customLlmUrl}/chat/completions;
// {customLlmUrl}/chat answers too) and the server URL of its events.
func (h *Handler) VoiceURLs(slug string) (customLLM, server string) {
	base := h.BaseURL + "/voice/" + url.PathEscape(slug)
	return base, base + "/events"
}

// managedSetupBody is the body of POST /tenants/{slug}/voice/setup.
type managedSetupBody struct {
	Language       parley.Opt[string] `json:"language"`
	VoiceID        parley.Opt[string] `json:"voiceId"`
	FirstMessage   parley.Opt[string] `json:"firstMessage"`
	BuyNumber      parley.Opt[bool]   `json:"buyNumber"`
	NumberAreaCode parley.Opt[string] `json:"numberAreaCode"`
}

// linkSetupBody is the body of PUT /tenants/{slug}/voice/setup.
type linkSetupBody struct {
	AssistantID parley.Opt[string] `json:"assistantId"`
	PhoneNumber parley.Opt[string] `json:"phoneNumber"`
	Language    parley.Opt[string] `json:"language"`
	Secret      parley.Opt[string] `json:"secret"`
}

// mergeSetupConfig is the tenant's voiceConfig with what a setup body sets.
func mergeSetupConfig(cur parley.VoiceConfig, language, voiceID, firstMessage parley.Opt[string]) parley.VoiceConfig {
	cfg := cur
	cfg.EndCallPhrases = append([]string(nil), cur.EndCallPhrases...)
	for _, f := range []struct {
		o   parley.Opt[string]
		dst *string
	}{{language, &cfg.Language}, {voiceID, &cfg.VoiceID}, {firstMessage, &cfg.FirstMessage}} {
		if f.o.Set {
			*f.dst = f.o.Value // null clears
		}
	}
	return cfg
}

// checkManagedSetup validates a managed setup body against the tenant and
// returns the voice settings it leads to.
func checkManagedSetup(t parley.Tenant, b *managedSetupBody, errs parley.FieldErrors) parley.VoiceConfig {
	cfg := mergeSetupConfig(t.VoiceConfig, b.Language, b.VoiceID, b.FirstMessage)
	parley.CheckVoiceConfig(errs, "", &cfg)
	parley.NotNull(errs, "buyNumber", b.BuyNumber)
	if b.NumberAreaCode.Set && !b.NumberAreaCode.Null {
		b.NumberAreaCode.Value = strings.TrimSpace(b.NumberAreaCode.Value)
		if b.NumberAreaCode.Value != "" && !areaCodePattern.MatchString(b.NumberAreaCode.Value) {
			errs.Add("numberAreaCode", "must be a 3-digit area code such as 415")
		}
	}
	if b.NumberAreaCode.Value != "" && !b.BuyNumber.Value {
		errs.Add("numberAreaCode", "is only used when a number is bought (buyNumber true)")
	}
	if b.BuyNumber.Value && t.VoicePhoneNumber != nil {
		errs.Add("buyNumber", fmt.Sprintf("this tenant already has the number %s: managed setup links one number per tenant", *t.VoicePhoneNumber))
	}
	return cfg
}

// runManagedSetup creates the assistant at the orchestrator (and buys a
// number when asked), then stores the setup. Nothing is stored unless every
// call to the orchestrator succeeded; an assistant created before a failed
// number purchase is deleted again, and the error says whether that worked.
func (h *Handler) runManagedSetup(ctx context.Context, t parley.Tenant, cfg parley.VoiceConfig, buyNumber bool, areaCode string) (parley.Tenant, voiceSetupJSON, error) {
	secret := newVoiceSecret()
	a := h.newVapiAssistant(t, cfg, secret)
	assistantID, err := h.Vapi.createAssistant(ctx, a)
	if err != nil {
		return t, voiceSetupJSON{}, &parley.Error{Kind: parley.KindUpstream, Code: "ORCHESTRATOR_ERROR",
			Message: "Creating the assistant failed; nothing was saved. " + err.Error()}
	}
	var number *string
	if buyNumber {
		n, err := h.Vapi.buyNumber(ctx, vapiPhoneNumber{Provider: "vapi", AssistantID: assistantID, Name: parley.Clip(t.Name, 40), NumberDesiredAreaCode: areaCode})
		if err != nil {
			// The request may have ended; the clean-up gets its own time.
			cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), vapiTimeout)
			defer cancel()
			removed := h.Vapi.deleteAssistant(cleanup, assistantID) == nil
			what := "the assistant was deleted again"
			if !removed {
				what = fmt.Sprintf("the assistant %s could not be deleted and remains in the service's Vapi account", assistantID)
			}
			return t, voiceSetupJSON{}, &parley.Error{Kind: parley.KindUpstream, Code: "ORCHESTRATOR_ERROR",
				Message: fmt.Sprintf("The assistant was created but buying the number failed: %s. Nothing was saved and %s.", err.Error(), what),
				Details: map[string]any{"assistantId": assistantID, "assistantDeleted": removed}}
		}
		number = &n
	} else {
		number = t.VoicePhoneNumber
	}
	saved, err := h.DB.SaveVoiceSetup(ctx, t.ID, db.VoiceSetup{AssistantID: assistantID, PhoneNumber: number, Config: cfg,
		SealedSecret: h.Box.Seal([]byte(secret))})
	if err != nil {
		return t, voiceSetupJSON{}, err
	}
	return saved, voiceSetupJSON{AssistantID: assistantID, PhoneNumber: number, CustomLLMURL: a.Model.URL, ServerURL: a.Server.URL, Secret: secret}, nil
}

// checkLinkSetup validates a link body and returns the voice settings and
// the secret it leads to (given or generated).
func checkLinkSetup(t parley.Tenant, b *linkSetupBody, errs parley.FieldErrors) (parley.VoiceConfig, string) {
	if !b.AssistantID.Set || b.AssistantID.Null || strings.TrimSpace(b.AssistantID.Value) == "" {
		errs.Add("assistantId", "is required: the id of your assistant at the orchestrator")
	} else {
		parley.CheckAssistantID(errs, "assistantId", &b.AssistantID)
	}
	parley.NullIfEmpty(&b.PhoneNumber)
	parley.CheckPhoneNumber(errs, "phoneNumber", &b.PhoneNumber)
	cfg := mergeSetupConfig(t.VoiceConfig, b.Language, parley.Opt[string]{}, parley.Opt[string]{})
	parley.CheckVoiceConfig(errs, "", &cfg)
	secret := newVoiceSecret()
	if b.Secret.Set && !b.Secret.Null && b.Secret.Value != "" {
		secret = b.Secret.Value
		n := utf8.RuneCountInString(secret)
		switch {
		case n < minVoiceSecret || n > maxVoiceSecret:
			errs.Add("secret", fmt.Sprintf("must be %d to %d characters (omit it to have one generated)", minVoiceSecret, maxVoiceSecret))
		case strings.ContainsFunc(secret, func(r rune) bool { return r <= ' ' || r == 0x7f || r > '~' }):
			errs.Add("secret", "must be printable ASCII without spaces: it travels in an HTTP header")
		}
	}
	return cfg, secret
}

// linkAssistant stores a linked assistant with its secret.
func (h *Handler) linkAssistant(ctx context.Context, t parley.Tenant, b linkSetupBody, cfg parley.VoiceConfig, secret string) (parley.Tenant, voiceSetupJSON, error) {
	saved, err := h.DB.SaveVoiceSetup(ctx, t.ID, db.VoiceSetup{AssistantID: b.AssistantID.Value, PhoneNumber: b.PhoneNumber.Ptr(),
		Config: cfg, SealedSecret: h.Box.Seal([]byte(secret))})
	if err != nil {
		return t, voiceSetupJSON{}, err
	}
	llmURL, serverURL := h.VoiceURLs(t.Slug)
	return saved, voiceSetupJSON{AssistantID: b.AssistantID.Value, PhoneNumber: b.PhoneNumber.Ptr(),
		CustomLLMURL: llmURL, ServerURL: serverURL, Secret: secret}, nil
}

// managedSetupUnavailable is the 503 of a managed setup on a service whose
// operator configured no orchestrator account.
var managedSetupUnavailable = &parley.Error{Kind: parley.KindUnavailable, Code: "VOICE_SETUP_UNAVAILABLE",
	Message: "Managed voice setup is not available on this service: the operator has not configured a Vapi account. " +
		"Link your own assistant instead (PUT /tenants/{slug}/voice/setup)."}

// SetUpVoice answers POST /tenants/{slug}/voice/setup: the managed setup.
func (h *Handler) SetUpVoice(c echo.Context) error {
	t := tenantFrom(c)
	if !t.PlanInfo().Voice {
		return parley.VoicePlanRequired(t.Plan)
	}
	if !h.Vapi.Configured() {
		return managedSetupUnavailable
	}
	raw, err := decodeObject(c, maxJSONBody)
	if err != nil {
		return err
	}
	var b managedSetupBody
	errs := decodeFields(raw, &b)
	cfg := checkManagedSetup(t, &b, errs)
	if err := errs.Err(); err != nil {
		return err
	}
	_, out, err := h.runManagedSetup(c.Request().Context(), t, cfg, b.BuyNumber.Value, b.NumberAreaCode.Value)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store") // the secret
	return c.JSON(http.StatusOK, out)
}

// LinkVoice answers PUT /tenants/{slug}/voice/setup: the tenant's own assistant.
func (h *Handler) LinkVoice(c echo.Context) error {
	t := tenantFrom(c)
	if !t.PlanInfo().Voice {
		return parley.VoicePlanRequired(t.Plan)
	}
	raw, err := decodeObject(c, maxJSONBody)
	if err != nil {
		return err
	}
	var b linkSetupBody
	errs := decodeFields(raw, &b)
	cfg, secret := checkLinkSetup(t, &b, errs)
	if err := errs.Err(); err != nil {
		return err
	}
	_, out, err := h.linkAssistant(c.Request().Context(), t, b, cfg, secret)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store") // the secret
	return c.JSON(http.StatusOK, out)
}

// Recordings are relayed, not stored: bounded in size and time.
const (
	maxRecording     = 200 << 20
	recordingTimeout = 2 * time.Minute
)

// ShowVoiceRecording answers GET /voice/{slug}/recordings/{callId} for an
// API token of the tenant with conversations:read.
func (h *Handler) ShowVoiceRecording(c echo.Context) error {
	return h.relayRecording(c, tenantFrom(c).ID, c.Param("callId"))
}

// relayRecording streams the recording of the tenant's call callID from
// where the orchestrator keeps it, through the SSRF-guarded client.
func (h *Handler) relayRecording(c echo.Context, tenantID, callID string) error {
	ctx := c.Request().Context()
	u, err := h.DB.VoiceRecordingURL(ctx, tenantID, callID)
	if err != nil {
		return err
	}
	if u == "" {
		return parley.Errorf(parley.KindNotFound, "This call has no recording")
	}
	parsed, err := url.Parse(u)
	if err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
		return &parley.Error{Kind: parley.KindUpstream, Message: "The recording's address is not an http(s) URL"}
	}
	if h.plainHTTPRefused(ctx, parsed, u) {
		return &parley.Error{Kind: parley.KindUpstream, Message: "The recording's address is plain http; only https recordings are fetched"}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return &parley.Error{Kind: parley.KindUpstream, Message: "The recording's address is not usable"}
	}
	resp, err := h.Outbound.Client(recordingTimeout).Do(req)
	if err != nil {
		return &parley.Error{Kind: parley.KindUpstream, Message: "The recording could not be fetched: " + outbound.Classify(err, parsed.Hostname()).Error()}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return &parley.Error{Kind: parley.KindUpstream, Message: fmt.Sprintf("The recording could not be fetched: its host answered HTTP %d", resp.StatusCode)}
	}
	if resp.ContentLength > maxRecording {
		return &parley.Error{Kind: parley.KindUpstream, Message: fmt.Sprintf("The recording is larger than the %d MiB the service relays", maxRecording>>20)}
	}
	ct := "application/octet-stream"
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err == nil && strings.HasPrefix(mt, "audio/") {
		ct = resp.Header.Get("Content-Type")
	}
	hdr := c.Response().Header()
	hdr.Set(echo.HeaderContentType, ct)
	hdr.Set("Cache-Control", "private, no-store")
	hdr.Set("X-Content-Type-Options", "nosniff")
	if resp.ContentLength >= 0 {
		hdr.Set(echo.HeaderContentLength, strconv.FormatInt(resp.ContentLength, 10))
	}
	c.Response().WriteHeader(http.StatusOK)
	if _, err := io.Copy(c.Response(), io.LimitReader(resp.Body, maxRecording)); err != nil && !errors.Is(err, context.Canceled) {
		h.log(c).Warn("relaying a recording stopped", "err", err)
	}
	return nil
}
