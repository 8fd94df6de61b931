-- +goose Up
-- Teams (issue 37): a tenant's members hold one of three roles, and an
-- owner invites people by email. An invitation's link works once, for seven
-- days; only its SHA-256 is kept. A tenant has at most one open invitation
-- per address: inviting it again replaces the old one.
ALTER TABLE tenant_members
    ADD CONSTRAINT tenant_members_role CHECK (role IN ('owner', 'admin', 'agent'));

CREATE TABLE invitations (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id    uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    email        text NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
    role         text NOT NULL CHECK (role IN ('owner', 'admin', 'agent')),
    token_hash   bytea NOT NULL UNIQUE,
    invited_by   uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    accepted_at  timestamptz,
    accepted_by  uuid REFERENCES users (id) ON DELETE SET NULL,
    revoked_at   timestamptz
);
CREATE UNIQUE INDEX invitations_open ON invitations (tenant_id, lower(email))
    WHERE accepted_at IS NULL AND revoked_at IS NULL;
CREATE INDEX invitations_tenant ON invitations (tenant_id, created_at DESC);

-- +goose Down
DROP TABLE invitations;
ALTER TABLE tenant_members DROP CONSTRAINT tenant_members_role;
