-- +goose Up
-- webhook_deliveries.job_id is the River job of the delivery's current round
-- of attempts, so that a redelivery cancels a stale job through River's API
-- instead of searching river_job by its args. Adding a nullable column without
-- a default does not rewrite the table (a brief exclusive lock only); the
-- backfill touches deliveries that still have a job, at most the retention
-- period's. On a new database River's schema comes after this migration, and
-- there is nothing to backfill.
ALTER TABLE webhook_deliveries ADD COLUMN job_id bigint;

-- +goose StatementBegin
DO $$
BEGIN
    IF to_regclass('river_job') IS NOT NULL THEN
        UPDATE webhook_deliveries d SET job_id = j.id
        FROM (SELECT (args->>'deliveryId')::uuid AS delivery_id, max(id) AS id
              FROM river_job WHERE kind = 'webhook_delivery' GROUP BY 1) j
        WHERE d.id = j.delivery_id;
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
ALTER TABLE webhook_deliveries DROP COLUMN job_id;
