-- +goose Up
-- password_resets are the dashboard's emailed password-reset links. Only
-- the SHA-256 of each link's token is kept, so that reading the table gives
-- no usable link. A link is used once: a reset marks its row, and every
-- other unused row of the user's, used. Rows are deleted a week after they
-- expire, so that an old link is still recognised as expired meanwhile.
CREATE TABLE password_resets (
    token_hash bytea PRIMARY KEY,
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz
);
CREATE INDEX password_resets_user ON password_resets (user_id);
CREATE INDEX password_resets_expiry ON password_resets (expires_at);

-- +goose Down
DROP TABLE password_resets;
