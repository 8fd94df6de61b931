-- +goose Up
-- webhook_endpoints are a tenant's receivers of events. The signing secret is
-- sealed with the service's secret key (it must be read back to sign), shown
-- once at creation.
CREATE TABLE webhook_endpoints (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id       uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    url             text NOT NULL,
    description     text NOT NULL DEFAULT '',
    events          text[] NOT NULL,
    enabled         boolean NOT NULL DEFAULT true,
    pii_fields      text[] NOT NULL DEFAULT '{}',
    secret_sealed   bytea NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_tenant ON webhook_endpoints (tenant_id, created_at);

-- webhook_deliveries: one row per event per subscribed endpoint, written in the
-- transaction that records the event, together with the River job that sends
-- it. The payload is the event's (frozen at recording); piiFields are applied
-- when sending. Status: pending (waiting for its first attempt or a retry),
-- succeeded, failed (every attempt failed), dropped (the endpoint was disabled
-- first). Erasing a submission erases its events and so their deliveries.
CREATE TABLE webhook_deliveries (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id       uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    endpoint_id     uuid NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
    event_id        uuid NOT NULL REFERENCES events(id) ON DELETE CASCADE,
    event           text NOT NULL,
    status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed', 'dropped')),
    attempts        integer NOT NULL DEFAULT 0,
    http_status     integer,
    last_error      text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    last_attempt_at timestamptz,
    next_attempt_at timestamptz,
    delivered_at    timestamptz,
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at DESC);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (endpoint_id) WHERE status = 'pending';

-- +goose Down
DROP TABLE webhook_deliveries, webhook_endpoints;
