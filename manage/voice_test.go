package manage_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/manage"
)

// fakeOrchestrator records what a managed setup asks and fails as told.
type fakeOrchestrator struct {
	created, bought, deleted []string
	failCreate, failBuy      error
	failDelete               error
}

func (o *fakeOrchestrator) CreateAssistant(_ context.Context, t parley.Tenant, _ parley.VoiceConfig, secret string) (string, error) {
	if o.failCreate != nil {
		return "", o.failCreate
	}
	o.created = append(o.created, secret)
	return "asst-" + t.Slug, nil
}

func (o *fakeOrchestrator) BuyNumber(_ context.Context, _ parley.Tenant, assistantID, areaCode string) (string, error) {
	if o.failBuy != nil {
		return "", o.failBuy
	}
	o.bought = append(o.bought, assistantID+"@"+areaCode)
	return "+14155550123", nil
}

func (o *fakeOrchestrator) DeleteAssistant(_ context.Context, assistantID string) error {
	o.deleted = append(o.deleted, assistantID)
	return o.failDelete
}

// The setups refuse, before any call to the orchestrator or any write, a
// plan without voice, then the rules' problems; a failed call to the
// orchestrator saves nothing and says so, an assistant created before a
// failed purchase is deleted again. (The stored setups, their sealed
// secret and their answer are web's TestVoiceManagedSetup and
// TestVoiceLink, on a real database.)
func TestVoiceSetupRefusals(t *testing.T) {
	t.Parallel()
	s := &manage.Service{} // no store: nothing here may write
	starter := parley.Tenant{ID: "t1", Slug: "acme", Plan: "starter"}
	scale := parley.Tenant{ID: "t1", Slug: "acme", Plan: "scale", Name: "Acme"}
	ctx := context.Background()

	t.Run("PlanWithoutVoice", func(t *testing.T) {
		t.Parallel()
		orch := &fakeOrchestrator{}
		_, _, err := s.SetUpVoice(ctx, starter, parley.VoiceSetupInput{NumberAreaCode: parley.Some("41")}, orch)
		if pe, ok := err.(*parley.Error); !ok || pe.Code != "PLAN_REQUIRED" {
			t.Fatalf("managed: %#v, want the voice plan's refusal", err)
		}
		_, _, err = s.LinkVoice(ctx, starter, parley.VoiceLinkInput{})
		if pe, ok := err.(*parley.Error); !ok || pe.Code != "PLAN_REQUIRED" {
			t.Fatalf("link: %#v, want the voice plan's refusal", err)
		}
		if len(orch.created) != 0 {
			t.Errorf("the orchestrator was called: %v", orch.created)
		}
	})
	for name, c := range map[string]struct {
		in           parley.VoiceSetupInput
		field, wants string
	}{
		"AreaCode":    {parley.VoiceSetupInput{BuyNumber: parley.Some(true), NumberAreaCode: parley.Some("4155")}, "numberAreaCode", "3-digit"},
		"ReadProblem": {parley.VoiceSetupInput{Problems: parley.FieldErrors{"buyNumber": "must be a boolean"}}, "buyNumber", "must be a boolean"},
		"Language":    {parley.VoiceSetupInput{Language: parley.Some("english!")}, "language", "BCP-47"},
	} {
		t.Run("Managed"+name, func(t *testing.T) {
			t.Parallel()
			orch := &fakeOrchestrator{}
			_, _, err := s.SetUpVoice(ctx, scale, c.in, orch)
			pe, ok := err.(*parley.Error)
			if !ok || pe.Kind != parley.KindInvalid || !strings.Contains(pe.Details.(map[string]string)[c.field], c.wants) {
				t.Fatalf("error %#v, want %s: %s", err, c.field, c.wants)
			}
			if len(orch.created) != 0 {
				t.Errorf("the orchestrator was called before the rules: %v", orch.created)
			}
		})
	}
	t.Run("LinkRules", func(t *testing.T) {
		t.Parallel()
		_, _, err := s.LinkVoice(ctx, scale, parley.VoiceLinkInput{AssistantID: parley.Some("asst-1"), Secret: parley.Some("short")})
		pe, ok := err.(*parley.Error)
		if !ok || pe.Kind != parley.KindInvalid || pe.Details.(map[string]string)["secret"] != "must be 16 to 200 characters (omit it to have one generated)" {
			t.Fatalf("error %#v, want the secret's size", err)
		}
	})
	t.Run("CreateFails", func(t *testing.T) {
		t.Parallel()
		orch := &fakeOrchestrator{failCreate: errors.New("Vapi answered HTTP 400: model.url must be a URL address")}
		_, secret, err := s.SetUpVoice(ctx, scale, parley.VoiceSetupInput{BuyNumber: parley.Some(true)}, orch)
		pe, ok := err.(*parley.Error)
		if !ok || pe.Kind != parley.KindUpstream || pe.Code != "ORCHESTRATOR_ERROR" || secret != "" ||
			pe.Message != "Creating the assistant failed; nothing was saved. Vapi answered HTTP 400: model.url must be a URL address" {
			t.Fatalf("error %#v, secret %q", err, secret)
		}
		if len(orch.bought) != 0 || len(orch.deleted) != 0 {
			t.Errorf("after a refused assistant: bought %v, deleted %v", orch.bought, orch.deleted)
		}
	})
	for name, c := range map[string]struct {
		failDelete error
		removed    bool
		says       string
	}{
		"BuyFailsDeleted":    {nil, true, "Nothing was saved and the assistant was deleted again."},
		"BuyFailsNotDeleted": {errors.New("no answer"), false, "Nothing was saved and the assistant asst-acme could not be deleted and remains in the service's Vapi account."},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			orch := &fakeOrchestrator{failBuy: errors.New("No numbers available for area code 999"), failDelete: c.failDelete}
			ended, cancel := context.WithCancel(ctx)
			cancel() // the request has ended: the clean-up is asked for even so
			_, _, err := s.SetUpVoice(ended, scale, parley.VoiceSetupInput{BuyNumber: parley.Some(true), NumberAreaCode: parley.Some("999")}, orch)
			pe, ok := err.(*parley.Error)
			if !ok || pe.Kind != parley.KindUpstream || pe.Code != "ORCHESTRATOR_ERROR" {
				t.Fatalf("error %#v", err)
			}
			if want := "The assistant was created but buying the number failed: No numbers available for area code 999. " + c.says; pe.Message != want {
				t.Errorf("message %q, want %q", pe.Message, want)
			}
			d, _ := pe.Details.(map[string]any)
			if d["assistantId"] != "asst-acme" || d["assistantDeleted"] != c.removed {
				t.Errorf("details %v", pe.Details)
			}
			if len(orch.deleted) != 1 || orch.deleted[0] != "asst-acme" {
				t.Errorf("deleted %v", orch.deleted)
			}
			if len(orch.created) != 1 || !strings.HasPrefix(orch.created[0], "vs_") || len(orch.created[0]) != 46 {
				t.Errorf("secret sent %v, want vs_ and 43 characters of base64", orch.created)
			}
		})
	}
}
