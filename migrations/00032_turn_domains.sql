-- +goose Up
-- The rules on the columns of conversations and messages move from the
-- tables' CHECK constraints to domains: the same rules, the same refusals
-- (SQLSTATE 23514), cheaper to apply. PostgreSQL reads a table's check
-- constraints from the catalog's text and plans them anew for every
-- statement that inserts into or updates the table, and it applies all of
-- them on every update, whatever the columns it sets; a domain's rules are
-- planned once per connection and applied when a value is assigned to the
-- column. A chat turn inserts a conversation and two messages and updates
-- the conversation: twelve check constraints prepared and run a first
-- message, about a sixteenth of PostgreSQL's CPU at c1 (BENCHMARKS.md,
-- issue 18, tenth pass). Keep rules on these two tables as domains.
--
-- The columns change type without a rewrite (a domain without constraints
-- over the same type), their indexes kept but for one that PostgreSQL
-- rebuilds because it has a predicate (conversations_tenant_channel_status);
-- then each domain's rule is added NOT VALID and validated: a scan of the
-- table, not a copy.
CREATE DOMAIN conversation_session_id AS text;
CREATE DOMAIN conversation_channel AS text;
CREATE DOMAIN conversation_status AS text;
CREATE DOMAIN conversation_visitor_type AS text;
CREATE DOMAIN visitor_verification_method AS text;
CREATE DOMAIN message_role AS text;
CREATE DOMAIN message_feedback AS smallint;

ALTER TABLE conversations
    DROP CONSTRAINT conversations_session_id_check,
    DROP CONSTRAINT conversations_channel_check,
    DROP CONSTRAINT conversations_status_check,
    DROP CONSTRAINT conversations_visitor_type_check,
    DROP CONSTRAINT conversations_verified_by_check,
    ALTER COLUMN session_id TYPE conversation_session_id,
    ALTER COLUMN channel TYPE conversation_channel,
    ALTER COLUMN status TYPE conversation_status,
    ALTER COLUMN visitor_type TYPE conversation_visitor_type,
    ALTER COLUMN verified_by TYPE visitor_verification_method;
ALTER TABLE messages
    DROP CONSTRAINT messages_role_check,
    DROP CONSTRAINT messages_feedback_check,
    ALTER COLUMN role TYPE message_role,
    ALTER COLUMN feedback TYPE message_feedback;

ALTER DOMAIN conversation_session_id ADD CONSTRAINT conversation_session_id_check
    CHECK (char_length(VALUE) BETWEEN 1 AND 100) NOT VALID;
ALTER DOMAIN conversation_channel ADD CONSTRAINT conversation_channel_check
    CHECK (VALUE IN ('web', 'agent', 'voice', 'api')) NOT VALID;
ALTER DOMAIN conversation_status ADD CONSTRAINT conversation_status_check
    CHECK (VALUE IN ('BOT', 'ESCALATED')) NOT VALID;
ALTER DOMAIN conversation_visitor_type ADD CONSTRAINT conversation_visitor_type_check
    CHECK (VALUE IN ('human', 'agent')) NOT VALID;
ALTER DOMAIN visitor_verification_method ADD CONSTRAINT visitor_verification_method_check
    CHECK (VALUE IN ('code', 'challenge')) NOT VALID;
ALTER DOMAIN message_role ADD CONSTRAINT message_role_check
    CHECK (VALUE IN ('user', 'assistant')) NOT VALID;
ALTER DOMAIN message_feedback ADD CONSTRAINT message_feedback_check
    CHECK (VALUE IN (-1, 1)) NOT VALID;

ALTER DOMAIN conversation_session_id VALIDATE CONSTRAINT conversation_session_id_check;
ALTER DOMAIN conversation_channel VALIDATE CONSTRAINT conversation_channel_check;
ALTER DOMAIN conversation_status VALIDATE CONSTRAINT conversation_status_check;
ALTER DOMAIN conversation_visitor_type VALIDATE CONSTRAINT conversation_visitor_type_check;
ALTER DOMAIN visitor_verification_method VALIDATE CONSTRAINT visitor_verification_method_check;
ALTER DOMAIN message_role VALIDATE CONSTRAINT message_role_check;
ALTER DOMAIN message_feedback VALIDATE CONSTRAINT message_feedback_check;

-- +goose Down
ALTER TABLE messages
    ALTER COLUMN role TYPE text,
    ALTER COLUMN feedback TYPE smallint,
    ADD CONSTRAINT messages_role_check CHECK (role IN ('user', 'assistant')),
    ADD CONSTRAINT messages_feedback_check CHECK (feedback IN (-1, 1));
ALTER TABLE conversations
    ALTER COLUMN session_id TYPE text,
    ALTER COLUMN channel TYPE text,
    ALTER COLUMN status TYPE text,
    ALTER COLUMN visitor_type TYPE text,
    ALTER COLUMN verified_by TYPE text,
    ADD CONSTRAINT conversations_session_id_check CHECK (char_length(session_id) BETWEEN 1 AND 100),
    ADD CONSTRAINT conversations_channel_check CHECK (channel IN ('web', 'agent', 'voice', 'api')),
    ADD CONSTRAINT conversations_status_check CHECK (status IN ('BOT', 'ESCALATED')),
    ADD CONSTRAINT conversations_visitor_type_check CHECK (visitor_type IN ('human', 'agent')),
    ADD CONSTRAINT conversations_verified_by_check CHECK (verified_by IN ('code', 'challenge'));
DROP DOMAIN conversation_session_id, conversation_channel, conversation_status, conversation_visitor_type,
    visitor_verification_method, message_role, message_feedback;
