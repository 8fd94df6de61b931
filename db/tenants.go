package db

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/accounts"
	"github.com/parley/parley/db/internal/pgbase"
)

const tenantColumns = `id, slug, name, plan, bot_seats, description, timezone, widget_key,
	visitor_signing_key, bot_name, bot_title, bot_lore, bot_tone, use_tutoiement, allow_emojis,
	primary_color, secondary_color, show_ai_badge, show_sources, bot_avatar, avatar_type, avatar_background,
	teaser_text, auto_open, auto_open_delay, bubble_pulse, allowed_domains, content_policy,
	visitor_auth_mode, visitor_context_url, captcha_enabled, captcha_site_key, captcha_secret_key,
	booking_cta_enabled, booking_cta_config, is_onboarded, mcp_tools_url, mcp_tools_api_key, mcp_tools_max_tools, llm_webhook_url,
	embeddings_url, embeddings_api_key, embeddings_model, embeddings_dimensions,
	voice_enabled, voice_provider, voice_phone_number, voice_assistant_id, voice_config, voice_secret,
	human_hours, human_wait_seconds, human_idle_seconds, created_at, updated_at, config_version`

var scanTenant = pgx.RowToStructByName[parley.Tenant]

// TenantBySlug returns the tenant with that slug.
func (d *DB) TenantBySlug(ctx context.Context, slug string) (parley.Tenant, error) {
	if !pgbase.Storable(slug) {
		return parley.Tenant{}, parley.Errorf(parley.KindNotFound, "Tenant not found")
	}
	rows, _ := d.pool.Query(ctx, `SELECT `+tenantColumns+` FROM tenants WHERE slug = $1`, slug)
	t, err := pgx.CollectExactlyOneRow(rows, scanTenant)
	if err != nil {
		return parley.Tenant{}, pgbase.NotFound(err, "Tenant")
	}
	return t, nil
}

// TenantByID returns the tenant with that id.
func (d *DB) TenantByID(ctx context.Context, id string) (parley.Tenant, error) {
	rows, _ := d.pool.Query(ctx, `SELECT `+tenantColumns+` FROM tenants WHERE id = $1`, id)
	t, err := pgx.CollectExactlyOneRow(rows, scanTenant)
	if err != nil {
		return parley.Tenant{}, pgbase.NotFound(err, "Tenant")
	}
	return t, nil
}

// CountTenants returns how many tenants exist.
func (d *DB) CountTenants(ctx context.Context) (int, error) {
	var n int
	err := d.pool.QueryRow(ctx, `SELECT count(*) FROM tenants`).Scan(&n)
	return n, err
}

// NewTenant is everything needed to provision a tenant in one transaction:
// the tenant, its default segment, optionally an owner login, and one API token.
type NewTenant struct {
	Slug              string
	Name              string
	Plan              string
	SealedSigningKey  []byte
	OwnerEmail        string // empty: no owner account
	OwnerPasswordHash string
	Token             accounts.NewToken // no Hash: no token
	// Signup, when set, is the sign-up link the creation uses, in its
	// transaction (accounts.UseSignupInTx), which sets its UserID.
	Signup *accounts.SignupUse
}

