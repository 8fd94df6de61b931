package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/jsonbody"
	"github.com/parley/parley/handlers/resource"
)

// tenantJSON is the API representation of a tenant. Secrets never appear:
// the captcha secret shows as hasCaptchaSecretKey.
type tenantJSON struct {
	ID                  string                  `json:"id"`
	Slug                string                  `json:"slug"`
	Name                string                  `json:"name"`
	Plan                string                  `json:"plan"`
	IsActivated         bool                    `json:"isActivated"`
	Description         *string                 `json:"description"`
	Timezone            string                  `json:"timezone"`
	BotName             *string                 `json:"botName"`
	BotTitle            *string                 `json:"botTitle"`
	BotLore             *string                 `json:"botLore"`
	BotTone             string                  `json:"botTone"`
	UseTutoiement       bool                    `json:"useTutoiement"`
	AllowEmojis         bool                    `json:"allowEmojis"`
	PrimaryColor        string                  `json:"primaryColor"`
	SecondaryColor      *string                 `json:"secondaryColor"`
	ShowAIBadge         bool                    `json:"showAiBadge"`
	ShowSources         bool                    `json:"showSources"`
	BotAvatar           *string                 `json:"botAvatar"`
	AvatarType          string                  `json:"avatarType"`
	AvatarBackground    *string                 `json:"avatarBackground"`
	TeaserText          *string                 `json:"teaserText"`
	AutoOpen            bool                    `json:"autoOpen"`
	AutoOpenDelay       int                     `json:"autoOpenDelay"`
	BubblePulse         bool                    `json:"bubblePulse"`
	AllowedDomains      []string                `json:"allowedDomains"`
	ContentPolicy       string                  `json:"contentPolicy"`
	VisitorAuthMode     *string                 `json:"visitorAuthMode"`
	VisitorContextURL   *string                 `json:"visitorContextUrl"`
	CaptchaEnabled      bool                    `json:"captchaEnabled"`
	CaptchaSiteKey      *string                 `json:"captchaSiteKey"`
	HasCaptchaSecretKey bool                    `json:"hasCaptchaSecretKey"`
	HasWidgetKey        bool                    `json:"hasWidgetKey"`
	BookingCTAEnabled   bool                    `json:"bookingCtaEnabled"`
	BookingCTAConfig    parley.BookingCTAConfig `json:"bookingCtaConfig"`
	IsOnboarded         bool                    `json:"isOnboarded"`
	MCPToolsURL         *string                 `json:"mcpToolsUrl"`
	MCPToolsMaxTools    int                     `json:"mcpToolsMaxTools"`
	LLMWebhookURL       *string                 `json:"llmWebhookUrl"`
	VoiceEnabled        bool                    `json:"voiceEnabled"`
	VoiceProvider       string                  `json:"voiceProvider"`
	VoicePhoneNumber    *string                 `json:"voicePhoneNumber"`
	VoiceAssistantID    *string                 `json:"voiceAssistantId"`
	VoiceConfig         parley.VoiceConfig      `json:"voiceConfig"`
	VoiceSecretSet      bool                    `json:"voiceSecretSet"`
	HumanHours          parley.HumanHours       `json:"humanHours"`
	HumanWaitSeconds    int                     `json:"humanWaitSeconds"`
	HumanIdleSeconds    int                     `json:"humanIdleSeconds"`
	BotSeats            int                     `json:"botSeats"`
	ConversationsLimit  int                     `json:"conversationsLimit"`
	ConversationsUsed   int                     `json:"conversationsUsed"`
	SegmentsLimit       int                     `json:"segmentsLimit"`
	CorpusLimit         int                     `json:"corpusLimit"`
	CreatedAt           time.Time               `json:"createdAt"`
	UpdatedAt           time.Time               `json:"updatedAt"`
}

func newTenantJSON(t parley.Tenant, usage db.TenantStats) tenantJSON {
	plan := t.PlanInfo()
	return tenantJSON{
		ID: t.ID, Slug: t.Slug, Name: t.Name, Plan: t.Plan, IsActivated: plan.Widget,
		Description: t.Description, Timezone: t.Timezone,
		BotName: t.BotName, BotTitle: t.BotTitle, BotLore: t.BotLore, BotTone: t.BotTone,
		UseTutoiement: t.UseTutoiement, AllowEmojis: t.AllowEmojis,
		PrimaryColor: t.PrimaryColor, SecondaryColor: t.SecondaryColor, ShowAIBadge: t.ShowAIBadge, ShowSources: t.ShowSources,
		BotAvatar: t.BotAvatar, AvatarType: t.AvatarType, AvatarBackground: t.AvatarBackground,
		TeaserText: t.TeaserText, AutoOpen: t.AutoOpen, AutoOpenDelay: t.AutoOpenDelay, BubblePulse: t.BubblePulse,
		AllowedDomains: t.AllowedDomains, ContentPolicy: t.ContentPolicy,
		VisitorAuthMode: t.VisitorAuthMode, VisitorContextURL: t.VisitorContextURL,
		CaptchaEnabled: t.CaptchaEnabled, CaptchaSiteKey: t.CaptchaSiteKey, HasCaptchaSecretKey: t.CaptchaSecretKey != nil,
		HasWidgetKey:      t.WidgetKey != nil,
		BookingCTAEnabled: t.BookingCTAEnabled, BookingCTAConfig: t.BookingCTAConfig, IsOnboarded: t.IsOnboarded,
		MCPToolsURL: t.MCPToolsURL, MCPToolsMaxTools: t.MCPToolsMaxTools, LLMWebhookURL: t.LLMWebhookURL,
		VoiceEnabled: t.VoiceEnabled, VoiceProvider: t.VoiceProvider, VoicePhoneNumber: t.VoicePhoneNumber,
		VoiceAssistantID: t.VoiceAssistantID, VoiceConfig: t.VoiceConfig, VoiceSecretSet: t.VoiceSecret != nil,
		HumanHours: t.HumanHours, HumanWaitSeconds: t.HumanWaitSeconds, HumanIdleSeconds: t.HumanIdleSeconds,
		BotSeats: t.BotSeats, ConversationsLimit: t.ConversationsLimit(), ConversationsUsed: usage.ConversationsUsed,
		SegmentsLimit: plan.SegmentsLimit, CorpusLimit: plan.CorpusLimit,
		CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt,
	}
}

