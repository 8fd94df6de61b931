-- +goose Up
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE tenants (
    id                     uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    slug                   text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9][a-z0-9-]{0,99}$'),
    name                   text NOT NULL,
    plan                   text NOT NULL,
    bot_seats              integer NOT NULL DEFAULT 0 CHECK (bot_seats >= 0),
    description            text,
    timezone               text NOT NULL DEFAULT 'UTC',
    widget_key             text,
    visitor_signing_key    bytea NOT NULL,           -- AES-GCM sealed
    bot_name               text,
    bot_title              text,
    bot_lore               text,
    bot_tone               text NOT NULL DEFAULT 'NEUTRAL',
    use_tutoiement         boolean NOT NULL DEFAULT false,
    allow_emojis           boolean NOT NULL DEFAULT false,
    primary_color          text NOT NULL DEFAULT '#2563EB',
    secondary_color        text,
    show_ai_badge          boolean NOT NULL DEFAULT true,
    bot_avatar             text,
    avatar_type            text NOT NULL DEFAULT 'DEFAULT',
    avatar_background      text,
    teaser_text            text,
    auto_open              boolean NOT NULL DEFAULT false,
    auto_open_delay        integer NOT NULL DEFAULT 10,
    bubble_pulse           boolean NOT NULL DEFAULT true,
    allowed_domains        text[] NOT NULL DEFAULT '{}',
    content_policy         text NOT NULL DEFAULT 'SFW',
    visitor_auth_mode      text,
    visitor_context_url    text,
    captcha_enabled        boolean NOT NULL DEFAULT false,
    captcha_site_key       text,
    captcha_secret_key     bytea,                    -- AES-GCM sealed
    booking_cta_enabled    boolean NOT NULL DEFAULT false,
    booking_cta_config     jsonb NOT NULL DEFAULT '{}',
    is_onboarded           boolean NOT NULL DEFAULT false,
    created_at             timestamptz NOT NULL DEFAULT now(),
    updated_at             timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE segments (
    id                     uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id              uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    slug                   text NOT NULL,
    name                   text NOT NULL,
    system_prompt          text NOT NULL,
    welcome_message        text,
    conversation_starters  jsonb NOT NULL DEFAULT '[]',
    form_config            jsonb,
    is_default             boolean NOT NULL DEFAULT false,
    is_active              boolean NOT NULL DEFAULT true,
    created_at             timestamptz NOT NULL DEFAULT now(),
    updated_at             timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, slug)
);
-- At most one default segment per tenant, enforced by the database so that
-- concurrent writers cannot create a second one.
CREATE UNIQUE INDEX segments_one_default ON segments (tenant_id) WHERE is_default;

CREATE TABLE users (
    id                     uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    email                  text NOT NULL,
    password_hash          text NOT NULL,
    created_at             timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email ON users (lower(email));

CREATE TABLE tenant_members (
    tenant_id              uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    user_id                uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role                   text NOT NULL DEFAULT 'owner',
    created_at             timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, user_id)
);
CREATE INDEX tenant_members_user ON tenant_members (user_id);

CREATE TABLE api_tokens (
    id                     uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id              uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    name                   text NOT NULL,
    -- legacy plain keys travel in X-API-Key; ak_ tokens only as Bearer.
    legacy                 boolean NOT NULL DEFAULT false,
    token_hash             bytea NOT NULL UNIQUE,    -- sha256 of the token
    display_prefix         text NOT NULL,            -- first characters, to recognise a token in lists
    scopes                 text[] NOT NULL,
    created_at             timestamptz NOT NULL DEFAULT now(),
    last_used_at           timestamptz,
    revoked_at             timestamptz
);
CREATE INDEX api_tokens_tenant ON api_tokens (tenant_id, created_at DESC);

-- Fixed-window counters shared by every instance (login attempts now; chat and
-- OAuth limits later).
CREATE TABLE rate_counters (
    key                    text NOT NULL,
    window_start           timestamptz NOT NULL,
    expires_at             timestamptz NOT NULL,
    count                  integer NOT NULL DEFAULT 0,
    PRIMARY KEY (key, window_start)
);
CREATE INDEX rate_counters_expires ON rate_counters (expires_at);

-- Admin sessions (scs pgxstore).
CREATE TABLE sessions (
    token                  text PRIMARY KEY,
    data                   bytea NOT NULL,
    expiry                 timestamptz NOT NULL
);
CREATE INDEX sessions_expiry ON sessions (expiry);

-- +goose Down
DROP TABLE sessions, rate_counters, api_tokens, tenant_members, users, segments, tenants;
