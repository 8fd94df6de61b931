package public

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound"
	"github.com/parley/parley/agent/outbound/llm"
	"github.com/parley/parley/handlers"
)

// callerLLMTimeout bounds a whole exchange with a caller's own model.
const callerLLMTimeout = 5 * time.Minute

// callerLLM returns the provider of a caller who brings their own model:
// X-LLM-Key (or X-API-Key, which on /chat is the caller's LLM key),
// X-LLM-Provider (openai, the default, or anthropic), X-LLM-Model (required
// with a key) and X-LLM-Base-Url (https, refused when it reaches a private
// address). Requests go through the SSRF-guarded client. It returns nil when
// no key is given. The key is used for this turn only: never logged, never
// stored.
func (h *Handler) callerLLM(ctx context.Context, hdr http.Header) (llm.Provider, error) {
	key := strings.TrimSpace(handlers.NonBlankOr(hdr.Get("X-LLM-Key"), hdr.Get("X-API-Key")))
	provider := strings.ToLower(strings.TrimSpace(hdr.Get("X-LLM-Provider")))
	model := strings.TrimSpace(hdr.Get("X-LLM-Model"))
	base := strings.TrimSpace(hdr.Get("X-LLM-Base-Url"))
	if key == "" {
		return nil, nil // the managed model answers; the other headers mean nothing alone
	}
	switch provider {
	case "", "openai":
		provider = "openai"
	case "anthropic":
	default:
		return nil, handlers.Invalid("Unknown X-LLM-Provider %q: use openai or anthropic", parley.Clip(provider, 40))
	}
	if model == "" {
		return nil, handlers.Invalid("X-LLM-Model is required with X-LLM-Key")
	}
	if len(model) > handlers.MaxAgentModel {
		return nil, handlers.Invalid("X-LLM-Model too long (max %d chars)", handlers.MaxAgentModel)
	}
	if h.Outbound == nil {
		return nil, errors.New("no outbound client for a caller's model")
	}
	if base != "" {
		u, err := url.Parse(base)
		if err != nil || u.Hostname() == "" || u.User != nil || (u.Scheme != "https" && u.Scheme != "http") {
			return nil, handlers.Invalid("X-LLM-Base-Url must be an absolute https URL")
		}
		if u.Scheme == "http" && !h.Outbound.Exempt(ctx, base) {
			return nil, handlers.Invalid("X-LLM-Base-Url must use https")
		}
		if err := h.Outbound.CheckURL(ctx, base); err != nil {
			var oe *outbound.Error
			if errors.As(err, &oe) && oe.Kind == outbound.Refused {
				return nil, handlers.Invalid("X-LLM-Base-Url %s", oe.Error())
			}
			return nil, handlers.Invalid("X-LLM-Base-Url cannot be reached: %s", err.Error())
		}
	}
	client := h.Outbound.Client(callerLLMTimeout)
	if provider == "anthropic" {
		return llm.NewAnthropic(llm.AnthropicConfig{BaseURL: base, APIKey: key, Model: model, HTTPClient: client}), nil
	}
	return llm.NewOpenAI(llm.OpenAIConfig{BaseURL: base, APIKey: key, Model: model, HTTPClient: client}), nil
}
