-- +goose NO TRANSACTION
-- +goose Up
-- Indexes the conversations list needs at 100,000 conversations and
-- 1,000,000 messages in a tenant (BENCHMARKS.md, "Conversations list, stats
-- and export"). Built CONCURRENTLY, hence no transaction: reads and writes go
-- on while they build (about 8 s for a million messages on 2 cores).
--
-- Channel and status filters, alone or together, with or without a window:
-- equality on the leading columns, then the list's own order, so a page is
-- the first rows of one index range (voice + escalated over 90 days went
-- from 45 ms to 3 ms). Test-chat conversations are never listed.
CREATE INDEX CONCURRENTLY IF NOT EXISTS conversations_tenant_channel_status
    ON conversations (tenant_id, channel, status, created_at DESC, id DESC) WHERE NOT is_test;
-- The list's search (content ILIKE '%words%'): a word found in few messages
-- is read off the trigrams instead of a scan of every message of the tenant
-- (235 ms to 2 ms). Each stored message adds its trigrams to GIN's pending
-- list (fastupdate), merged in bulk later.
CREATE INDEX CONCURRENTLY IF NOT EXISTS messages_content_trgm
    ON messages USING gin (tenant_id, content gin_trgm_ops);

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS messages_content_trgm;
DROP INDEX CONCURRENTLY IF EXISTS conversations_tenant_channel_status;
