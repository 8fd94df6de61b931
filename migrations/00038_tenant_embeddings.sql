-- +goose Up
-- A tenant's own embedding endpoint (issue 34): any OpenAI-compatible
-- /embeddings API, used for its knowledge base instead of the operator's
-- (PARLEY_EMBEDDINGS_*), or where the operator configured none. The key is
-- sealed with the secret box like every other tenant secret. A change
-- moves the tenant's config_version (the row's trigger), so that the chat's
-- cached tenant carries the new endpoint at once.
--
-- (No generated column for the model's stored name: the tenants trigger
-- compares whole rows, and a BEFORE trigger sees generated columns unset.)
ALTER TABLE tenants
    ADD COLUMN embeddings_url        text,
    ADD COLUMN embeddings_api_key    bytea,
    ADD COLUMN embeddings_model      text,
    ADD COLUMN embeddings_dimensions integer CHECK (embeddings_dimensions BETWEEN 1 AND 8192),
    ADD CONSTRAINT tenants_embeddings_model CHECK ((embeddings_url IS NULL) = (embeddings_model IS NULL));

-- The embedding job's last outcome for each tenant: when it last embedded,
-- and the endpoint's last failure (cleared by the next success), for the
-- owner to see. Apart from tenants, so that a job's outcome moves no
-- config_version.
CREATE TABLE corpus_embedding_state (
    tenant_id   uuid        PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
    model       text        NOT NULL,
    last_error  text,
    failed_at   timestamptz,
    embedded_at timestamptz
);

-- +goose Down
DROP TABLE corpus_embedding_state;
ALTER TABLE tenants DROP CONSTRAINT tenants_embeddings_model, DROP COLUMN embeddings_dimensions, DROP COLUMN embeddings_model, DROP COLUMN embeddings_api_key,
    DROP COLUMN embeddings_url;
