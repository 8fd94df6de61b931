-- +goose Up
-- The audit log (issue 37): who did what and when in a tenant, by a person
-- of the team, an API token, an OAuth client or the operator. Entries are
-- kept 90 days (the clean-up job prunes older ones). An entry names its
-- actor and target in words as they were at the time, so that it still
-- reads after the member, token or client is gone.
CREATE TABLE audit_log (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id   uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    at          timestamptz NOT NULL DEFAULT now(),
    actor_kind  text NOT NULL CHECK (actor_kind IN ('person', 'token', 'oauth', 'operator', 'system')),
    actor_id    text NOT NULL DEFAULT '',
    actor_name  text NOT NULL DEFAULT '' CHECK (length(actor_name) <= 320),
    action      text NOT NULL CHECK (action ~ '^[a-z_]+\.[a-z_]+$'),
    target      text NOT NULL DEFAULT '' CHECK (length(target) <= 500),
    target_id   text NOT NULL DEFAULT '',
    denied      boolean NOT NULL DEFAULT false,
    address     text NOT NULL DEFAULT '',
    details     jsonb NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX audit_log_tenant_at ON audit_log (tenant_id, at DESC, id DESC);
CREATE INDEX audit_log_at ON audit_log (at);

-- +goose Down
DROP TABLE audit_log;
