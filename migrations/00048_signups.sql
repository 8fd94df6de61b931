-- +goose Up
-- Sign-up (issue 37, PARLEY_SIGNUP): the links that create a workspace.
-- A confirmation is an open sign-up waiting for its address to be
-- confirmed: the workspace's name and the password's hash are kept until
-- the emailed link is followed (24 hours). An invitation is the operator's
-- (parley signup invite): a link for one address, for 7 days. Either is
-- known by its token's SHA-256 only; a confirmation has none until its mail
-- job made the link. used_at marks a link that created its workspace.
CREATE TABLE signups (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    kind           text NOT NULL CHECK (kind IN ('confirmation', 'invitation')),
    email          text NOT NULL CHECK (length(email) <= 320),
    workspace_name text NOT NULL DEFAULT '' CHECK (length(workspace_name) <= 400),
    password_hash  text NOT NULL DEFAULT '',
    token_hash     bytea UNIQUE,
    created_at     timestamptz NOT NULL DEFAULT now(),
    expires_at     timestamptz NOT NULL,
    used_at        timestamptz,
    tenant_id      uuid REFERENCES tenants (id) ON DELETE SET NULL
);
CREATE INDEX signups_expires_at ON signups (expires_at);

-- +goose Down
DROP TABLE signups;
