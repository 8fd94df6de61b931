package parley_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/parley/parley"
)

// A visitor's rules: limits at N and N+1, the shapes, an email or an
// externalId required on create, and the surface's problems first.
func TestVisitorRules(t *testing.T) {
	t.Parallel()
	email := func(n int) string { return strings.Repeat("a", n-len("@example.com")) + "@example.com" }
	metadata := func(n int) parley.Opt[json.RawMessage] {
		return parley.Some(json.RawMessage(`{"k":"` + strings.Repeat("m", n-len(`{"k":""}`)) + `"}`))
	}
	for name, c := range map[string]struct {
		in       parley.VisitorInput
		creating bool
		field    string
		want     string
	}{
		"EmailAtLimit":      {parley.VisitorInput{Email: parley.Some(email(parley.MaxVisitorEmail))}, true, "", ""},
		"EmailPast":         {parley.VisitorInput{Email: parley.Some(email(parley.MaxVisitorEmail + 1))}, true, "email", "must be an email address of at most 254 characters"},
		"EmailShape":        {parley.VisitorInput{Email: parley.Some("ada at example.com")}, false, "email", "must be an email address of at most 254 characters"},
		"NameAtLimit":       {parley.VisitorInput{DisplayName: parley.Some(strings.Repeat("é", parley.MaxVisitorName))}, false, "", ""},
		"NamePast":          {parley.VisitorInput{DisplayName: parley.Some(strings.Repeat("é", parley.MaxVisitorName+1))}, false, "displayName", "must be at most 255 characters"},
		"PhoneAtLimit":      {parley.VisitorInput{Phone: parley.Some("+" + strings.Repeat("1", parley.MaxVisitorPhone-1))}, false, "", ""},
		"PhonePast":         {parley.VisitorInput{Phone: parley.Some("+" + strings.Repeat("1", parley.MaxVisitorPhone))}, false, "phone", "must be a phone number such as +33 1 23 45 67 89, at most 32 characters"},
		"PhoneShape":        {parley.VisitorInput{Phone: parley.Some("call me")}, false, "phone", "must be a phone number"},
		"ProviderAtLimit":   {parley.VisitorInput{AuthProvider: parley.Some(strings.Repeat("p", parley.MaxVisitorProvider))}, false, "", ""},
		"ProviderPast":      {parley.VisitorInput{AuthProvider: parley.Some(strings.Repeat("p", parley.MaxVisitorProvider+1))}, false, "authProvider", "must be at most 50 characters"},
		"ExternalIDAtLimit": {parley.VisitorInput{ExternalID: parley.Some(strings.Repeat("x", parley.MaxVisitorExternalID))}, true, "", ""},
		"ExternalIDPast":    {parley.VisitorInput{ExternalID: parley.Some(strings.Repeat("x", parley.MaxVisitorExternalID+1))}, true, "externalId", "must be at most 255 characters"},
		"MetadataAtLimit":   {parley.VisitorInput{Metadata: metadata(parley.MaxVisitorMetadata)}, false, "", ""},
		"MetadataPast":      {parley.VisitorInput{Metadata: metadata(parley.MaxVisitorMetadata + 1)}, false, "metadata", "must be at most 16 KiB of JSON"},
		"MetadataArray":     {parley.VisitorInput{Metadata: parley.Some(json.RawMessage(`[1]`))}, false, "metadata", "must be a JSON object"},
		"CreateNeedsOne":    {parley.VisitorInput{DisplayName: parley.Some("Ada"), Email: parley.Some("  ")}, true, "email", "email or externalId is required"},
		"UpdateNeedsNone":   {parley.VisitorInput{DisplayName: parley.Some("Ada")}, false, "", ""},
		"ReadProblemFirst":  {parley.VisitorInput{Problems: parley.FieldErrors{"email": "must be a string"}}, true, "email", "must be a string"},
		"ReadProblemOther":  {parley.VisitorInput{Problems: parley.FieldErrors{"externalId": "must be a string"}}, true, "externalId", "must be a string"},
	} {
		errs := c.in.Check(c.creating)
		if c.field == "" {
			if len(errs) != 0 {
				t.Errorf("%s: %v", name, errs)
			}
			continue
		}
		if !strings.HasPrefix(errs[c.field], c.want) {
			t.Errorf("%s: %s is %q, want %q (all: %v)", name, c.field, errs[c.field], c.want, errs)
		}
		if name == "ReadProblemOther" && errs["email"] != "" {
			t.Errorf("%s: a problem read with externalId hides the one-of rule, got %v", name, errs)
		}
	}

	t.Run("Normalised", func(t *testing.T) {
		t.Parallel()
		in := parley.VisitorInput{Email: parley.Some("  Ada@Example.COM "), DisplayName: parley.Some(" "), Phone: parley.Some(" +33 1 23 ")}
		if errs := in.Check(true); len(errs) != 0 {
			t.Fatal(errs)
		}
		if in.Email.Value != "ada@example.com" || !in.DisplayName.Null || in.Phone.Value != "+33 1 23" {
			t.Errorf("got email %q, name %+v, phone %q", in.Email.Value, in.DisplayName, in.Phone.Value)
		}
	})
}

// A memory fact's rules: the key's shape and length, the value's length at
// N and N+1, and the surface's problems first.
func TestMemoryRules(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		in    parley.MemoryInput
		field string
		want  string
	}{
		"KeyAtLimit":     {parley.MemoryInput{Key: strings.Repeat("k", 64), Value: "v"}, "", ""},
		"KeyPast":        {parley.MemoryInput{Key: strings.Repeat("k", 65), Value: "v"}, "key", "must be 1 to 64 letters, digits, underscores, dots or hyphens (snake_case recommended)"},
		"KeyEmpty":       {parley.MemoryInput{Value: "v"}, "key", "must be 1 to 64"},
		"KeyLeadingDot":  {parley.MemoryInput{Key: ".plan", Value: "v"}, "key", "must be 1 to 64"},
		"ValueAtLimit":   {parley.MemoryInput{Key: "plan", Value: strings.Repeat("é", parley.MaxMemoryValue)}, "", ""},
		"ValuePast":      {parley.MemoryInput{Key: "plan", Value: strings.Repeat("é", parley.MaxMemoryValue+1)}, "value", "must be at most 2000 characters"},
		"ValueBlank":     {parley.MemoryInput{Key: "plan", Value: "  "}, "value", "must not be empty"},
		"ValueNUL":       {parley.MemoryInput{Key: "plan", Value: "a\x00b"}, "value", parley.NoNUL},
		"ReadKeyFirst":   {parley.MemoryInput{Value: "v", Problems: parley.FieldErrors{"key": "is required, a string"}}, "key", "is required, a string"},
		"ReadValueFirst": {parley.MemoryInput{Key: "plan", Problems: parley.FieldErrors{"value": "is required"}}, "value", "is required"},
	} {
		errs := c.in.Check()
		if c.field == "" {
			if len(errs) != 0 {
				t.Errorf("%s: %v", name, errs)
			}
			continue
		}
		if !strings.HasPrefix(errs[c.field], c.want) {
			t.Errorf("%s: %s is %q, want %q (all: %v)", name, c.field, errs[c.field], c.want, errs)
		}
	}
}
