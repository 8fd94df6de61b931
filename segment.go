package parley

import (
	"time"
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
	CreatedAt            time.Time   `db:"created_at" json:"createdAt"`
	UpdatedAt            time.Time   `db:"updated_at" json:"updatedAt"`
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
}

// FormField is one field of a form (segment forms and SUBMIT_FORM tools).
type FormField struct {
	Name     string `json:"name"`
	Label    string `json:"label"`
	Type     string `json:"type"`
	Required bool   `json:"required"`
}
