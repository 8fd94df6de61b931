-- +goose Up
-- The voice channel: Parley is the custom LLM and the server URL of a voice
-- orchestrator (Vapi, the single supported one). A tenant's voice settings
-- live on the tenant; voice_secret is the secret the orchestrator sends
-- (Authorization: Bearer or X-Vapi-Secret), sealed with the service's box
-- like the other secrets, and never shown again after it is set.
ALTER TABLE tenants
    ADD COLUMN voice_enabled      boolean NOT NULL DEFAULT false,
    ADD COLUMN voice_provider     text NOT NULL DEFAULT 'vapi' CHECK (voice_provider IN ('vapi')),
    ADD COLUMN voice_phone_number text CHECK (voice_phone_number ~ '^\+[1-9][0-9]{6,14}$'),
    ADD COLUMN voice_assistant_id text CHECK (char_length(voice_assistant_id) BETWEEN 1 AND 200),
    ADD COLUMN voice_config       jsonb NOT NULL DEFAULT '{}',
    ADD COLUMN voice_secret       bytea;

-- One row per call the orchestrator told us about, keyed by its call id; the
-- conversation (channel voice) holds the turns. The end-of-call report fills
-- the rest.
CREATE TABLE voice_calls (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id        uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    call_id          text NOT NULL CHECK (char_length(call_id) BETWEEN 1 AND 200),
    conversation_id  uuid REFERENCES conversations(id) ON DELETE SET NULL,
    status           text NOT NULL DEFAULT 'unknown' CHECK (char_length(status) BETWEEN 1 AND 50),
    caller_number    text,
    started_at       timestamptz,
    ended_at         timestamptz,
    ended_reason     text,
    duration_seconds double precision,
    cost             double precision,
    summary          text,
    transcript       text,
    recording_url    text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT voice_calls_call UNIQUE (tenant_id, call_id)
);
CREATE INDEX voice_calls_tenant_created ON voice_calls (tenant_id, created_at DESC);

-- +goose Down
DROP TABLE voice_calls;
ALTER TABLE tenants DROP COLUMN voice_enabled, DROP COLUMN voice_provider, DROP COLUMN voice_phone_number,
    DROP COLUMN voice_assistant_id, DROP COLUMN voice_config, DROP COLUMN voice_secret;
