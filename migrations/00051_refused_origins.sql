-- +goose Up
-- The sites whose pages the widget was refused on by the tenant's allowed
-- domains (issue 38, "a refused origin"): the dashboard's overview lists
-- them with "Allow this site". One row per tenant and origin (normalized:
-- scheme://host[:port], no path), upserted at most once a minute per origin
-- by each instance (handlers/public), refusals adding up the refusals seen
-- since the last write; a tenant keeps its 50 most recently refused origins
-- (db/origins trims the rest as it writes), so a flood of forged origins
-- costs neither unbounded rows nor a write per request. A tenant's deletion
-- takes its rows.
CREATE TABLE refused_origins (
    id         uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id  uuid        NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    origin     text        NOT NULL CHECK (char_length(origin) BETWEEN 1 AND 300),
    first_seen timestamptz NOT NULL,
    last_seen  timestamptz NOT NULL,
    refusals   bigint      NOT NULL CHECK (refusals > 0),
    UNIQUE (tenant_id, origin)
);
CREATE INDEX refused_origins_latest ON refused_origins (tenant_id, last_seen DESC);

-- +goose Down
DROP TABLE refused_origins;
