package parley

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"unicode/utf8"
)

// A visitor's limits and their memory's, chosen here and documented in the
// OpenAPI document.
const (
	MaxVisitorEmail      = 254
	MaxVisitorName       = 255
	MaxVisitorPhone      = 32
	MaxVisitorProvider   = 50
	MaxVisitorExternalID = 255
	MaxVisitorMetadata   = 16 << 10
	MaxMemoryValue       = 2000
)

var (
	// VisitorEmailPattern is a visitor's email shape, which lead forms' email
	// fields share.
	VisitorEmailPattern = regexp.MustCompile(`^[^\s@]+@[^\s@]+\.[^\s@]+$`)
	// VisitorPhonePattern is a visitor's phone shape, which lead forms' phone
	// fields share.
	VisitorPhonePattern = regexp.MustCompile(`^\+?[0-9 ().-]{3,31}$`)
	memoryKeyPattern    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)
)

// VisitorInput is a write of a visitor as a caller gives it, through any
// surface (its JSON is the REST API's): the fields set change, an empty
// text clears. Problems holds what the surface could not read of it,
// reported first.
type VisitorInput struct {
	Email        Opt[string]          `json:"email"`
	DisplayName  Opt[string]          `json:"displayName"`
	Phone        Opt[string]          `json:"phone"`
	AuthProvider Opt[string]          `json:"authProvider"`
	ExternalID   Opt[string]          `json:"externalId"`
	Metadata     Opt[json.RawMessage] `json:"metadata"`
	Problems     FieldErrors          `json:"-"`
}

// Check normalises in (texts trimmed, empty ones clears, the email in
// lower case) and returns its problems, Problems first; creating, an
// email or an externalId is required.
func (in *VisitorInput) Check(creating bool) FieldErrors {
	errs := in.Problems.Copy()
	for _, o := range []*Opt[string]{&in.Email, &in.DisplayName, &in.Phone, &in.AuthProvider, &in.ExternalID} {
		if o.Set && !o.Null {
			o.Value = strings.TrimSpace(o.Value)
		}
		NullIfEmpty(o)
	}
	if creating && in.Email.Value == "" && in.ExternalID.Value == "" && errs["email"] == "" && errs["externalId"] == "" {
		errs.Add("email", "email or externalId is required")
	}
	if in.Email.Set && !in.Email.Null {
		in.Email.Value = strings.ToLower(in.Email.Value)
		if utf8.RuneCountInString(in.Email.Value) > MaxVisitorEmail || !VisitorEmailPattern.MatchString(in.Email.Value) {
			errs.Add("email", "must be an email address of at most 254 characters")
		}
	}
	CheckLen(errs, "displayName", in.DisplayName, MaxVisitorName)
	if in.Phone.Set && !in.Phone.Null && (utf8.RuneCountInString(in.Phone.Value) > MaxVisitorPhone || !VisitorPhonePattern.MatchString(in.Phone.Value)) {
		errs.Add("phone", "must be a phone number such as +33 1 23 45 67 89, at most 32 characters")
	}
	CheckLen(errs, "authProvider", in.AuthProvider, MaxVisitorProvider)
	CheckLen(errs, "externalId", in.ExternalID, MaxVisitorExternalID)
	if in.Metadata.Set && !in.Metadata.Null {
		m := bytes.TrimSpace(in.Metadata.Value)
		switch {
		case len(m) == 0 || m[0] != '{':
			errs.Add("metadata", "must be a JSON object")
		case len(m) > MaxVisitorMetadata:
			errs.Add("metadata", "must be at most 16 KiB of JSON")
		}
	}
	return errs
}

// MemoryInput is a fact to remember of a visitor, upserted by its key.
// Its JSON is not the wire's (the REST API also takes a number or a
// boolean as the value), so each surface reads it; Problems holds what
// the surface could not read of it, reported first.
type MemoryInput struct {
	Key      string
	Value    string
	Problems FieldErrors
}

// Check returns the problems of in, Problems first.
func (in MemoryInput) Check() FieldErrors {
	errs := in.Problems.Copy()
	if !memoryKeyPattern.MatchString(in.Key) {
		errs.Add("key", "must be 1 to 64 letters, digits, underscores, dots or hyphens (snake_case recommended)")
	}
	if strings.ContainsRune(in.Value, 0) {
		errs.Add("value", NoNUL)
	}
	if strings.TrimSpace(in.Value) == "" && errs["value"] == "" {
		errs.Add("value", "must not be empty")
	}
	if utf8.RuneCountInString(in.Value) > MaxMemoryValue {
		errs.Add("value", TooLong(MaxMemoryValue))
	}
	return errs
}
