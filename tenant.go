package parley

import (
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// Tenant is one row of tenants. Sealed secrets stay sealed here; callers that
// need them open them with the secret box.
type Tenant struct {
	ID                string           `db:"id"`
	Slug              string           `db:"slug"`
	Name              string           `db:"name"`
	Plan              string           `db:"plan"`
	BotSeats          int              `db:"bot_seats"`
	Description       *string          `db:"description"`
	Timezone          string           `db:"timezone"`
	WidgetKey         *string          `db:"widget_key"`
	VisitorSigningKey []byte           `db:"visitor_signing_key"`
	BotName           *string          `db:"bot_name"`
	BotTitle          *string          `db:"bot_title"`
	BotLore           *string          `db:"bot_lore"`
	BotTone           string           `db:"bot_tone"`
	UseTutoiement     bool             `db:"use_tutoiement"`
	AllowEmojis       bool             `db:"allow_emojis"`
	PrimaryColor      string           `db:"primary_color"`
	SecondaryColor    *string          `db:"secondary_color"`
	ShowAIBadge       bool             `db:"show_ai_badge"`
	ShowSources       bool             `db:"show_sources"`
	BotAvatar         *string          `db:"bot_avatar"`
	AvatarType        string           `db:"avatar_type"`
	AvatarBackground  *string          `db:"avatar_background"`
	TeaserText        *string          `db:"teaser_text"`
	AutoOpen          bool             `db:"auto_open"`
	AutoOpenDelay     int              `db:"auto_open_delay"`
	BubblePulse       bool             `db:"bubble_pulse"`
	AllowedDomains    []string         `db:"allowed_domains"`
	ContentPolicy     string           `db:"content_policy"`
	VisitorAuthMode   *string          `db:"visitor_auth_mode"`
	VisitorContextURL *string          `db:"visitor_context_url"`
	CaptchaEnabled    bool             `db:"captcha_enabled"`
	CaptchaSiteKey    *string          `db:"captcha_site_key"`
	CaptchaSecretKey  []byte           `db:"captcha_secret_key"`
	BookingCTAEnabled bool             `db:"booking_cta_enabled"`
	BookingCTAConfig  BookingCTAConfig `db:"booking_cta_config"`
	IsOnboarded       bool             `db:"is_onboarded"`
	MCPToolsURL       *string          `db:"mcp_tools_url"`
	MCPToolsAPIKey    []byte           `db:"mcp_tools_api_key"` // sealed
	MCPToolsMaxTools  int              `db:"mcp_tools_max_tools"`
	LLMWebhookURL     *string          `db:"llm_webhook_url"`
	// The tenant's own embedding endpoint (issue 34), nil URL for none:
	// its knowledge base is embedded there instead of at the operator's.
	EmbeddingsURL        *string     `db:"embeddings_url"`
	EmbeddingsAPIKey     []byte      `db:"embeddings_api_key"` // sealed
	EmbeddingsModel      *string     `db:"embeddings_model"`
	EmbeddingsDimensions *int        `db:"embeddings_dimensions"`
	VoiceEnabled         bool        `db:"voice_enabled"`
	VoiceProvider        string      `db:"voice_provider"`
	VoicePhoneNumber     *string     `db:"voice_phone_number"`
	VoiceAssistantID     *string     `db:"voice_assistant_id"`
	VoiceConfig          VoiceConfig `db:"voice_config"`
	VoiceSecret          []byte      `db:"voice_secret"` // sealed
	// When a person can answer a visitor who asks for one, how long an
	// escalated conversation waits for one, and how long a person's silence
	// hands a taken one back (issue 36; rules in manage).
	HumanHours       HumanHours `db:"human_hours"`
	HumanWaitSeconds int        `db:"human_wait_seconds"`
	HumanIdleSeconds int        `db:"human_idle_seconds"`
	CreatedAt        time.Time  `db:"created_at"`
	UpdatedAt        time.Time  `db:"updated_at"`
	// ConfigVersion changes (grows) with every committed change to what a
	// chat reads of the tenant before its model is called (its row,
	// segments, corpus, tools, products, connectors), and is never another
	// tenant's: see db.ChatTenantAndSegment.
	ConfigVersion int64 `db:"config_version"`
}

// BookingCTAConfig is the booking call-to-action shown by the widget.
type BookingCTAConfig struct {
	Headline    string `json:"headline"`
	Subtitle    string `json:"subtitle"`
	CTAText     string `json:"ctaText"`
	OfficeHours string `json:"officeHours"`
}

// HumanHours is when a person can answer: Mode "always", "calendar" (the
// calendar connector's office hours) or "weekly" (Days), in the tenant's
// time zone.
type HumanHours struct {
	Mode string      `json:"mode"`
	Days OfficeHours `json:"days,omitempty"`
}

// The modes of HumanHours.
const (
	HoursAlways   = "always"
	HoursCalendar = "calendar"
	HoursWeekly   = "weekly"
)

// PlanInfo returns the tenant's plan row (the free plan if the name is unknown).
func (t *Tenant) PlanInfo() Plan {
	if p, ok := PlanByName(t.Plan); ok {
		return p
	}
	return Plans[0]
}

// ConversationsLimit is the plan's monthly base plus paid bot seats.
func (t *Tenant) ConversationsLimit() int {
	return t.PlanInfo().ConversationsLimit + t.BotSeats*ConversationsPerBotSeat
}

// slugPattern is the shape of a tenant's slug.
var slugPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,99}$`)

// NewTenantInput is what a tenant is created with: the tenant create
// command's flags.
type NewTenantInput struct {
	Slug, Name, Plan, OwnerEmail, OwnerPassword string
}

// Validate applies the rules of a new tenant, with one message per field
// (slug, name, plan, ownerEmail, ownerPassword). The password's own rules
// are the hasher's.
func (in NewTenantInput) Validate() error {
	fe := FieldErrors{}
	if !slugPattern.MatchString(in.Slug) {
		fe.Add("slug", fmt.Sprintf("%q must be 1 to 100 lowercase letters, digits or hyphens, starting with a letter or digit", in.Slug))
	}
	if strings.TrimSpace(in.Name) == "" || utf8.RuneCountInString(in.Name) > 255 {
		fe.Add("name", "required, at most 255 characters")
	}
	if _, ok := PlanByName(in.Plan); !ok {
		fe.Add("plan", fmt.Sprintf("%q is not one of %s", in.Plan, strings.Join(PlanNames(), ", ")))
	}
	switch {
	case (in.OwnerEmail == "") != (in.OwnerPassword == ""):
		fe.Add("ownerEmail", "the owner's email and password go together")
		fe.Add("ownerPassword", "the owner's email and password go together")
	case in.OwnerEmail != "" && !strings.Contains(in.OwnerEmail, "@"):
		fe.Add("ownerEmail", fmt.Sprintf("%q is not an email address", in.OwnerEmail))
	}
	return fe.Err()
}
