-- +goose Up
-- A tenant's synonyms (issue 34): groups of words or phrases its visitors
-- use for the same thing ("bike, bicycle, cycle"; "opening hours, when are
-- you open"). A question holding one term of a group is searched and ranked
-- as if it held the others too. They are part of the tenant's
-- configuration: a change moves its config_version (migration 00030).
CREATE TABLE corpus_synonyms (
    id         uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id  uuid        NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    terms      text[]      NOT NULL CHECK (cardinality(terms) BETWEEN 2 AND 20),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX corpus_synonyms_tenant ON corpus_synonyms (tenant_id, created_at, id);

CREATE TRIGGER corpus_synonyms_config_ins AFTER INSERT ON corpus_synonyms REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION config_rows_changed();
CREATE TRIGGER corpus_synonyms_config_upd AFTER UPDATE ON corpus_synonyms REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION config_rows_changed();
CREATE TRIGGER corpus_synonyms_config_del AFTER DELETE ON corpus_synonyms REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION config_rows_changed();

-- +goose Down
DROP TABLE corpus_synonyms;
