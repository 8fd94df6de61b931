-- +goose Up
-- show_sources: the widget shows under an answer the knowledge-base entries
-- it cites that have a source address, as links (issue 38). On by default.
ALTER TABLE tenants ADD COLUMN show_sources boolean NOT NULL DEFAULT true;

-- +goose Down
ALTER TABLE tenants DROP COLUMN show_sources;
