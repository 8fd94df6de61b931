-- +goose Up
-- Visitor verification within a conversation: by a code sent by email
-- (SEND_VERIFICATION_CODE, VERIFY_VISITOR_CODE) or by the context webhook's
-- challenge (VERIFY_EXTERNAL_CHALLENGE). A verified conversation names the
-- visitor it was verified as (null: a challenge passed by an anonymous
-- visitor), and later messages of its session are that visitor's, verified.
ALTER TABLE conversations
    ADD COLUMN verified_visitor_id uuid REFERENCES visitors(id) ON DELETE SET NULL,
    ADD COLUMN verified_by         text CHECK (verified_by IN ('code', 'challenge')),
    ADD COLUMN verified_at         timestamptz;

-- The code last sent in a conversation: only its HMAC-SHA256 under a salt
-- of its own is kept, with its tries; it is deleted once it verified.
CREATE TABLE verification_codes (
    conversation_id uuid PRIMARY KEY REFERENCES conversations(id) ON DELETE CASCADE,
    tenant_id       uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    email           text NOT NULL,
    code_hash       bytea NOT NULL,
    salt            bytea NOT NULL,
    attempts        integer NOT NULL DEFAULT 0,
    sent_at         timestamptz NOT NULL,
    expires_at      timestamptz NOT NULL
);
-- The resend throttle also holds per address across conversations.
CREATE INDEX verification_codes_email ON verification_codes (tenant_id, lower(email), sent_at DESC);

-- The answers given to a context webhook challenge, counted against its
-- maxAttempts.
CREATE TABLE verification_challenges (
    conversation_id uuid NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    challenge_id    text NOT NULL,
    attempts        integer NOT NULL DEFAULT 0,
    PRIMARY KEY (conversation_id, challenge_id)
);

-- +goose Down
DROP TABLE verification_challenges, verification_codes;
ALTER TABLE conversations DROP COLUMN verified_visitor_id, DROP COLUMN verified_by, DROP COLUMN verified_at;
