-- +goose Up
-- login_failures are the dashboard sign-in's throttle: one row per client
-- address ("addr:...") and per client address and account ("pair:...")
-- with the failures counted since the last quiet spell; each failure past
-- the free ones makes that key's next attempt wait longer. No row is ever
-- per account alone, so that nobody can lock an owner out. A row is
-- forgotten at expires_at (an hour after its last failure).
CREATE TABLE login_failures (
    key            text PRIMARY KEY,
    failures       integer NOT NULL,
    last_failed_at timestamptz NOT NULL,
    expires_at     timestamptz NOT NULL
);
CREATE INDEX login_failures_expires ON login_failures (expires_at);

-- Sessions are now stored under the SHA-256 of their token (the cookie
-- value), so that reading the table gives no usable cookie. Rows stored
-- under the plain token could no longer be found: they go, and owners
-- sign in again.
DELETE FROM sessions;

-- +goose Down
DROP TABLE login_failures;
DELETE FROM sessions;
