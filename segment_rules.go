package parley

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// A segment's limits; those the spec does not give are chosen here and
// documented in the OpenAPI document.
const (
	MaxSegmentSlug      = 100
	MaxSegmentName      = 255
	MaxSystemPrompt     = 20000
	MaxWelcomeMessage   = 1000
	MaxStarters         = 4
	MaxStarterText      = 50
	MaxStarterEmoji     = 16
	MaxFormIntent       = 100
	MaxFormConfirmation = 500
)

var segmentSlugPattern = regexp.MustCompile(`^[a-z0-9-]{1,100}$`)

// SegmentInput is a write of a segment as a caller gives it, through any
// surface (its JSON is the REST API's and the MCP tools'): the fields set
// change. AskInChat, set by the dashboard only, keeps the segment's lead
// tool in step with its form. Problems holds what the surface could not
// read of it, reported first.
type SegmentInput struct {
	Slug                 Opt[string]      `json:"slug"`
	Name                 Opt[string]      `json:"name"`
	SystemPrompt         Opt[string]      `json:"systemPrompt"`
	WelcomeMessage       Opt[string]      `json:"welcomeMessage"`
	ConversationStarters Opt[[]Starter]   `json:"conversationStarters"`
	FormConfig           Opt[*FormConfig] `json:"formConfig"`
	IsDefault            Opt[bool]        `json:"isDefault"`
	IsActive             Opt[bool]        `json:"isActive"`
	AskInChat            Opt[bool]        `json:"-"`
	Problems             FieldErrors      `json:"-"`
}

// Check normalises in (name and starters trimmed, an empty welcome message
// a clear, a form's missing fields an empty list) and returns its
// problems, Problems first; creating, name and systemPrompt are required
// and an empty slug is made from the name.
func (in *SegmentInput) Check(creating bool) FieldErrors {
	errs := in.Problems.Copy()
	NullIfEmpty(&in.WelcomeMessage)
	in.Name.Value = strings.TrimSpace(in.Name.Value)
	CheckText(errs, "name", in.Name, MaxSegmentName, creating)
	CheckText(errs, "systemPrompt", in.SystemPrompt, MaxSystemPrompt, creating)
	if in.Slug.Set && !in.Slug.Null && !(creating && in.Slug.Value == "") {
		if !segmentSlugPattern.MatchString(in.Slug.Value) {
			errs.Add("slug", "must be 1 to 100 lowercase letters, digits or hyphens")
		}
	} else if in.Slug.Set && in.Slug.Null && !creating {
		errs.Add("slug", "must not be null")
	}
	CheckLen(errs, "welcomeMessage", in.WelcomeMessage, MaxWelcomeMessage)
	if in.ConversationStarters.Set && !in.ConversationStarters.Null {
		st := in.ConversationStarters.Value
		if len(st) > MaxStarters {
			errs.Add("conversationStarters", fmt.Sprintf("at most %d starters", MaxStarters))
		}
		for i := range st {
			st[i].Text = strings.TrimSpace(st[i].Text)
			switch {
			case st[i].Text == "":
				errs.Add("conversationStarters", fmt.Sprintf("starter %d: text is required", i+1))
			case utf8.RuneCountInString(st[i].Text) > MaxStarterText:
				errs.Add("conversationStarters", fmt.Sprintf("starter %d: text %s", i+1, TooLong(MaxStarterText)))
			case utf8.RuneCountInString(st[i].Emoji) > MaxStarterEmoji:
				errs.Add("conversationStarters", fmt.Sprintf("starter %d: emoji %s", i+1, TooLong(MaxStarterEmoji)))
			}
		}
	}
	if in.FormConfig.Set && in.FormConfig.Value != nil {
		fc := in.FormConfig.Value
		if utf8.RuneCountInString(fc.Intent) > MaxFormIntent {
			errs.Add("formConfig", "intent "+TooLong(MaxFormIntent))
		}
		if utf8.RuneCountInString(fc.ConfirmationMessage) > MaxFormConfirmation {
			errs.Add("formConfig", "confirmationMessage "+TooLong(MaxFormConfirmation))
		}
		if fc.Display == "" { // a form built in Go, not read from JSON
			fc.Display = FormAfterFirstAnswer
		}
		if !slices.Contains(FormDisplays, fc.Display) {
			errs.Add("formConfig", "display must be one of "+strings.Join(FormDisplays, ", "))
		}
		if fc.Enabled && len(fc.Fields) == 0 {
			errs.Add("formConfig", "an enabled form needs at least one field")
		}
		if fc.Fields == nil {
			fc.Fields = []FormField{}
		}
		ValidateFormFields(errs, "formConfig", fc.Fields)
	}
	NotNull(errs, "isDefault", in.IsDefault)
	NotNull(errs, "isActive", in.IsActive)
	return errs
}
