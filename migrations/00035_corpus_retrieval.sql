-- +goose Up
-- Retrieval by the question (issue 34).
--
-- The prompt's candidates are read in an order that depends on the entries
-- alone, not on when or in which order they were loaded: priority, then
-- title (byte order, as the engine's ranking breaks ties), then the
-- content's hash, so that two loads of one knowledge base give one prompt.
-- updated_at DESC let the newest 200 of a larger tenant in and left ties
-- within one bulk request to a random id.
CREATE INDEX corpus_prompt_order ON corpus_entries
    (tenant_id, priority DESC, title COLLATE "C", md5(content), id) WHERE is_active;

-- A tenant's lexicon: every word (lexeme) of its active entries' search
-- documents and how many entries hold it, rebuilt in the background when
-- the tenant's configuration version moves (jobs.CorpusLexiconScanWorker).
-- The question search reads it to match on a question's telling words and
-- only score the common ones (a word in thousands of entries made it rank
-- them all), and to read a word no entry uses as its nearest one (a typo,
-- through the trigram index).
CREATE TABLE corpus_lexicon (
    tenant_id uuid    NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    lexeme    text    NOT NULL,
    ndoc      integer NOT NULL,
    PRIMARY KEY (tenant_id, lexeme)
);
CREATE INDEX corpus_lexicon_trgm ON corpus_lexicon USING gin (tenant_id, lexeme gin_trgm_ops);

-- Which configuration version the tenant's lexicon was built at, and over
-- how many entries.
CREATE TABLE corpus_lexicon_state (
    tenant_id      uuid        PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
    config_version bigint      NOT NULL,
    entries        integer     NOT NULL,
    built_at       timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE corpus_lexicon_state;
DROP TABLE corpus_lexicon;
DROP INDEX corpus_prompt_order;
