-- +goose Up
-- When a person can answer a visitor who asks for one, and how long the
-- conversation waits (issue 36, "Nobody there"):
--   human_hours         {"mode":"always"}: a person may answer at any hour
--                       (the default, as before); {"mode":"calendar"}: the
--                       calendar connector's office hours; {"mode":"weekly",
--                       "days":{"monday":{"start":"09:00","end":"17:00"},...}}:
--                       hours of their own. Both in the tenant's time zone.
--                       Outside them, asking for a person escalates nothing:
--                       the visitor is told and offered the lead form.
--   human_wait_seconds  how long an escalated conversation waits for a person
--                       before it returns to the assistant, the visitor told
--                       and the tenant's people emailed
--   human_idle_seconds  how long a taken conversation may go without the
--                       person's reply before it returns to the assistant
-- A change moves config_version (the tenants trigger), as every column does.
ALTER TABLE tenants
    ADD COLUMN human_hours        jsonb   NOT NULL DEFAULT '{"mode":"always"}'
        CHECK (human_hours->>'mode' IN ('always', 'calendar', 'weekly')),
    ADD COLUMN human_wait_seconds integer NOT NULL DEFAULT 180 CHECK (human_wait_seconds BETWEEN 30 AND 3600),
    ADD COLUMN human_idle_seconds integer NOT NULL DEFAULT 600 CHECK (human_idle_seconds BETWEEN 60 AND 86400);

-- +goose Down
ALTER TABLE tenants DROP COLUMN human_hours, DROP COLUMN human_wait_seconds, DROP COLUMN human_idle_seconds;
