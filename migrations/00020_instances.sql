-- +goose Up
-- An instance is one running server process. It adds its row when it starts,
-- sets heartbeat_at every few seconds while it runs, and deletes the row when
-- it shuts down cleanly. A session lease names the instance whose turn holds
-- it: once that instance's heartbeat is older than its stale_after (the
-- process died: kill -9, a lost host), or its row is gone, the lease is free
-- at once instead of when busy_until passes. Times are the database's, so
-- the instances' clocks need not agree.
CREATE TABLE instances (
    id           uuid PRIMARY KEY,
    started_at   timestamptz NOT NULL DEFAULT now(),
    heartbeat_at timestamptz NOT NULL DEFAULT now(),
    stale_after  interval NOT NULL CHECK (stale_after > interval '0')
);

-- NULL: a holder that runs under no instance (the engine's tests), whose
-- lease busy_until alone bounds.
ALTER TABLE session_leases ADD COLUMN instance_id uuid;

-- +goose Down
ALTER TABLE session_leases DROP COLUMN instance_id;
DROP TABLE instances;
