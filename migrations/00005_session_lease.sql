-- +goose Up
-- A session lease serializes the turns of one chat session without holding a
-- database connection or lock while the model answers: a turn takes the
-- lease (a row whose busy_until lies in the future) before storing its user
-- message and gives it back after storing the answer. busy_until bounds a
-- lease whose holder crashed.
CREATE TABLE session_leases (
    tenant_id   uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    session_id  text NOT NULL,
    holder      text NOT NULL,
    busy_until  timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, session_id)
);

-- +goose Down
DROP TABLE session_leases;
