-- +goose Up
-- conversation_usage counts the conversations each tenant started in each
-- calendar month (UTC): the monthly limit is checked and counted against it
-- in the statement that inserts the conversation, in O(1), instead of
-- counting the month's conversations under a per-tenant lock. A conversation
-- deleted later still counted: the limit is on conversations started.
CREATE TABLE conversation_usage (
    tenant_id   uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    month       date NOT NULL,
    count       integer NOT NULL CHECK (count >= 0),
    PRIMARY KEY (tenant_id, month)
);
INSERT INTO conversation_usage (tenant_id, month, count)
SELECT tenant_id, date_trunc('month', created_at AT TIME ZONE 'UTC')::date, count(*)
FROM conversations GROUP BY 1, 2;

-- +goose Down
DROP TABLE conversation_usage;
