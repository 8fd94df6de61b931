// Package vapi is Parley's client of Vapi's REST API, the voice
// orchestrator: the managed voice setup creates a tenant's assistant and
// buys its number with the operator's account, and the assistant-request
// event is answered with the same assistant. Its fake, for tests, is
// vapitest.
package vapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/parley/parley"
)

// Operator is the operator's account at the voice orchestrator, used by
// the managed voice setup (PARLEY_VAPI_API_KEY, PARLEY_VAPI_BASE_URL). An
// empty APIKey turns managed setup off: tenants link their own assistant.
// The base URL is the operator's, so calls to it are not behind the SSRF
// guard.
type Operator struct {
	APIKey  string
	BaseURL string
	// Client makes the calls; nil means one with a 20 s timeout.
	Client *http.Client
}

// Configured reports whether managed setup can run.
func (v Operator) Configured() bool { return v.APIKey != "" && v.BaseURL != "" }

// Timeout bounds each call to the orchestrator's REST API.
const Timeout = 20 * time.Second

// maxAnswer bounds what is read of an answer of the orchestrator.
const maxAnswer = 1 << 20

// Assistant is the body of Vapi's POST /assistant: the assistant talks
// through this tenant's custom LLM (Vapi posts to {model.url}/chat/completions)
// and sends its events to the server URL; both carry the tenant's secret in
// X-Vapi-Secret.
type Assistant struct {
	Name               string            `json:"name"`
	FirstMessage       string            `json:"firstMessage,omitempty"`
	Model              Model             `json:"model"`
	Voice              *Voice            `json:"voice,omitempty"`
	Transcriber        *Transcriber      `json:"transcriber,omitempty"`
	EndCallPhrases     []string          `json:"endCallPhrases,omitempty"`
	MaxDurationSeconds int               `json:"maxDurationSeconds,omitempty"`
	Server             Server            `json:"server"`
	Metadata           map[string]string `json:"metadata,omitempty"`
}

// NewAssistant is the assistant of a tenant's calls, as the managed setup
// creates it and as assistant-request answers it: its model is the tenant's
// custom LLM (llmURL) and its server URL the tenant's events endpoint
// (serverURL), both called with the tenant's voice secret (X-Vapi-Secret),
// and it speaks as cfg says.
func NewAssistant(t parley.Tenant, cfg parley.VoiceConfig, secret, llmURL, serverURL string) Assistant {
	a := Assistant{
		Name:               parley.Clip(t.Name, 40),
		FirstMessage:       cfg.FirstMessage,
		Model:              Model{Provider: "custom-llm", URL: llmURL, Model: "parley", Headers: map[string]string{"X-Vapi-Secret": secret}},
		EndCallPhrases:     cfg.EndCallPhrases,
		MaxDurationSeconds: cfg.MaxCallDuration,
		Server:             Server{URL: serverURL, Secret: secret},
		Metadata:           map[string]string{"parleyTenant": t.Slug},
	}
	if cfg.VoiceID != "" {
		a.Voice = &Voice{Provider: "vapi", VoiceID: cfg.VoiceID}
	}
	if cfg.Language != "" {
		// The transcriber takes the primary language (en, fr).
		primary, _, _ := strings.Cut(strings.ReplaceAll(cfg.Language, "_", "-"), "-")
		a.Transcriber = &Transcriber{Provider: "deepgram", Language: strings.ToLower(primary)}
	}
	return a
}

// Model is the assistant's language model: the tenant's custom LLM.
type Model struct {
	Provider string            `json:"provider"`
	URL      string            `json:"url"`
	Model    string            `json:"model"`
	Headers  map[string]string `json:"headers,omitempty"`
}

// Voice is the assistant's voice, one of Vapi's.
type Voice struct {
	Provider string `json:"provider"`
	VoiceID  string `json:"voiceId"`
}

// Transcriber hears the caller, in the tenant's primary language.
type Transcriber struct {
	Provider string `json:"provider"`
	Language string `json:"language"`
}

// Server is where Vapi sends the call's events, with the secret.
type Server struct {
	URL    string `json:"url"`
	Secret string `json:"secret"`
}

