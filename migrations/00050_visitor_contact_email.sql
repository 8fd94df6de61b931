-- +goose Up
-- The email a visitor gave in a lead form (issue 38): the visitor is then
-- known to the team, not anonymous. It is kept apart from visitors.email,
-- which names a visitor's identity (unique in the tenant, matched by the
-- email code's verification): an address typed into a form proves nothing,
-- and must not let the browser that typed it become the visitor a later
-- verification of that address finds.
ALTER TABLE visitors ADD COLUMN contact_email text CHECK (char_length(contact_email) <= 254);

-- +goose Down
ALTER TABLE visitors DROP COLUMN contact_email;
