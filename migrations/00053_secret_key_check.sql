-- +goose Up
-- secret_key_check holds one constant sealed with the secret box
-- (PARLEY_SECRET_KEY), so that a process can tell at once whether its key
-- opens this database's secrets: `parley serve` at start, `parley backup`
-- before it dumps, and `parley restore` before it writes anything. The row
-- is written by the first process that checks (after it opened an existing
-- secret, when there is one) and re-sealed by `parley secret rotate` with
-- every other secret.
CREATE TABLE secret_key_check (
    id         boolean PRIMARY KEY DEFAULT true CHECK (id),
    sealed     bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE secret_key_check;