// CreateTenant provisions a tenant. A taken slug is a conflict; an existing
// user with the owner email becomes an owner of the new tenant too, keeping
// their password.
func (d *DB) CreateTenant(ctx context.Context, nt NewTenant) (parley.Tenant, error) {
	var t parley.Tenant
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, `INSERT INTO tenants (slug, name, plan, visitor_signing_key)
			VALUES ($1, $2, $3, $4) RETURNING `+tenantColumns,
			nt.Slug, nt.Name, nt.Plan, nt.SealedSigningKey)
		var err error
		t, err = pgx.CollectExactlyOneRow(rows, scanTenant)
		if pgbase.IsUniqueViolation(err, "tenants_slug_key") {
			return parley.Errorf(parley.KindConflict, "a tenant with slug %q already exists", nt.Slug)
		}
		if err != nil {
			return fmt.Errorf("inserting tenant: %w", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO segments (tenant_id, slug, name, system_prompt, is_default)
			VALUES ($1, 'default', 'Default', $2, true)`, t.ID, DefaultSystemPrompt(nt.Name)); err != nil {
			return fmt.Errorf("inserting default segment: %w", err)
		}
		if nt.OwnerEmail != "" {
			if _, err := accounts.AddOwnerInTx(ctx, tx, t.ID, nt.OwnerEmail, nt.OwnerPasswordHash); err != nil {
				return err
			}
		}
		if nt.Token.Hash != nil {
			nt.Token.TenantID = t.ID
			if _, err := accounts.InsertToken(ctx, tx, nt.Token); err != nil {
				return err
			}
		}
		if nt.Signup != nil {
			return accounts.UseSignupInTx(ctx, tx, t, nt.Signup)
		}
		return nil
	})
	return t, err
}

// DefaultSystemPrompt is the starting system prompt of a new tenant's default segment.
func DefaultSystemPrompt(tenantName string) string {
	return "You are the assistant of " + tenantName + ". Answer visitors' questions from the knowledge base, " +
		"be concise, and say so when you do not know."
}

// TenantPatch is a partial update of the tenant's writable fields, the store's
// write shape (manage.UpdateTenant makes it from a parley.TenantInput).
// Unset fields do not change.
type TenantPatch struct {
	Name              parley.Opt[string]
	Description       parley.Opt[string]
	Timezone          parley.Opt[string]
	BotName           parley.Opt[string]
	BotTitle          parley.Opt[string]
	BotLore           parley.Opt[string]
	BotTone           parley.Opt[string]
	UseTutoiement     parley.Opt[bool]
	AllowEmojis       parley.Opt[bool]
	PrimaryColor      parley.Opt[string]
	SecondaryColor    parley.Opt[string]
	ShowAIBadge       parley.Opt[bool]
	ShowSources       parley.Opt[bool]
	BotAvatar         parley.Opt[string]
	AvatarType        parley.Opt[string]
	AvatarBackground  parley.Opt[string]
	TeaserText        parley.Opt[string]
	AutoOpen          parley.Opt[bool]
	AutoOpenDelay     parley.Opt[int]
	BubblePulse       parley.Opt[bool]
	AllowedDomains    parley.Opt[[]string]
	ContentPolicy     parley.Opt[string]
	VisitorAuthMode   parley.Opt[string]
	VisitorContextURL parley.Opt[string]
	CaptchaEnabled    parley.Opt[bool]
	CaptchaSiteKey    parley.Opt[string]
	BookingCTAEnabled parley.Opt[bool]
	BookingCTAConfig  parley.Opt[parley.BookingCTAConfig]
	IsOnboarded       parley.Opt[bool]
	LLMWebhookURL     parley.Opt[string]
	VoiceEnabled      parley.Opt[bool]
	VoiceProvider     parley.Opt[string]
	VoicePhoneNumber  parley.Opt[string]
	VoiceAssistantID  parley.Opt[string]
	VoiceConfig       parley.Opt[parley.VoiceConfig]
	HumanHours        parley.Opt[parley.HumanHours]
	HumanWaitSeconds  parley.Opt[int]
	HumanIdleSeconds  parley.Opt[int]

	// Set by the caller: sealed values and keys Parley makes.
	SealedCaptchaSecret parley.Opt[[]byte]
	WidgetKey           parley.Opt[string]
	SealedSigningKey    parley.Opt[[]byte]
	SealedVoiceSecret   parley.Opt[[]byte]
}

// UpdateTenant applies the set fields of p and returns the updated tenant;
// under an If-Match (WithIfMatch), only to the tenant as the client read it.
func (d *DB) UpdateTenant(ctx context.Context, tenantID string, p TenantPatch) (parley.Tenant, error) {
	var sets []pgbase.SetClause
	sets = pgbase.AddSet(sets, "name", p.Name)
	sets = pgbase.AddSet(sets, "description", p.Description)
	sets = pgbase.AddSet(sets, "timezone", p.Timezone)
	sets = pgbase.AddSet(sets, "bot_name", p.BotName)
	sets = pgbase.AddSet(sets, "bot_title", p.BotTitle)
	sets = pgbase.AddSet(sets, "bot_lore", p.BotLore)
	sets = pgbase.AddSet(sets, "bot_tone", p.BotTone)
	sets = pgbase.AddSet(sets, "use_tutoiement", p.UseTutoiement)
	sets = pgbase.AddSet(sets, "allow_emojis", p.AllowEmojis)
	sets = pgbase.AddSet(sets, "primary_color", p.PrimaryColor)
	sets = pgbase.AddSet(sets, "secondary_color", p.SecondaryColor)
	sets = pgbase.AddSet(sets, "show_ai_badge", p.ShowAIBadge)
	sets = pgbase.AddSet(sets, "show_sources", p.ShowSources)
	sets = pgbase.AddSet(sets, "bot_avatar", p.BotAvatar)
	sets = pgbase.AddSet(sets, "avatar_type", p.AvatarType)
	sets = pgbase.AddSet(sets, "avatar_background", p.AvatarBackground)
	sets = pgbase.AddSet(sets, "teaser_text", p.TeaserText)
	sets = pgbase.AddSet(sets, "auto_open", p.AutoOpen)
	sets = pgbase.AddSet(sets, "auto_open_delay", p.AutoOpenDelay)
	sets = pgbase.AddSet(sets, "bubble_pulse", p.BubblePulse)
	if p.AllowedDomains.Set {
		domains := p.AllowedDomains.Value
		if domains == nil {
			domains = []string{} // null clears the list; the column is never null
		}
		sets = append(sets, pgbase.SetClause{Column: "allowed_domains", Value: domains})
	}
	sets = pgbase.AddSet(sets, "content_policy", p.ContentPolicy)
	sets = pgbase.AddSet(sets, "visitor_auth_mode", p.VisitorAuthMode)
	sets = pgbase.AddSet(sets, "visitor_context_url", p.VisitorContextURL)
	sets = pgbase.AddSet(sets, "captcha_enabled", p.CaptchaEnabled)
	sets = pgbase.AddSet(sets, "captcha_site_key", p.CaptchaSiteKey)
	sets = pgbase.AddSet(sets, "captcha_secret_key", p.SealedCaptchaSecret)
	sets = pgbase.AddSet(sets, "booking_cta_enabled", p.BookingCTAEnabled)
	if p.BookingCTAConfig.Set {
		cfg, _ := json.Marshal(p.BookingCTAConfig.Value) // null resets to an empty config
		sets = append(sets, pgbase.SetClause{Column: "booking_cta_config", Value: cfg})
	}
	sets = pgbase.AddSet(sets, "is_onboarded", p.IsOnboarded)
	sets = pgbase.AddSet(sets, "llm_webhook_url", p.LLMWebhookURL)
	sets = pgbase.AddSet(sets, "widget_key", p.WidgetKey)
	sets = pgbase.AddSet(sets, "visitor_signing_key", p.SealedSigningKey)
	sets = pgbase.AddSet(sets, "voice_enabled", p.VoiceEnabled)
	sets = pgbase.AddSet(sets, "voice_provider", p.VoiceProvider)
	sets = pgbase.AddSet(sets, "voice_phone_number", p.VoicePhoneNumber)
	sets = pgbase.AddSet(sets, "voice_assistant_id", p.VoiceAssistantID)
	if p.VoiceConfig.Set {
		cfg, _ := json.Marshal(p.VoiceConfig.Value) // null resets to an empty config
		sets = append(sets, pgbase.SetClause{Column: "voice_config", Value: cfg})
	}
	sets = pgbase.AddSet(sets, "voice_secret", p.SealedVoiceSecret)
	if p.HumanHours.Set && !p.HumanHours.Null {
		hours, _ := json.Marshal(p.HumanHours.Value)
		sets = append(sets, pgbase.SetClause{Column: "human_hours", Value: hours})
	}
	sets = pgbase.AddSet(sets, "human_wait_seconds", p.HumanWaitSeconds)
	sets = pgbase.AddSet(sets, "human_idle_seconds", p.HumanIdleSeconds)

	sql, args := pgbase.UpdateSQL("tenants", "id = $1 RETURNING "+tenantColumns, []any{tenantID}, sets)
	var t parley.Tenant
	err := pgbase.WriteIfMatch(ctx, d.pool, lockedTenantETag(ctx, tenantID), func(q pgbase.Querier) error {
		rows, _ := q.Query(ctx, sql, args...)
		var err error
		if t, err = pgx.CollectExactlyOneRow(rows, scanTenant); err != nil {
			return pgbase.NotFound(err, "Tenant")
		}
		return nil
	})
	if err != nil {
		return parley.Tenant{}, err
	}
	return t, nil
}

// TenantStats is usage of the tenant against its plan. ConversationsUsed
// counts conversations started in the current period.
type TenantStats struct {
	ConversationsUsed int
	Segments          int
	CorpusEntries     int
	APITokens         int
	PeriodStart       time.Time
	PeriodEnd         time.Time
}

// MonthStart returns the first instant of the calendar month of now, in UTC:
// the conversation quota resets then.
func MonthStart(now time.Time) time.Time {
	now = now.UTC()
	return time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// TenantUsage counts what the tenant uses now.
func (d *DB) TenantUsage(ctx context.Context, tenantID string, now time.Time) (TenantStats, error) {
	s := TenantStats{PeriodStart: MonthStart(now)}
	s.PeriodEnd = s.PeriodStart.AddDate(0, 1, 0)
	err := d.pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM segments WHERE tenant_id = $1),
		(SELECT count(*) FROM corpus_entries WHERE tenant_id = $1),
		(SELECT count(*) FROM api_tokens WHERE tenant_id = $1 AND revoked_at IS NULL),
		coalesce((SELECT count FROM conversation_usage WHERE tenant_id = $1 AND month = $2), 0)`,
		tenantID, s.PeriodStart).Scan(&s.Segments, &s.CorpusEntries, &s.APITokens, &s.ConversationsUsed)
	if err != nil {
		return s, fmt.Errorf("counting tenant usage: %w", err)
	}
	return s, nil
}
