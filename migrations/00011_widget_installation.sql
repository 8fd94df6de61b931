-- +goose Up
-- widget_seen_at and widget_seen_origin record the last time (at most once
-- an hour) the widget loaded its settings on a page of another origin than
-- Parley's that passed the tenant's gates: the dashboard's "installation
-- detected".
ALTER TABLE tenants ADD COLUMN widget_seen_at timestamptz, ADD COLUMN widget_seen_origin text;

-- +goose Down
ALTER TABLE tenants DROP COLUMN widget_seen_at, DROP COLUMN widget_seen_origin;
