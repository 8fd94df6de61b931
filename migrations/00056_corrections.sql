-- +goose Up
-- Corrections (issue 40): an owner's "Improve this answer" makes a
-- knowledge-base entry of the right answer, titled with the visitor's
-- question, and this table links the entry to that question, so that a
-- second correction of the same question (the same message, or the same
-- words asked again elsewhere) updates the entry instead of adding another.
--
-- One row per entry, scoped by tenant. Deleting the entry deletes its link
-- (CASCADE): the next correction of the question makes a new entry. The
-- question's text is kept here as asked, so that the link still reads after
-- its conversation is deleted or its visitor erased: the messages' links then
-- become null (SET NULL), the entry stays, as the owner wrote it. A new
-- table: no lock on a large one.
CREATE TABLE corrections (
    entry_id            uuid PRIMARY KEY REFERENCES corpus_entries (id) ON DELETE CASCADE,
    tenant_id           uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    -- question is the visitor's message as asked; question_key its words
    -- folded (lower case, spaces collapsed) for the "same question" test.
    question            text NOT NULL CHECK (question <> ''),
    question_key        text NOT NULL CHECK (question_key <> ''),
    question_message_id uuid REFERENCES messages (id) ON DELETE SET NULL,
    answer_message_id   uuid REFERENCES messages (id) ON DELETE SET NULL,
    conversation_id     uuid REFERENCES conversations (id) ON DELETE SET NULL,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now()
);
-- md5: a question may be longer than a btree entry allows.
CREATE UNIQUE INDEX corrections_question ON corrections (tenant_id, md5(question_key));
CREATE INDEX corrections_question_message ON corrections (question_message_id) WHERE question_message_id IS NOT NULL;
CREATE INDEX corrections_answer_message ON corrections (answer_message_id) WHERE answer_message_id IS NOT NULL;
CREATE INDEX corrections_conversation ON corrections (conversation_id) WHERE conversation_id IS NOT NULL;

-- +goose Down
DROP TABLE corrections;
