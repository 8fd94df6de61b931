package handlers

// The operator's Vapi account as the managed voice setup's orchestrator,
// and the relay of a call's recording: the REST API's and the dashboard's.

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

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound"
	"github.com/parley/parley/agent/outbound/vapi"
	"github.com/parley/parley/manage"
)

// vapiSetup is the operator's Vapi account as a managed setup's
// orchestrator (manage.VoiceOrchestrator): the assistant it creates is the
// one assistant-request answers (vapiAssistant).
type vapiSetup struct{ h *Base }

// vapiAssistant is the assistant of t's calls (vapi.NewAssistant), with
// this server's addresses for the tenant.
func (h *Base) vapiAssistant(t parley.Tenant, cfg parley.VoiceConfig, secret string) vapi.Assistant {
	llmURL, serverURL := VoiceURLs(h.BaseURL, t.Slug)
	return vapi.NewAssistant(t, cfg, secret, llmURL, serverURL)
}

// CreateAssistant creates t's assistant at Vapi.
func (v vapiSetup) CreateAssistant(ctx context.Context, t parley.Tenant, cfg parley.VoiceConfig, secret string) (string, error) {
	return v.h.Vapi.CreateAssistant(ctx, v.h.vapiAssistant(t, cfg, secret))
}

// BuyNumber buys a number Vapi provides, attached to the assistant.
func (v vapiSetup) BuyNumber(ctx context.Context, t parley.Tenant, assistantID, areaCode string) (string, error) {
	return v.h.Vapi.BuyNumber(ctx, vapi.PhoneNumber{Provider: "vapi", AssistantID: assistantID, Name: parley.Clip(t.Name, 40), NumberDesiredAreaCode: areaCode})
}

// DeleteAssistant deletes an assistant at Vapi. The request may have
// ended: the clean-up gets its own time.
func (v vapiSetup) DeleteAssistant(ctx context.Context, assistantID string) error {
	cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), vapi.Timeout)
	defer cancel()
	return v.h.Vapi.DeleteAssistant(cleanup, assistantID)
}

// ManagedSetupUnavailable is the 503 of a managed setup on a service whose
// operator configured no orchestrator account.
var ManagedSetupUnavailable = &parley.Error{Kind: parley.KindUnavailable, Code: "VOICE_SETUP_UNAVAILABLE",
	Message: "Managed voice setup is not available on this service: the operator has not configured a Vapi account. " +
		"Link your own assistant instead (PUT /tenants/{slug}/voice/setup)."}

// RelayRecording streams the recording of the tenant's call callID from
// where the orchestrator keeps it, through the SSRF-guarded client.
func (h *Base) RelayRecording(c echo.Context, tenantID, callID string) error {
	ctx := c.Request().Context()
	u, err := h.Manage.VoiceRecordingURL(ctx, tenantID, callID)
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
		h.Log(c).Warn("relaying a recording stopped", "err", err)
	}
	return nil
}

// Recordings are relayed, not stored: bounded in size and time.
const (
	maxRecording     = 200 << 20
	recordingTimeout = 2 * time.Minute
)

// VoiceOrchestrator is the operator's Vapi account as the managed voice
// setup's orchestrator.
func (h *Base) VoiceOrchestrator() manage.VoiceOrchestrator { return vapiSetup{h} }
