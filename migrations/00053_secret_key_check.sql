-- +goose Up
-- secret_key_check holds one constant sealed with the secret box
-- (PARLEY_SECRET_KEY), so that a process can tell at once whether its key
-- opens this database's secrets: `parley serve` at start, `parley backup`
-- before it dumps, and `parley restore` before it writes anything. The row
-- is written by the first process that checks (after it opened an existing
-- secret, when there is one) and re-sealed by `parley secret rotate` with
-- every other secret.
CREATE TABLE secret_key_check (
    id         boolean PRIMARY KEY DEFAULT true CHECK (id),
    sealed     bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- A backup (pg_dump, parley backup) restores with an empty search_path, in
-- which the generated column's document could not find parley_ts_config:
-- the function names it with its schema now. Same body otherwise, so the
-- stored documents stay right.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION parley_corpus_document(locale text, title text, summary text, tags text[], content text)
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
    FROM (SELECT CASE WHEN locale IS NULL THEN 'english'::regconfig ELSE public.parley_ts_config(locale) END AS cfg) c
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION parley_corpus_document(locale text, title text, summary text, tags text[], content text)
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
-- +goose StatementEnd
DROP TABLE secret_key_check;