// EmbedCode is the snippet a tenant pastes into their site. The widget key,
// when set, travels in data-widget-key; when the script is served from
// another address than the API (PARLEY_CDN_URL), data-api names the API.
func (h *Settings) EmbedCode(t parley.Tenant) string { return h.SegmentEmbedCode(t, "") }

// recentConversations is how many conversations GET /tenants/{slug} shows.
const recentConversations = 5

// recentConversationJSON is one item of recentConversations.
type recentConversationJSON struct {
	ID               string    `json:"id"`
	SessionID        string    `json:"sessionId"`
	Channel          string    `json:"channel"`
	Status           string    `json:"status"`
	VisitorType      string    `json:"visitorType"`
	MessageCount     int       `json:"messageCount"`
	FirstUserMessage *string   `json:"firstUserMessage"`
	CreatedAt        time.Time `json:"createdAt"`
	LastMessageAt    time.Time `json:"lastMessageAt"`
}

// ShowTenant answers GET /tenants/{slug}.
func (h *Settings) ShowTenant(c echo.Context) error {
	t := handlers.TenantFrom(c)
	usage, err := h.DB.TenantUsage(c.Request().Context(), t.ID, h.Clock())
	if err != nil {
		return err
	}
	recent, err := h.DB.RecentConversations(c.Request().Context(), t.ID, recentConversations)
	if err != nil {
		return err
	}
	items := make([]recentConversationJSON, len(recent))
	for i, rc := range recent {
		items[i] = recentConversationJSON{ID: rc.ID, SessionID: rc.SessionID, Channel: rc.Channel, Status: rc.Status,
			VisitorType: rc.VisitorType, MessageCount: rc.MessageCount, FirstUserMessage: rc.FirstUserMessage,
			CreatedAt: rc.CreatedAt, LastMessageAt: rc.LastMessageAt}
	}
	// The ETag is of the tenant's settings; its usage and latest
	// conversations move without a write, hence no 304 here.
	return handlers.JSONWithETag(c, http.StatusOK, db.TenantETag(t), tenantEnvelopeJSON{Tenant: newTenantJSON(t, usage),
		Stats: resource.NewStatsJSON(t, usage), RecentConversations: items, EmbedCode: h.EmbedCode(t)})
}

// tenantEnvelopeJSON is what GET /tenants/{slug} answers: the tenant, its
// usage, its latest conversations and its widget snippet.
type tenantEnvelopeJSON struct {
	Tenant              tenantJSON               `json:"tenant"`
	Stats               resource.StatsJSON       `json:"stats"`
	RecentConversations []recentConversationJSON `json:"recentConversations"`
	EmbedCode           string                   `json:"embedCode"`
}

// ShowTenantStats answers GET /tenants/{slug}/stats.
func (h *Settings) ShowTenantStats(c echo.Context) error {
	t := handlers.TenantFrom(c)
	usage, err := h.DB.TenantUsage(c.Request().Context(), t.ID, h.Clock())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, resource.NewStatsJSON(t, usage))
}

// UpdateTenant answers PUT /tenants/{slug}: only sent fields change, and
// under an If-Match only on the tenant as the client read it.
func (h *Settings) UpdateTenant(c echo.Context) error {
	ctx := handlers.Conditional(c)
	cur := handlers.TenantFrom(c)
	if err := db.CheckIfMatch(ctx, db.TenantETag(cur)); err != nil {
		return err
	}
	raw, err := jsonbody.DecodeObject(c, jsonbody.MaxJSONBody)
	if err != nil {
		return err
	}
	var in parley.TenantInput
	in.Problems = jsonbody.DecodeFields(raw, &in)
	t, err := h.Manage.UpdateTenant(ctx, cur, in)
	if err != nil {
		return err
	}
	usage, err := h.DB.TenantUsage(ctx, t.ID, h.Clock())
	if err != nil {
		return err
	}
	return handlers.JSONWithETag(c, http.StatusOK, db.TenantETag(t), newTenantJSON(t, usage))
}
