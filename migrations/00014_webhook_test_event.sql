-- +goose NO TRANSACTION
-- +goose Up
-- webhook.test is the event "Send test event" on the dashboard records: one
-- delivery to one endpoint, sent and retried as any other, with no
-- submission. No endpoint subscribes to it. The check is replaced NOT VALID
-- (a brief exclusive lock, no scan), then validated apart, which scans events
-- under a lock that lets reads and writes go on; hence no transaction.
ALTER TABLE events DROP CONSTRAINT events_type_check,
    ADD CONSTRAINT events_type_check CHECK (type IN ('submission.created', 'submission.updated', 'webhook.test')) NOT VALID;
ALTER TABLE events VALIDATE CONSTRAINT events_type_check;

-- +goose Down
DELETE FROM events WHERE type = 'webhook.test';
ALTER TABLE events DROP CONSTRAINT events_type_check,
    ADD CONSTRAINT events_type_check CHECK (type IN ('submission.created', 'submission.updated'));
