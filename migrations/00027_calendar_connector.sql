-- +goose Up
-- A tenant's calendar connector (CalDAV): where its calendar is, who signs
-- in, and when meetings may be booked. The password (or app password) is
-- sealed with the service's box like the tenant's other secrets and never
-- shown again. calendar_url is the calendar collection used, chosen by the
-- owner or discovered when the connector is saved. office_hours maps a
-- weekday (monday..sunday) to {"start":"HH:MM","end":"HH:MM"} in the
-- tenant's time zone; a day not listed is closed.
CREATE TABLE calendar_connectors (
    tenant_id     uuid PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
    server_url    text NOT NULL CHECK (char_length(server_url) BETWEEN 1 AND 500),
    username      text NOT NULL CHECK (char_length(username) BETWEEN 1 AND 200),
    password      bytea NOT NULL,
    calendar_url  text NOT NULL CHECK (char_length(calendar_url) BETWEEN 1 AND 1000),
    calendar_name text NOT NULL DEFAULT '',
    office_hours  jsonb NOT NULL DEFAULT '{}',
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE calendar_connectors;
