-- +goose Up
-- The Idempotency-Key of the management API's creates (issue 42): a create
-- sent again with the same key by the same credential of a tenant answers
-- the first answer again and writes nothing twice. One row per tenant,
-- credential (scope: "token:<id>" for an API token, "oauth:<client id>"
-- for an OAuth client's access tokens) and key: the request's fingerprint
-- (SHA-256 of its method, path and body; the same key with another
-- fingerprint is refused), its state (running while the first request is
-- answered, done once its answer is kept), and the answer kept (status,
-- the headers replayed, the body sealed with the secret box: a webhook's
-- creation answers its signing secret; id is the key of `parley secret
-- rotate`, db/sealed). Answers of 500 and above are not kept:
-- the row is deleted and a retry runs again. Rows live 24 hours: a key
-- older than that is claimed afresh, and each claim deletes a few of the
-- tenant's expired rows (db/idempotency), so no job is needed. The chat's
-- keys live with its messages (migration 00054). A tenant's deletion takes
-- its rows.
CREATE TABLE idempotency_keys (
    id          uuid        NOT NULL DEFAULT gen_random_uuid() UNIQUE,
    tenant_id   uuid        NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    scope       text        NOT NULL CHECK (char_length(scope) BETWEEN 1 AND 300),
    key         text        NOT NULL CHECK (char_length(key) BETWEEN 1 AND 255),
    fingerprint bytea       NOT NULL CHECK (length(fingerprint) = 32),
    state       text        NOT NULL CHECK (state IN ('running', 'done')),
    status      int         CHECK (status BETWEEN 100 AND 499),
    headers     jsonb,
    body        bytea,
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, scope, key),
    CHECK ((state = 'done') = (status IS NOT NULL))
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (tenant_id, created_at);

-- +goose Down
DROP TABLE idempotency_keys;
