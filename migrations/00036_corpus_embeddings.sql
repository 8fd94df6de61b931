-- +goose Up
-- Meaning, when an embedding endpoint is configured (issue 34,
-- PARLEY_EMBEDDINGS_*): each corpus entry's vector from the operator's
-- OpenAI-compatible /embeddings endpoint, written by the River job
-- corpus_embed (jobs/embed.go) and read by the turn for the prompt's
-- candidates only (db.CorpusVectors).
--
-- model names the model (and its dimensions, when set) the vector is of:
-- a vector of another model counts as missing. text_hash is the SHA-256 of
-- the text embedded (title, summary and content a line apart:
-- parley.EmbeddingText), so that a changed entry is re-embedded and an
-- unchanged one never is. The vector is little-endian float32 bytes, unit
-- length: a turn reads up to 220 of them (1,536 dimensions: 1.3 MB), and
-- bytea arrives as one copy where real[] is decoded element by element.
-- tenant_id is the entry's, copied at each write from the entry row
-- itself, so that every read filters by tenant as elsewhere.
--
-- A new table: nothing is locked but it.
CREATE TABLE corpus_embeddings (
    entry_id    uuid        PRIMARY KEY REFERENCES corpus_entries (id) ON DELETE CASCADE,
    tenant_id   uuid        NOT NULL,
    model       text        NOT NULL,
    text_hash   bytea       NOT NULL,
    embedding   bytea       NOT NULL,
    embedded_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE corpus_embeddings;