// PhoneNumber is the body of Vapi's POST /phone-number for a number
// Vapi provides, attached to the assistant.
type PhoneNumber struct {
	Provider              string `json:"provider"`
	AssistantID           string `json:"assistantId"`
	Name                  string `json:"name,omitempty"`
	NumberDesiredAreaCode string `json:"numberDesiredAreaCode,omitempty"`
}

// Error is a refusal or failure of the orchestrator, in plain words.
type Error struct {
	Status  int // 0: no answer
	Message string
}

func (e *Error) Error() string {
	switch {
	case e.Status == 0:
		return "Vapi could not be reached: " + e.Message
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden:
		return fmt.Sprintf("Vapi refused the service's API key (HTTP %d): %s; the operator must check PARLEY_VAPI_API_KEY", e.Status, e.Message)
	default:
		return fmt.Sprintf("Vapi answered HTTP %d: %s", e.Status, e.Message)
	}
}

// call sends a JSON request to the orchestrator's REST API with the
// operator's key and decodes a 2xx answer into out (when not nil).
func (v Operator) call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(v.BaseURL, "/")+path, body)
	if err != nil {
		return &Error{Message: err.Error()}
	}
	req.Header.Set("Authorization", "Bearer "+v.APIKey)
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	client := v.Client
	if client == nil {
		client = &http.Client{Timeout: Timeout}
	}
	resp, err := client.Do(req)
	if err != nil {
		msg := "no answer"
		var ne interface{ Timeout() bool }
		if errors.As(err, &ne) && ne.Timeout() {
			msg = fmt.Sprintf("no answer within %s", Timeout)
		}
		return &Error{Message: msg}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return &Error{Message: "the answer was cut off"}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &Error{Status: resp.StatusCode, Message: errorMessage(raw, resp.StatusCode)}
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return &Error{Status: resp.StatusCode, Message: "the answer is not the JSON expected"}
		}
	}
	return nil
}

// errorMessage reads Vapi's error body, {message: string or [string],
// error, statusCode}, into a short message.
func errorMessage(raw []byte, status int) string {
	var body struct {
		Message json.RawMessage `json:"message"`
		Error   string          `json:"error"`
	}
	msg := ""
	if json.Unmarshal(raw, &body) == nil {
		var one string
		var many []string
		switch {
		case json.Unmarshal(body.Message, &one) == nil:
			msg = one
		case json.Unmarshal(body.Message, &many) == nil:
			msg = strings.Join(many, "; ")
		}
		if msg == "" {
			msg = body.Error
		}
	}
	if msg = strings.TrimSpace(msg); msg == "" {
		msg = http.StatusText(status)
	}
	return parley.Clip(msg, 300)
}

// CreateAssistant creates the assistant and returns its id.
func (v Operator) CreateAssistant(ctx context.Context, a Assistant) (string, error) {
	var out struct {
		ID string `json:"id"`
	}
	if err := v.call(ctx, http.MethodPost, "/assistant", a, &out); err != nil {
		return "", err
	}
	if !parley.AssistantIDPattern.MatchString(out.ID) || len(out.ID) > parley.MaxVoiceAssistantID {
		return "", &Error{Status: http.StatusOK, Message: "the created assistant has no usable id"}
	}
	return out.ID, nil
}

// BuyNumber buys a number attached to the assistant and returns it (E.164).
func (v Operator) BuyNumber(ctx context.Context, p PhoneNumber) (string, error) {
	var out struct {
		ID     string `json:"id"`
		Number string `json:"number"`
	}
	if err := v.call(ctx, http.MethodPost, "/phone-number", p, &out); err != nil {
		return "", err
	}
	if !parley.PhonePattern.MatchString(out.Number) {
		return "", &Error{Status: http.StatusOK, Message: fmt.Sprintf("the number bought (id %q) has no E.164 phone number", out.ID)}
	}
	return out.Number, nil
}

// DeleteAssistant removes an assistant created by a setup that failed later.
func (v Operator) DeleteAssistant(ctx context.Context, id string) error {
	return v.call(ctx, http.MethodDelete, "/assistant/"+id, nil, nil)
}
