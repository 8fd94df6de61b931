package parley

import (
	"fmt"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The rules of a tenant's connections to its own servers: its MCP server
// (whose tools the agent is offered) and its embedding endpoint.

// PlanRequired is the refusal of a feature the tenant's plan lacks (402,
// code PLAN_REQUIRED), naming the plan it needs.
func PlanRequired(feature, plan, needed string) error {
	return &Error{Kind: KindNotActivated, Code: "PLAN_REQUIRED",
		Message: fmt.Sprintf("%s need the %s plan or above (current plan: %s)", feature, needed, plan),
		Details: map[string]string{"plan": plan, "requiredPlan": needed}}
}

// The MCP server's limits.
const (
	MaxMCPAPIKey    = 500
	DefaultMCPTools = 10
	MinMCPTools     = 1
	MaxMCPTools     = 20
)

// MCPSettingsInput is a save of the tenant's MCP server: the URL is
// required; an unset key keeps the stored one (null or "" removes it), an
// unset MaxTools the stored number. Problems holds what the surface could
// not read of it, reported first.
type MCPSettingsInput struct {
	URL      Opt[string]
	APIKey   Opt[string]
	MaxTools Opt[int]
	Problems FieldErrors
}

// Check returns the save's problems, Problems first; address, when not
// nil, says why Parley must not call a URL ("" when it may).
func (in *MCPSettingsInput) Check(address func(rawURL string) string) FieldErrors {
	errs := in.Problems.Copy()
	if !in.URL.Set || in.URL.Null || in.URL.Value == "" {
		errs.Add("mcpToolsUrl", "is required (use DELETE to remove the configuration)")
	} else {
		CheckHTTPURL(errs, "mcpToolsUrl", in.URL, true)
		checkAddress(errs, "mcpToolsUrl", in.URL.Value, address)
	}
	if in.MaxTools.Set && !in.MaxTools.Null && (in.MaxTools.Value < MinMCPTools || in.MaxTools.Value > MaxMCPTools) {
		errs.Add("mcpToolsMaxTools", fmt.Sprintf("must be between %d and %d", MinMCPTools, MaxMCPTools))
	}
	if in.APIKey.Set && !in.APIKey.Null && utf8.RuneCountInString(in.APIKey.Value) > MaxMCPAPIKey {
		errs.Add("mcpToolsApiKey", TooLong(MaxMCPAPIKey))
	}
	return errs
}

// The embedding endpoint's limits.
const (
	MaxEmbeddingsModel  = 200
	MaxEmbeddingsAPIKey = 500
	MaxEmbeddingsDims   = 8192
)

// EmbeddingsInput is a save of the tenant's own embedding endpoint (issue
// 34): URL and model are required; unset or null Dimensions is the
// model's own length; an unset key keeps the stored one (null or ""
// removes it). Problems holds what the surface could not read of it,
// reported first.
type EmbeddingsInput struct {
	URL        Opt[string]
	APIKey     Opt[string]
	Model      Opt[string]
	Dimensions Opt[int]
	Problems   FieldErrors
}

// Check trims URL and model and returns the save's problems, Problems
// first; keyStored says a key is stored, which an unset key keeps. A key
// is sent as a bearer token, so it goes over https only: an http URL is
// refused while a key is, or stays, set. address, when not nil, says why
// Parley must not call a URL ("" when it may).
func (in *EmbeddingsInput) Check(keyStored bool, address func(rawURL string) string) FieldErrors {
	errs := in.Problems.Copy()
	in.URL.Value, in.Model.Value = strings.TrimSpace(in.URL.Value), strings.TrimSpace(in.Model.Value)
	if !in.URL.Set || in.URL.Null || in.URL.Value == "" {
		errs.Add("embeddingsUrl", "is required (use DELETE to remove the endpoint)")
	} else {
		CheckHTTPURL(errs, "embeddingsUrl", in.URL, false)
		checkAddress(errs, "embeddingsUrl", in.URL.Value, address)
	}
	switch {
	case !in.Model.Set || in.Model.Null || in.Model.Value == "":
		errs.Add("embeddingsModel", "is required: the model's name at the endpoint, such as text-embedding-3-small")
	case utf8.RuneCountInString(in.Model.Value) > MaxEmbeddingsModel:
		errs.Add("embeddingsModel", TooLong(MaxEmbeddingsModel))
	case strings.IndexFunc(in.Model.Value, unicode.IsControl) >= 0:
		errs.Add("embeddingsModel", "must not contain control characters")
	}
	if in.Dimensions.Set && !in.Dimensions.Null && (in.Dimensions.Value < 1 || in.Dimensions.Value > MaxEmbeddingsDims) {
		errs.Add("embeddingsDimensions", fmt.Sprintf("must be between 1 and %d, or null for the model's own", MaxEmbeddingsDims))
	}
	hasKey := keyStored
	if in.APIKey.Set {
		switch {
		case in.APIKey.Null || in.APIKey.Value == "":
			hasKey = false
		case utf8.RuneCountInString(in.APIKey.Value) > MaxEmbeddingsAPIKey:
			errs.Add("embeddingsApiKey", TooLong(MaxEmbeddingsAPIKey))
		case strings.IndexFunc(in.APIKey.Value, unicode.IsControl) >= 0:
			errs.Add("embeddingsApiKey", "must not contain control characters")
		default:
			hasKey = true
		}
	}
	if _, bad := errs["embeddingsUrl"]; !bad && hasKey {
		if u, err := url.Parse(in.URL.Value); err == nil && u.Scheme != "https" {
			errs.Add("embeddingsUrl", "must use https while an API key is set: the key would travel in clear text")
		}
	}
	return errs
}

// checkAddress adds address's problem with rawURL to field, unless the
// field has one already.
func checkAddress(errs FieldErrors, field, rawURL string, address func(string) string) {
	if _, bad := errs[field]; bad || address == nil {
		return
	}
	if msg := address(rawURL); msg != "" {
		errs.Add(field, msg)
	}
}
