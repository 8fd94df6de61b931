-- +goose Up
-- btree_gin lets one GIN index start with tenant_id, so a search only walks
-- its own tenant's postings.
CREATE EXTENSION IF NOT EXISTS btree_gin;


-- The text search configuration for a locale: the language's stemmer where
-- Postgres has one, 'simple' otherwise. IMMUTABLE so that it can feed a
-- generated column.
CREATE FUNCTION parley_ts_config(locale text) RETURNS regconfig
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE lower(left(coalesce(locale, ''), 2))
        WHEN 'en' THEN 'english'::regconfig
        WHEN 'fr' THEN 'french'::regconfig
        WHEN 'de' THEN 'german'::regconfig
        WHEN 'es' THEN 'spanish'::regconfig
        WHEN 'it' THEN 'italian'::regconfig
        WHEN 'pt' THEN 'portuguese'::regconfig
        WHEN 'nl' THEN 'dutch'::regconfig
        ELSE 'simple'::regconfig
    END
$$;

-- The weighted search document of a corpus entry. array_to_string is only
-- STABLE in general, but for text[] it cannot change: declared IMMUTABLE so
-- the document can be a stored generated column.
CREATE FUNCTION parley_corpus_document(locale text, title text, summary text, tags text[], content text)
RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT setweight(to_tsvector(cfg, title), 'A') ||
           setweight(to_tsvector(cfg, coalesce(summary, '')), 'B') ||
           setweight(to_tsvector(cfg, array_to_string(tags, ' ')), 'B') ||
           setweight(to_tsvector(cfg, left(content, 200000)), 'C') ||
           -- Without a locale the language is unknown: index the words as
           -- written too, so that stemmed English and exact words both match.
           CASE WHEN locale IS NULL THEN
               setweight(to_tsvector('simple', title), 'A') ||
               setweight(to_tsvector('simple', coalesce(summary, '')), 'B') ||
               setweight(to_tsvector('simple', left(content, 200000)), 'C')
           ELSE ''::tsvector END
    FROM (SELECT CASE WHEN locale IS NULL THEN 'english'::regconfig ELSE parley_ts_config(locale) END AS cfg) c
$$;

CREATE TABLE corpus_entries (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id           uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    segment_id          uuid REFERENCES segments(id) ON DELETE RESTRICT,
    title               text NOT NULL,
    content             text NOT NULL,
    summary             text,
    priority            integer NOT NULL DEFAULT 5 CHECK (priority BETWEEN 0 AND 100),
    is_active           boolean NOT NULL DEFAULT true,
    external_id         text,
    source              text,
    source_url          text,
    locale              text,
    tags                text[] NOT NULL DEFAULT '{}',
    -- URL sync bookkeeping (POST /corpus/sync and its periodic refresh).
    sync_etag           text,
    sync_last_modified  text,
    synced_at           timestamptz,
    sync_error          text,
    sync_error_at       timestamptz,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    search              tsvector GENERATED ALWAYS AS (
        parley_corpus_document(locale, title, summary, tags, content)) STORED
);
CREATE UNIQUE INDEX corpus_external_id ON corpus_entries (tenant_id, external_id) WHERE external_id IS NOT NULL;
CREATE INDEX corpus_tenant_order ON corpus_entries (tenant_id, priority DESC, updated_at DESC, id);
CREATE INDEX corpus_segment_order ON corpus_entries (tenant_id, segment_id, priority DESC, updated_at DESC, id);
CREATE INDEX corpus_segment ON corpus_entries (segment_id);
CREATE INDEX corpus_search ON corpus_entries USING gin (tenant_id, search);
CREATE INDEX corpus_title_trgm ON corpus_entries USING gin (tenant_id, title gin_trgm_ops);
CREATE INDEX corpus_sync_due ON corpus_entries (synced_at) WHERE source_url IS NOT NULL AND synced_at IS NOT NULL;

-- +goose Down
DROP TABLE corpus_entries;
DROP FUNCTION parley_corpus_document(text, text, text, text[], text);
DROP FUNCTION parley_ts_config(text);
