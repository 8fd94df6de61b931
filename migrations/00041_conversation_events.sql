-- +goose NO TRANSACTION
-- +goose Up
-- A conversation's takeover is sent as webhooks too (issue 36): the events
-- conversation.escalated (it waits for a person), conversation.taken (a
-- person holds it), conversation.closed, conversation.handed_back (the
-- assistant answers it again) and message.created (a person's message, or a
-- visitor's while a person holds or awaits the conversation). Such an event
-- names its conversation in conversation_id, as a submission's names its
-- submission; the pair (conversation_id, tenant_id) refers to the
-- conversation's, so an event cannot be filed under another tenant than its
-- conversation's. Its payload holds what was said: the event, and so its
-- deliveries, go with the conversation.
--
-- Adding a nullable column without a default does not rewrite events (a
-- brief exclusive lock). The foreign key and the type check are added NOT
-- VALID (a brief lock, no scan), then validated apart, which scans events
-- under a lock that lets reads and writes go on; the index is built
-- concurrently. Hence no transaction.
ALTER TABLE events ADD COLUMN conversation_id uuid;
ALTER TABLE events ADD CONSTRAINT events_conversation_fkey FOREIGN KEY (conversation_id, tenant_id)
    REFERENCES conversations (id, tenant_id) ON DELETE CASCADE NOT VALID;
ALTER TABLE events VALIDATE CONSTRAINT events_conversation_fkey;
ALTER TABLE events DROP CONSTRAINT events_type_check,
    ADD CONSTRAINT events_type_check CHECK (type IN ('submission.created', 'submission.updated', 'webhook.test',
        'conversation.escalated', 'conversation.taken', 'conversation.closed', 'conversation.handed_back',
        'message.created')) NOT VALID;
ALTER TABLE events VALIDATE CONSTRAINT events_type_check;
-- A conversation's deletion finds its events by this index.
CREATE INDEX CONCURRENTLY IF NOT EXISTS events_conversation ON events (conversation_id) WHERE conversation_id IS NOT NULL;

-- +goose Down
DELETE FROM events WHERE conversation_id IS NOT NULL OR type NOT IN ('submission.created', 'submission.updated', 'webhook.test');
DROP INDEX CONCURRENTLY IF EXISTS events_conversation;
ALTER TABLE events DROP COLUMN conversation_id;
ALTER TABLE events DROP CONSTRAINT events_type_check,
    ADD CONSTRAINT events_type_check CHECK (type IN ('submission.created', 'submission.updated', 'webhook.test'));
