package manage

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
)

// The tenant's voice setup: the assistant at the orchestrator (Vapi) that
// answers its calls, created by Parley (the managed setup) or the tenant's
// own (the link), and the secret the orchestrator sends, generated or
// given, stored sealed and answered once. The voice settings' own changes
// are the tenant's (UpdateTenant).

// voiceSecretBytes is the randomness of a generated voice secret.
const voiceSecretBytes = 32

// VoiceOrchestrator is the operator's account at the voice orchestrator,
// where a managed setup creates the assistant and buys its number. The
// surface gives it: the orchestrator's client is handler code, which
// manage does not import. Its errors are said to the tenant as they are.
type VoiceOrchestrator interface {
	// CreateAssistant creates t's assistant, speaking as cfg and calling
	// Parley with secret, and returns its id.
	CreateAssistant(ctx context.Context, t parley.Tenant, cfg parley.VoiceConfig, secret string) (string, error)
	// BuyNumber buys a number attached to the assistant, in areaCode when
	// not "", and returns it (E.164).
	BuyNumber(ctx context.Context, t parley.Tenant, assistantID, areaCode string) (string, error)
	// DeleteAssistant deletes an assistant a setup created before it
	// failed; it runs even when ctx has ended (the request may have).
	DeleteAssistant(ctx context.Context, assistantID string) error
}

// SetUpVoice runs a managed setup for t, the tenant as stored: checks in,
// creates the assistant at orch (and buys a number when asked), then
// stores the setup with a new secret, sealed. Nothing is stored unless
// every call to the orchestrator succeeded; an assistant created before a
// failed number purchase is deleted again, and the error says whether that
// worked. It returns the tenant as stored and the secret, in plain text to
// be shown once.
func (s *Service) SetUpVoice(ctx context.Context, t parley.Tenant, in parley.VoiceSetupInput, orch VoiceOrchestrator) (parley.Tenant, string, error) {
	if !t.PlanInfo().Voice {
		return t, "", parley.VoicePlanRequired(t.Plan)
	}
	cfg, errs := in.Check(t)
	if err := errs.Err(); err != nil {
		return t, "", err
	}
	secret := newVoiceSecret()
	assistantID, err := orch.CreateAssistant(ctx, t, cfg, secret)
	if err != nil {
		return t, "", &parley.Error{Kind: parley.KindUpstream, Code: "ORCHESTRATOR_ERROR",
			Message: "Creating the assistant failed; nothing was saved. " + err.Error()}
	}
	number := t.VoicePhoneNumber
	if in.BuyNumber.Value {
		n, err := orch.BuyNumber(ctx, t, assistantID, in.NumberAreaCode.Value)
		if err != nil {
			removed := orch.DeleteAssistant(ctx, assistantID) == nil
			what := "the assistant was deleted again"
			if !removed {
				what = fmt.Sprintf("the assistant %s could not be deleted and remains in the service's Vapi account", assistantID)
			}
			return t, "", &parley.Error{Kind: parley.KindUpstream, Code: "ORCHESTRATOR_ERROR",
				Message: fmt.Sprintf("The assistant was created but buying the number failed: %s. Nothing was saved and %s.", err.Error(), what),
				Details: map[string]any{"assistantId": assistantID, "assistantDeleted": removed}}
		}
		number = &n
	}
	saved, err := s.DB.SaveVoiceSetup(ctx, t.ID, db.VoiceSetup{AssistantID: assistantID, PhoneNumber: number, Config: cfg,
		SealedSecret: s.Box.Seal([]byte(secret))})
	if err != nil {
		return t, "", err
	}
	return saved, secret, nil
}

// LinkVoice links t's own assistant (t as stored): checks in, then stores
// the link with the secret given, or a new one, sealed. It returns the
// tenant as stored and the secret, in plain text to be shown once.
func (s *Service) LinkVoice(ctx context.Context, t parley.Tenant, in parley.VoiceLinkInput) (parley.Tenant, string, error) {
	if !t.PlanInfo().Voice {
		return t, "", parley.VoicePlanRequired(t.Plan)
	}
	cfg, errs := in.Check(t)
	if err := errs.Err(); err != nil {
		return t, "", err
	}
	secret, given := in.GivenSecret()
	if !given {
		secret = newVoiceSecret()
	}
	saved, err := s.DB.SaveVoiceSetup(ctx, t.ID, db.VoiceSetup{AssistantID: in.AssistantID.Value, PhoneNumber: in.PhoneNumber.Ptr(),
		Config: cfg, SealedSecret: s.Box.Seal([]byte(secret))})
	if err != nil {
		return t, "", err
	}
	return saved, secret, nil
}

// RecentVoiceCalls reads the tenant's last limit calls, newest first.
func (s *Service) RecentVoiceCalls(ctx context.Context, tenantID string, limit int) ([]db.VoiceCallRow, error) {
	return s.DB.RecentVoiceCalls(ctx, tenantID, limit)
}

// VoiceRecordingURL reads where the orchestrator keeps the recording of
// the tenant's call callID: "" when it has none. Fetching it is the
// surface's (through the outbound guard).
func (s *Service) VoiceRecordingURL(ctx context.Context, tenantID, callID string) (string, error) {
	return s.DB.VoiceRecordingURL(ctx, tenantID, callID)
}

// newVoiceSecret returns a random secret for the orchestrator to send.
func newVoiceSecret() string {
	b := make([]byte, voiceSecretBytes)
	_, _ = rand.Read(b)
	return "vs_" + base64.RawURLEncoding.EncodeToString(b)
}
