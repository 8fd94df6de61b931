-- +goose Up
-- llm_webhook_url is the tenant's own reply endpoint: when set, it answers
-- chat messages instead of the managed model. Adding a nullable column
-- without a default only touches the catalog: no table rewrite, no long lock.
ALTER TABLE tenants ADD COLUMN llm_webhook_url text;
