package vapi_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/vapi"
	"github.com/parley/parley/agent/outbound/vapi/vapitest"
)

// The client against the fake: an assistant created and a number bought
// with the operator's key; Vapi's refusals in plain words, naming what the
// operator must do; no answer at all said so.
func TestOperator(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := vapitest.Start(t)
	op := vapi.Operator{APIKey: vapitest.Key, BaseURL: fake.URL() + "/"}
	if !op.Configured() || (vapi.Operator{BaseURL: fake.URL()}).Configured() {
		t.Fatal("Configured: a key and a base URL are both needed")
	}
	ten := parley.Tenant{Slug: "bikes", Name: "Bikes of Lyon"}
	a := vapi.NewAssistant(ten, parley.VoiceConfig{Language: "fr-FR", VoiceID: "Elliot", FirstMessage: "Bonjour"}, "s3cret",
		"https://parley.test/voice/bikes/chat", "https://parley.test/voice/bikes/events")
	id, err := op.CreateAssistant(ctx, a)
	if err != nil || id == "" {
		t.Fatalf("CreateAssistant: %q, %v", id, err)
	}
	got := fake.Assistants()[0]
	model, _ := got["model"].(map[string]any)
	headers, _ := model["headers"].(map[string]any)
	transcriber, _ := got["transcriber"].(map[string]any)
	if model["url"] != "https://parley.test/voice/bikes/chat" || headers["X-Vapi-Secret"] != "s3cret" ||
		transcriber["language"] != "fr" || got["firstMessage"] != "Bonjour" {
		t.Errorf("assistant sent: %v", got)
	}
	number, err := op.BuyNumber(ctx, vapi.PhoneNumber{Provider: "vapi", AssistantID: id, NumberDesiredAreaCode: "415"})
	if err != nil || number != "+14155550123" {
		t.Fatalf("BuyNumber: %q, %v", number, err)
	}

	fake.FailNumber(true)
	_, err = op.BuyNumber(ctx, vapi.PhoneNumber{Provider: "vapi", AssistantID: id, NumberDesiredAreaCode: "999"})
	var ve *vapi.Error
	if !errors.As(err, &ve) || ve.Status != 400 || !strings.Contains(err.Error(), "No numbers available for area code 999") {
		t.Errorf("a refused purchase: %v", err)
	}
	if err := op.DeleteAssistant(ctx, id); err != nil || len(fake.Deleted()) != 1 {
		t.Errorf("DeleteAssistant: %v, deleted %v", err, fake.Deleted())
	}

	fake.SetKey("rotated")
	if _, err := op.CreateAssistant(ctx, a); err == nil || !strings.Contains(err.Error(), "PARLEY_VAPI_API_KEY") {
		t.Errorf("a refused key: %v", err)
	}
	fake.Close()
	if _, err := op.CreateAssistant(ctx, a); err == nil || !strings.Contains(err.Error(), "Vapi could not be reached") {
		t.Errorf("no answer: %v", err)
	}
}
