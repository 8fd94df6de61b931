package parley_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/parley/parley"
)

// A tool write's rules: limits at N and N+1, the types a tenant may
// create, the config validated and normalised when it or the type
// changes, the webhook only on escalations and vetted last, and the
// surface's problems first.
func TestToolRules(t *testing.T) {
	t.Parallel()
	refused := func(rawURL string) string {
		if strings.HasPrefix(rawURL, "http:") {
			return "must use https"
		}
		return ""
	}
	create := func(edit func(*parley.ToolInput)) parley.ToolInput {
		in := parley.ToolInput{Name: parley.Some(" Lead form "), Description: parley.Some("Take the visitor's details"),
			Type: parley.Some(parley.ToolRememberFact)}
		edit(&in)
		return in
	}
	escalate := &parley.Tool{Type: parley.ToolEscalateToHuman, Config: json.RawMessage(`{}`)}
	for name, c := range map[string]struct {
		in    parley.ToolInput
		cur   *parley.Tool
		field string
		want  string
	}{
		"NameAtLimit":      {create(func(in *parley.ToolInput) { in.Name = parley.Some(strings.Repeat("n", parley.MaxToolName)) }), nil, "", ""},
		"NamePast":         {create(func(in *parley.ToolInput) { in.Name = parley.Some(strings.Repeat("n", parley.MaxToolName+1)) }), nil, "name", "at most 100"},
		"NoType":           {create(func(in *parley.ToolInput) { in.Type = parley.Opt[string]{} }), nil, "type", "is required"},
		"SyntheticType":    {create(func(in *parley.ToolInput) { in.Type = parley.Some("EXPLORE_CORPUS") }), nil, "type", "injected automatically"},
		"UnknownType":      {create(func(in *parley.ToolInput) { in.Type = parley.Some("TELEPORT") }), nil, "type", "must be one of"},
		"BadConfig":        {create(func(in *parley.ToolInput) { in.Config = parley.Some(json.RawMessage(`{"nope":1}`)) }), nil, "config", ""},
		"PositionPast":     {create(func(in *parley.ToolInput) { in.Position = parley.Some(1e9 + 1) }), nil, "position", "between"},
		"WebhookNotEsc":    {create(func(in *parley.ToolInput) { in.WebhookURL = parley.Some("https://hooks.example.com") }), nil, "webhookUrl", "only ESCALATE_TO_HUMAN"},
		"WebhookHTTP":      {parley.ToolInput{WebhookURL: parley.Some("http://hooks.example.com")}, escalate, "webhookUrl", "must use https"},
		"WebhookOK":        {parley.ToolInput{WebhookURL: parley.Some("https://hooks.example.com")}, escalate, "", ""},
		"SecretAtLimit":    {parley.ToolInput{WebhookSecret: parley.Some(strings.Repeat("s", parley.MaxToolWebhookSecret))}, escalate, "", ""},
		"SecretPast":       {parley.ToolInput{WebhookSecret: parley.Some(strings.Repeat("s", parley.MaxToolWebhookSecret+1))}, escalate, "webhookSecret", "at most 255"},
		"SecretNotEsc":     {create(func(in *parley.ToolInput) { in.WebhookSecret = parley.Some("s") }), nil, "webhookSecret", "only ESCALATE_TO_HUMAN"},
		"ReadProblemFirst": {create(func(in *parley.ToolInput) { in.Problems = parley.FieldErrors{"position": "must be a number"} }), nil, "position", "must be a number"},
	} {
		errs := c.in.Check(c.cur, refused)
		if c.field == "" {
			if len(errs) != 0 {
				t.Errorf("%s: %v", name, errs)
			}
			continue
		}
		if _, ok := errs[c.field]; !ok || !strings.Contains(errs[c.field], c.want) {
			t.Errorf("%s: %s is %q, want %q (all: %v)", name, c.field, errs[c.field], c.want, errs)
		}
	}
	in := create(func(*parley.ToolInput) {})
	if errs := in.Check(nil, nil); len(errs) != 0 || in.Name.Value != "Lead form" || !in.Config.Set || len(in.Config.Value) == 0 {
		t.Errorf("a new tool's config is not normalised: %+v %v", in, errs)
	}
	// An update that changes neither type nor config leaves the config alone.
	upd := parley.ToolInput{Name: parley.Some("Handover")}
	if errs := upd.Check(escalate, nil); len(errs) != 0 || upd.Config.Set {
		t.Errorf("a rename rewrites the config: %+v %v", upd, errs)
	}
}
