-- +goose NO TRANSACTION
-- +goose Up
-- A turn updates its conversation's row twice (the visitor's message, then
-- the answer: message_count, last_message_at, updated_at, the resolution's
-- marks). PostgreSQL writes such an update in place on the row's page, a
-- heap-only tuple that touches none of the table's eight indexes, only when
-- no indexed column changes and the page has room. last_message_at was a
-- key of the inbox's partial index (migration 00039), so every update of
-- every conversation wrote a new entry in each of the eight indexes
-- (BENCHMARKS.md, issue 41). The inbox's queries read the few conversations
-- waiting for a person or held by one and sort them themselves (ORDER BY
-- status, then last_message_at), so the index needs only the tenant; and
-- the table keeps a fifth of each page free for the updates (fillfactor
-- 80, for the pages written from now on). Built concurrently, the new index
-- first, so that an upgrade blocks no turn and the inbox is never without
-- one.
CREATE INDEX CONCURRENTLY IF NOT EXISTS conversations_attention
    ON conversations (tenant_id) WHERE status IN ('ESCALATED', 'HUMAN');
DROP INDEX CONCURRENTLY IF EXISTS conversations_tenant_attention;
ALTER TABLE conversations SET (fillfactor = 80);

-- +goose Down
CREATE INDEX CONCURRENTLY IF NOT EXISTS conversations_tenant_attention
    ON conversations (tenant_id, last_message_at DESC) WHERE status IN ('ESCALATED', 'HUMAN');
DROP INDEX CONCURRENTLY IF EXISTS conversations_attention;
ALTER TABLE conversations RESET (fillfactor);
