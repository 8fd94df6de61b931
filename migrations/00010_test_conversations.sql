-- +goose Up
-- conversations.is_test marks the conversations an owner had with their own
-- bot from the dashboard's test chat: not counted against the monthly limit,
-- and told apart from visitors' conversations. Adding a column with a
-- constant default rewrites no row (PostgreSQL 11+): a brief exclusive lock
-- only, whatever the table's size.
ALTER TABLE conversations ADD COLUMN is_test boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE conversations DROP COLUMN is_test;
