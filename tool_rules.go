package parley

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// A tool's limits chosen here and documented in the OpenAPI document.
const (
	MaxToolName          = 100
	MaxToolDescription   = 1000
	MaxToolWebhookSecret = 255
)

// ToolInput is a write of a tool as a caller gives it, through any surface
// (its JSON is the REST API's and the MCP tools'): the fields set change.
// SegmentID names a segment by id or slug; WebhookSecret is sealed before
// it is stored. Problems holds what the surface could not read of it,
// reported first.
type ToolInput struct {
	Name          Opt[string]          `json:"name"`
	Description   Opt[string]          `json:"description"`
	Type          Opt[string]          `json:"type"`
	Config        Opt[json.RawMessage] `json:"config"`
	SegmentID     Opt[string]          `json:"segmentId"`
	IsActive      Opt[bool]            `json:"isActive"`
	Position      Opt[float64]         `json:"position"`
	WebhookURL    Opt[string]          `json:"webhookUrl"`
	WebhookSecret Opt[string]          `json:"webhookSecret"`
	Problems      FieldErrors          `json:"-"`
}

// Check normalises in (texts trimmed, an empty webhook URL a clear, the
// config validated against the type and normalised whenever it or the
// type changes: Config then holds what to store) and returns its problems,
// Problems first. cur is the stored tool (nil when creating: name,
// description and type are required); webhook, when not nil, vets the
// webhook URL. The segment is left to resolve.
func (in *ToolInput) Check(cur *Tool, webhook func(rawURL string) string) FieldErrors {
	errs := in.Problems.Copy()
	creating := cur == nil
	NullIfEmpty(&in.WebhookURL)
	in.Name.Value, in.Description.Value = strings.TrimSpace(in.Name.Value), strings.TrimSpace(in.Description.Value)
	CheckText(errs, "name", in.Name, MaxToolName, creating)
	CheckText(errs, "description", in.Description, MaxToolDescription, creating)
	typ := ""
	if cur != nil {
		typ = cur.Type
	}
	if creating && !in.Type.Set {
		errs.Add("type", "is required; one of "+strings.Join(UserToolTypes, ", "))
	} else if in.Type.Set {
		switch {
		case in.Type.Null:
			errs.Add("type", "must not be null")
		case slices.Contains(SyntheticToolTypes, in.Type.Value):
			errs.Add("type", fmt.Sprintf("%s is injected automatically at chat time and cannot be created or changed; allowed types: %s",
				in.Type.Value, strings.Join(UserToolTypes, ", ")))
		case !slices.Contains(UserToolTypes, in.Type.Value):
			errs.Add("type", "must be one of "+strings.Join(UserToolTypes, ", "))
		default:
			typ = in.Type.Value
		}
	}
	config := in.Config
	in.Config = Opt[json.RawMessage]{}
	if typ != "" && errs["type"] == "" {
		// The config is validated whenever it or the type changes.
		cfg := config.Value
		if !config.Set && cur != nil {
			cfg = cur.Config
		}
		if config.Set || in.Type.Set || creating {
			norm, problems := ValidateToolConfig(typ, cfg)
			if len(problems) > 0 {
				errs.Add("config", strings.Join(problems, "; "))
			} else {
				in.Config = Some(norm)
			}
		}
	}
	NotNull(errs, "isActive", in.IsActive)
	if NotNull(errs, "position", in.Position) && (in.Position.Value < -1e9 || in.Position.Value > 1e9) {
		errs.Add("position", "must be between -1000000000 and 1000000000")
	}
	if in.WebhookURL.Set && !in.WebhookURL.Null {
		if typ != ToolEscalateToHuman {
			errs.Add("webhookUrl", "only ESCALATE_TO_HUMAN tools call a webhook")
		}
		CheckHTTPURL(errs, "webhookUrl", in.WebhookURL, false)
		checkAddress(errs, "webhookUrl", in.WebhookURL.Value, webhook)
	}
	if in.WebhookSecret.Set && !in.WebhookSecret.Null && in.WebhookSecret.Value != "" {
		switch {
		case utf8.RuneCountInString(in.WebhookSecret.Value) > MaxToolWebhookSecret:
			errs.Add("webhookSecret", TooLong(MaxToolWebhookSecret))
		case typ != ToolEscalateToHuman:
			errs.Add("webhookSecret", "only ESCALATE_TO_HUMAN tools sign a webhook")
		}
	}
	return errs
}
