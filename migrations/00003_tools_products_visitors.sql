-- +goose Up
CREATE TABLE tools (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id       uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    segment_id      uuid REFERENCES segments(id) ON DELETE RESTRICT,
    name            text NOT NULL,
    description     text NOT NULL,
    type            text NOT NULL,
    config          jsonb NOT NULL DEFAULT '{}',
    is_active       boolean NOT NULL DEFAULT true,
    position        double precision NOT NULL DEFAULT 0,
    webhook_url     text,
    webhook_secret  bytea,                          -- AES-GCM sealed
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX tools_name ON tools (tenant_id, lower(name));
CREATE INDEX tools_order ON tools (tenant_id, position, created_at);
CREATE INDEX tools_segment ON tools (segment_id);

CREATE TABLE products (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id       uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    external_id     text,
    name            text NOT NULL,
    description     text,
    price           numeric(14, 2) CHECK (price >= 0),
    currency        text,
    url             text,
    image_url       text,
    tags            text[] NOT NULL DEFAULT '{}',
    is_active       boolean NOT NULL DEFAULT true,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    search          tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', name), 'A') ||
        setweight(to_tsvector('simple', name), 'A') ||
        setweight(to_tsvector('english', coalesce(description, '')), 'C')) STORED
);
CREATE UNIQUE INDEX products_external_id ON products (tenant_id, external_id) WHERE external_id IS NOT NULL;
CREATE INDEX products_tenant ON products (tenant_id, name);
CREATE INDEX products_search ON products USING gin (search);

CREATE TABLE visitors (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id       uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    email           text,
    display_name    text,
    phone           text,
    auth_provider   text,
    external_id     text,
    metadata        jsonb NOT NULL DEFAULT '{}',
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX visitors_email ON visitors (tenant_id, lower(email)) WHERE email IS NOT NULL;
CREATE UNIQUE INDEX visitors_external_id ON visitors (tenant_id, external_id) WHERE external_id IS NOT NULL;
CREATE INDEX visitors_tenant_created ON visitors (tenant_id, created_at DESC);
CREATE INDEX visitors_search_trgm ON visitors USING gin ((coalesce(email, '') || ' ' || coalesce(display_name, '') || ' ' || coalesce(external_id, '')) gin_trgm_ops);

CREATE TABLE memory_facts (
    tenant_id       uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    visitor_id      uuid NOT NULL REFERENCES visitors(id) ON DELETE CASCADE,
    key             text NOT NULL,
    value           text NOT NULL,
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (visitor_id, key)
);

ALTER TABLE tenants
    ADD COLUMN mcp_tools_url       text,
    ADD COLUMN mcp_tools_api_key   bytea,           -- AES-GCM sealed
    ADD COLUMN mcp_tools_max_tools integer NOT NULL DEFAULT 10 CHECK (mcp_tools_max_tools BETWEEN 1 AND 20);

-- +goose Down
ALTER TABLE tenants DROP COLUMN mcp_tools_url, DROP COLUMN mcp_tools_api_key, DROP COLUMN mcp_tools_max_tools;
DROP TABLE memory_facts, visitors, products, tools;
