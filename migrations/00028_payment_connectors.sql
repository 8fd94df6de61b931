-- +goose Up
-- A tenant's payment connector: one Stripe account per tenant, reached with
-- the tenant's secret or restricted key, sealed with PARLEY_SECRET_KEY
-- (auth.Box) and never returned; its mode, type and last 4 characters are
-- kept apart so that they can be shown. While it is active, the agent is
-- offered COLLECT_PAYMENT (never on the voice channel), which creates a
-- Stripe payment link for a quote of the conversation or for the fixed
-- amount below.
--
-- The tool's submissions need no change of the submissions table: tool_id
-- is already nullable (a synthetic tool has no tools row), and tool_type and
-- tool_name are free text.
CREATE TABLE payment_connectors (
    tenant_id           uuid PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
    provider            text NOT NULL DEFAULT 'stripe' CHECK (provider IN ('stripe')),
    secret_key          bytea NOT NULL,
    key_mode            text NOT NULL CHECK (key_mode IN ('test', 'live')),
    key_type            text NOT NULL CHECK (key_type IN ('secret', 'restricted')),
    key_last4           text NOT NULL CHECK (char_length(key_last4) <= 4),
    is_active           boolean NOT NULL DEFAULT true,
    -- The fixed amount, in the currency's smallest unit, charged when the
    -- conversation holds no quote; both or neither.
    currency            text CHECK (currency ~ '^[a-z]{3}$'),
    default_amount      bigint CHECK (default_amount > 0),
    default_description text,
    success_message     text,
    -- The last "Test connection": when, whether Stripe accepted the key, and
    -- what it said (the account's name, or Stripe's error message).
    checked_at          timestamptz,
    check_ok            boolean,
    check_message       text,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    CHECK ((default_amount IS NULL) OR (currency IS NOT NULL))
);

-- The quotes and payment links of one conversation, which COLLECT_PAYMENT
-- reads to price a link and to give back a link already made.
CREATE INDEX submissions_conversation_type ON submissions (conversation_id, tool_type, created_at DESC)
    WHERE conversation_id IS NOT NULL;

-- +goose Down
DROP INDEX submissions_conversation_type;
DROP TABLE payment_connectors;
