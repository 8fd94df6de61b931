package parley

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Segment is an audience with its own system prompt, welcome message and starters.
type Segment struct {
	ID                   string      `db:"id" json:"id"`
	TenantID             string      `db:"tenant_id" json:"-"`
	Slug                 string      `db:"slug" json:"slug"`
	Name                 string      `db:"name" json:"name"`
	SystemPrompt         string      `db:"system_prompt" json:"systemPrompt"`
	WelcomeMessage       *string     `db:"welcome_message" json:"welcomeMessage"`
	ConversationStarters []Starter   `db:"conversation_starters" json:"conversationStarters"`
	FormConfig           *FormConfig `db:"form_config" json:"formConfig"`
	IsDefault            bool        `db:"is_default" json:"isDefault"`
	IsActive             bool        `db:"is_active" json:"isActive"`
	// LeadToolID is the SUBMIT_FORM tool the dashboard keeps in step with
	// the form, through which the assistant asks for its fields in the
	// conversation (the dashboard's "lead capture"); nil when none.
	LeadToolID *string   `db:"lead_tool_id" json:"-"`
	CreatedAt  time.Time `db:"created_at" json:"createdAt"`
	UpdatedAt  time.Time `db:"updated_at" json:"updatedAt"`
}

// Starter is a conversation starter shown by the widget.
type Starter struct {
	Text  string `json:"text"`
	Emoji string `json:"emoji"`
}

// FormConfig is a segment's lead form.
type FormConfig struct {
	Enabled             bool        `json:"enabled"`
	Intent              string      `json:"intent"`
	ConfirmationMessage string      `json:"confirmationMessage,omitempty"`
	Fields              []FormField `json:"fields"`
	// Display is when the widget shows the form (FormDisplay...); a form
	// stored before it existed reads as FormAfterFirstAnswer.
	Display string `json:"display"`
}

// When the widget shows a segment's lead form: as the chat opens, once the
// assistant answered the visitor's first message (the default: a form up
// front reads as a toll before any help), or only when the assistant
// offers it in the conversation.
const (
	FormOnOpen           = "on_open"
	FormAfterFirstAnswer = "after_first_answer"
	FormWhenAsked        = "when_asked"
)

// FormDisplays are the values of FormConfig.Display.
var FormDisplays = []string{FormOnOpen, FormAfterFirstAnswer, FormWhenAsked}

// UnmarshalJSON reads a form, an absent display as FormAfterFirstAnswer.
func (f *FormConfig) UnmarshalJSON(b []byte) error {
	type plain FormConfig
	p := plain{Display: FormAfterFirstAnswer}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*f = FormConfig(p)
	return nil
}

// FormField is one field of a form (segment forms and SUBMIT_FORM tools).
type FormField struct {
	Name     string `json:"name"`
	Label    string `json:"label"`
	Type     string `json:"type"`
	Required bool   `json:"required"`
}

// Form field limits; the OpenAPI document states them.
const (
	maxFormFields        = 20
	maxFormFieldLabel    = 100
	maxFormFieldNameChar = 64
)

var (
	formFieldName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,63}$`)
	// FormFieldTypes are the types a form field may have.
	FormFieldTypes = []string{"text", "email", "phone", "textarea"}
)

// ValidateFormFields checks a form's fields: known types, unique valid names,
// labels. Segment lead forms and SUBMIT_FORM tool configs share it; problems go
// to errs under key.
func ValidateFormFields(errs FieldErrors, key string, fields []FormField) {
	if len(fields) > maxFormFields {
		errs.Add(key, fmt.Sprintf("at most %d fields", maxFormFields))
		return
	}
	seen := map[string]bool{}
	for i, f := range fields {
		where := fmt.Sprintf("field %d", i+1)
		switch {
		case !formFieldName.MatchString(f.Name):
			errs.Add(key, fmt.Sprintf("%s: name %q must start with a letter and hold only letters, digits and underscores (snake_case), at most %d characters", where, f.Name, maxFormFieldNameChar))
		case seen[f.Name]:
			errs.Add(key, fmt.Sprintf("%s: name %q is used twice; field names must be unique", where, f.Name))
		case strings.TrimSpace(f.Label) == "" || utf8.RuneCountInString(f.Label) > maxFormFieldLabel:
			errs.Add(key, fmt.Sprintf("%s: label is required, at most %d characters", where, maxFormFieldLabel))
		case !slices.Contains(FormFieldTypes, f.Type):
			errs.Add(key, fmt.Sprintf("%s: type %q must be one of %s", where, f.Type, strings.Join(FormFieldTypes, ", ")))
		}
		seen[f.Name] = true
	}
}
