-- +goose Up
-- The OAuth 2.1 authorization server (issue 15).
--
-- oauth_keys are the RS256 signing keys of access tokens. The private key
-- is sealed with the secret box (PARLEY_SECRET_KEY); the newest key signs,
-- and every key not retired is published in the JWKS and still verifies.
-- `parley oauth rotate-key` adds a key and retires all but the previous one.
CREATE TABLE oauth_keys (
    kid         text PRIMARY KEY,
    private_key bytea NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    retired_at  timestamptz
);

-- oauth_clients are dynamically registered public clients (RFC 7591): no
-- secret; the redirect URIs are matched exactly.
CREATE TABLE oauth_clients (
    id            text PRIMARY KEY,
    client_name   text NOT NULL,
    redirect_uris text[] NOT NULL,
    scopes        text[] NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);

-- oauth_grants are the owner's approvals: one per authorization code
-- exchanged, the "family" of every token issued from it. Revoking a grant
-- revokes its refresh and access tokens at once.
CREATE TABLE oauth_grants (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    client_id    text NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    tenant_id    uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    scopes       text[] NOT NULL,
    resource     text NOT NULL,
    created_at   timestamptz NOT NULL,
    last_used_at timestamptz,
    revoked_at   timestamptz
);
CREATE INDEX oauth_grants_tenant ON oauth_grants (tenant_id, client_id);

-- oauth_codes are authorization codes, kept as their SHA-256. A code is
-- used once; grant_id names what its exchange issued, which a replay revokes.
CREATE TABLE oauth_codes (
    code_hash      bytea PRIMARY KEY,
    client_id      text NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    tenant_id      uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    user_id        uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    redirect_uri   text NOT NULL,
    scopes         text[] NOT NULL,
    resource       text NOT NULL,
    code_challenge text NOT NULL,
    expires_at     timestamptz NOT NULL,
    used_at        timestamptz,
    grant_id       uuid REFERENCES oauth_grants (id) ON DELETE CASCADE
);
CREATE INDEX oauth_codes_expiry ON oauth_codes (expires_at);

-- oauth_refresh_tokens are opaque refresh tokens, kept as their SHA-256.
-- Each use rotates one (rotated_at); using a rotated one revokes its grant.
CREATE TABLE oauth_refresh_tokens (
    token_hash bytea PRIMARY KEY,
    grant_id   uuid NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
    expires_at timestamptz NOT NULL,
    rotated_at timestamptz
);
CREATE INDEX oauth_refresh_tokens_grant ON oauth_refresh_tokens (grant_id);

-- oauth_access_tokens are the jti of every access token issued, so that a
-- revoked one (or one of a revoked grant) is refused before it expires.
CREATE TABLE oauth_access_tokens (
    jti        text PRIMARY KEY,
    grant_id   uuid NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz
);
CREATE INDEX oauth_access_tokens_grant ON oauth_access_tokens (grant_id);

-- +goose Down
DROP TABLE oauth_access_tokens;
DROP TABLE oauth_refresh_tokens;
DROP TABLE oauth_codes;
DROP TABLE oauth_grants;
DROP TABLE oauth_clients;
DROP TABLE oauth_keys;
