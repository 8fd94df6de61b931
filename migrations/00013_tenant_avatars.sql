-- +goose Up
-- tenant_avatars holds the bot's picture a tenant uploaded in the dashboard,
-- served publicly at /avatars/{slug}; sha identifies its content (the
-- version in the address, and the ETag).
CREATE TABLE tenant_avatars (
    tenant_id     uuid PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
    content_type  text NOT NULL,
    data          bytea NOT NULL,
    sha           text NOT NULL,
    updated_at    timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE tenant_avatars;
