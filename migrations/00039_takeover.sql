-- +goose Up
-- A person can take a conversation over (issue 36). The states:
--   BOT        the assistant answers (the start)
--   ESCALATED  the assistant asked for a person; nobody has taken it yet
--   HUMAN      a person holds it: the visitor's messages wait for them and
--              the model is not called
--   CLOSED     ended by a person; the visitor's next message reopens it to BOT
-- escalated_at is when it was last escalated (the wait for a person counts
-- from it); the holder of a HUMAN conversation is a dashboard user
-- (assigned_user_id) or, taken through the API, a person the integrator
-- names: assignee is the name the visitor is shown, kept when the user goes.
-- A person's messages have the role 'human' and their author's name.
ALTER DOMAIN conversation_status DROP CONSTRAINT conversation_status_check;
ALTER DOMAIN conversation_status ADD CONSTRAINT conversation_status_check
    CHECK (VALUE IN ('BOT', 'ESCALATED', 'HUMAN', 'CLOSED'));
ALTER DOMAIN message_role DROP CONSTRAINT message_role_check;
ALTER DOMAIN message_role ADD CONSTRAINT message_role_check
    CHECK (VALUE IN ('user', 'assistant', 'human'));

-- A person's name, as the visitor is shown it: a domain, as every rule on
-- these two tables (00032).
CREATE DOMAIN person_name AS text CHECK (char_length(VALUE) BETWEEN 1 AND 100);
ALTER TABLE conversations
    ADD COLUMN escalated_at     timestamptz,
    ADD COLUMN taken_at         timestamptz,
    ADD COLUMN assigned_user_id uuid REFERENCES users (id) ON DELETE SET NULL,
    ADD COLUMN assignee         person_name;
ALTER TABLE messages
    ADD COLUMN author_name person_name;

-- A person's messages, few among all: the stats' takeovers and first
-- replies read them without scanning every conversation's messages.
CREATE INDEX messages_human ON messages (conversation_id, seq) WHERE role = 'human';

-- The inbox's top: the tenant's conversations waiting for or held by a person.
CREATE INDEX conversations_tenant_attention ON conversations (tenant_id, last_message_at DESC)
    WHERE status IN ('ESCALATED', 'HUMAN');

-- +goose Down
DROP INDEX conversations_tenant_attention;
DROP INDEX messages_human;
ALTER TABLE messages DROP COLUMN author_name;
ALTER TABLE conversations
    DROP COLUMN escalated_at,
    DROP COLUMN taken_at,
    DROP COLUMN assigned_user_id,
    DROP COLUMN assignee;
DROP DOMAIN person_name;
DELETE FROM messages WHERE role = 'human';
UPDATE conversations SET status = 'BOT' WHERE status IN ('HUMAN', 'CLOSED');
ALTER DOMAIN message_role DROP CONSTRAINT message_role_check;
ALTER DOMAIN message_role ADD CONSTRAINT message_role_check CHECK (VALUE IN ('user', 'assistant'));
ALTER DOMAIN conversation_status DROP CONSTRAINT conversation_status_check;
ALTER DOMAIN conversation_status ADD CONSTRAINT conversation_status_check CHECK (VALUE IN ('BOT', 'ESCALATED'));
