-- +goose Up
-- Account safety (issue 37): a person's dashboard sessions, listed and
-- ended from the account page; two-step sign-in (TOTP, RFC 6238) with its
-- recovery codes; and a tenant's requirement of it for its members.

-- The index of a person's sessions: the row of the session store
-- (sessions, kept under its token's SHA-256) it describes, written at
-- sign-in. It goes with its session: a sign-out, an ended session, a
-- renewed token and the store's clean-up of expired sessions delete it
-- through the cascade. seen_at is moved at most every few minutes.
CREATE TABLE user_sessions (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    session_key text NOT NULL UNIQUE REFERENCES sessions (token) ON DELETE CASCADE,
    user_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at  timestamptz NOT NULL,
    seen_at     timestamptz NOT NULL,
    user_agent  text NOT NULL DEFAULT '' CHECK (length(user_agent) <= 200),
    address     text NOT NULL DEFAULT '' CHECK (length(address) <= 100)
);
CREATE INDEX user_sessions_user ON user_sessions (user_id, created_at DESC);

-- A person's authenticator: the TOTP secret, sealed with the server's
-- secret box; enabled_at is null while the setup awaits its first code.
-- last_step is the time step of the last code accepted: a code is taken
-- once, and never one of an earlier step.
CREATE TABLE user_two_factor (
    user_id    uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    secret     bytea NOT NULL,
    enabled_at timestamptz,
    last_step  bigint NOT NULL DEFAULT 0
);

-- The single-use recovery codes of two-step sign-in, kept as their SHA-256.
CREATE TABLE user_recovery_codes (
    user_id   uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    code_hash bytea NOT NULL,
    used_at   timestamptz,
    PRIMARY KEY (user_id, code_hash)
);

-- An owner's requirement: every member signs in to the tenant in two steps.
ALTER TABLE tenants ADD COLUMN require_two_factor boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE tenants DROP COLUMN require_two_factor;
DROP TABLE user_recovery_codes, user_two_factor, user_sessions;
