-- +goose Up
-- Knowledge gaps (issue 40): the visitors' questions the assistant could not
-- answer well, grouped by their wording. What a turn knows of its answer is
-- stored with the answer, in the turn's own write (no statement more):
--   gap_signals   a bit set: 1 no knowledge-base entry shared a word with the
--                 question, 2 the answer said it did not know, 4 the visitor
--                 asked for a person in the next turn (set by that turn's
--                 escalation, in its transaction); a down vote is the
--                 feedback column's.
--   question_key  the question's wording as a key: its meaningful words,
--                 lower case, stop words left out, sorted and distinct
--                 (agent/rank.QuestionKey); NULL for answers stored before.
-- A column with a constant default rewrites nothing (PostgreSQL 11+).
-- The rules of the turn's columns are domains (00032).
CREATE DOMAIN wording_key AS text CHECK (char_length(VALUE) <= 200);
ALTER TABLE messages
    ADD COLUMN gap_signals  smallint NOT NULL DEFAULT 0,
    ADD COLUMN question_key wording_key;

-- The listing reads only the answers with a sign, few among all: by time
-- for the groups, by key for a group's latest questions (and for a state
-- set on a key).
-- The first covers what the groups read of an answer (an index-only scan).
CREATE INDEX messages_knowledge_gaps ON messages (tenant_id, created_at DESC)
    INCLUDE (question_key, conversation_id, gap_signals, feedback)
    WHERE role = 'assistant' AND question_key IS NOT NULL AND (gap_signals <> 0 OR feedback = -1);
CREATE INDEX messages_knowledge_gap_keys ON messages (tenant_id, question_key, created_at DESC)
    WHERE role = 'assistant' AND question_key IS NOT NULL AND (gap_signals <> 0 OR feedback = -1);

-- What the owner did about a group: answered (with the knowledge-base entry
-- that answers it, while it exists) or dismissed. A group seen again after
-- its state was set still shows its state; the owner can reopen it.
CREATE TABLE knowledge_gap_states (
    tenant_id  uuid        NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    key        text        NOT NULL CHECK (char_length(key) BETWEEN 1 AND 200),
    state      text        NOT NULL CHECK (state IN ('answered', 'dismissed')),
    entry_id   uuid        REFERENCES corpus_entries (id) ON DELETE SET NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, key)
);

-- +goose Down
DROP TABLE knowledge_gap_states;
DROP INDEX messages_knowledge_gap_keys, messages_knowledge_gaps;
ALTER TABLE messages DROP COLUMN gap_signals, DROP COLUMN question_key;
DROP DOMAIN wording_key;
