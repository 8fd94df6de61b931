-- +goose Up
-- Anonymous visitors: the widget keeps a random id of 128 bits in the host
-- page's storage and sends it with every message (chat's `anonymousId`),
-- the third step of the spec's visitor resolution after `X-Visitor-Id` and
-- the body's `visitorId`. Its visitor row holds only the id's SHA-256
-- (anonymous_key), unique within the tenant: another tenant's visitor with
-- the same id is another row, and the id itself is never stored.
--
-- When a verified identity (a visitor token, an email code) meets an
-- anonymous visitor, the anonymous row is linked to the verified visitor
-- (linked_visitor_id, linked_at) and its memory facts move to it; the row
-- stays, so the same id goes on naming the same anonymous visitor, now
-- without those facts.
ALTER TABLE visitors
    ADD COLUMN anonymous_key     bytea CHECK (length(anonymous_key) = 32),
    ADD COLUMN linked_visitor_id uuid REFERENCES visitors(id) ON DELETE SET NULL,
    ADD COLUMN linked_at         timestamptz;
CREATE UNIQUE INDEX visitors_anonymous_key ON visitors (tenant_id, anonymous_key) WHERE anonymous_key IS NOT NULL;
-- A verified visitor's deletion unlinks its anonymous visitors through it.
CREATE INDEX visitors_linked_visitor ON visitors (linked_visitor_id) WHERE linked_visitor_id IS NOT NULL;

-- +goose Down
DROP INDEX visitors_anonymous_key;
ALTER TABLE visitors DROP COLUMN anonymous_key, DROP COLUMN linked_visitor_id, DROP COLUMN linked_at;
