-- +goose NO TRANSACTION
-- +goose Up
-- idempotency_key: the Idempotency-Key a client sent with a visitor's
-- message (POST /chat/{slug}), so that the same message sent again after a
-- dropped connection or a 503 is answered once: replayed when its answer is
-- stored, answered now when it is not, never stored twice. Unique within a
-- conversation; NULL for messages sent without one (the index holds only
-- keyed messages, so it costs nothing to the others). Built concurrently: an
-- upgrade does not block the messages table while instances run.
ALTER TABLE messages ADD COLUMN IF NOT EXISTS idempotency_key text;
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS messages_idempotency_key
    ON messages (conversation_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS messages_idempotency_key;
ALTER TABLE messages DROP COLUMN IF EXISTS idempotency_key;
