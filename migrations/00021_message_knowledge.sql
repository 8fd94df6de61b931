-- +goose Up
-- The knowledge-base entries each answer's prompt held, as they stood then
-- ([{id, title, summarized}]), so a transcript can show what an answer drew
-- on. NULL for a visitor's message and for answers stored before this.
-- Adding a nullable column without a default rewrites nothing.
ALTER TABLE messages ADD COLUMN knowledge jsonb;

-- +goose Down
ALTER TABLE messages DROP COLUMN knowledge;
