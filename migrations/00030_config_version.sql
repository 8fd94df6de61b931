-- +goose Up
-- A tenant's configuration version: what the chat's cached reads are
-- checked against (db.ChatTenantAndSegment). Every committed change to what
-- the chat reads of a tenant before its model is called (the tenant row, its
-- segments, corpus entries, tools, products and connectors) gives it a new,
-- higher one, by the triggers below, so that an instance that kept those
-- reads can tell, from one column read in the rate limit's statement every
-- message runs anyway, whether they are still what the database holds.
--
-- The versions come from one sequence, so that no two tenants ever share
-- one: a slug taken over by another tenant (the first deleted, or renamed)
-- is never found current with what an instance kept of the first.
--
-- The tenant's own row: any update but the widget's sighting (written at
-- most once an hour by widget loads, and read by no chat).
CREATE SEQUENCE tenant_config_version;
ALTER TABLE tenants ADD COLUMN config_version bigint NOT NULL DEFAULT nextval('tenant_config_version');

-- +goose StatementBegin
CREATE FUNCTION tenants_config_version() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    o tenants := OLD;
    n tenants := NEW;
BEGIN
    o.widget_seen_at := NULL; o.widget_seen_origin := NULL; o.config_version := 0;
    n.widget_seen_at := NULL; n.widget_seen_origin := NULL; n.config_version := 0;
    IF n IS DISTINCT FROM o THEN
        NEW.config_version := nextval('tenant_config_version');
    END IF;
    RETURN NEW;
END $$;
-- +goose StatementEnd

CREATE TRIGGER tenants_config_version BEFORE UPDATE ON tenants
    FOR EACH ROW EXECUTE FUNCTION tenants_config_version();

-- The tables beside it: one update of the tenants concerned per statement
-- (transition tables), so that a bulk import of 50,000 corpus entries
-- costs one update, not 50,000.
-- +goose StatementBegin
CREATE FUNCTION config_rows_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE tenants SET config_version = nextval('tenant_config_version')
        WHERE id IN (SELECT DISTINCT tenant_id FROM new_rows);
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE tenants SET config_version = nextval('tenant_config_version')
        WHERE id IN (SELECT DISTINCT tenant_id FROM old_rows);
    ELSE
        UPDATE tenants SET config_version = nextval('tenant_config_version')
        WHERE id IN (SELECT tenant_id FROM new_rows UNION SELECT tenant_id FROM old_rows);
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['segments', 'corpus_entries', 'tools', 'products', 'calendar_connectors', 'payment_connectors'] LOOP
        EXECUTE format('CREATE TRIGGER %1$s_config_ins AFTER INSERT ON %1$I REFERENCING NEW TABLE AS new_rows
            FOR EACH STATEMENT EXECUTE FUNCTION config_rows_changed()', t);
        EXECUTE format('CREATE TRIGGER %1$s_config_upd AFTER UPDATE ON %1$I REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
            FOR EACH STATEMENT EXECUTE FUNCTION config_rows_changed()', t);
        EXECUTE format('CREATE TRIGGER %1$s_config_del AFTER DELETE ON %1$I REFERENCING OLD TABLE AS old_rows
            FOR EACH STATEMENT EXECUTE FUNCTION config_rows_changed()', t);
    END LOOP;
END $$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['segments', 'corpus_entries', 'tools', 'products', 'calendar_connectors', 'payment_connectors'] LOOP
        EXECUTE format('DROP TRIGGER %1$s_config_ins ON %1$I', t);
        EXECUTE format('DROP TRIGGER %1$s_config_upd ON %1$I', t);
        EXECUTE format('DROP TRIGGER %1$s_config_del ON %1$I', t);
    END LOOP;
END $$;
-- +goose StatementEnd
DROP FUNCTION config_rows_changed();
DROP TRIGGER tenants_config_version ON tenants;
DROP FUNCTION tenants_config_version();
ALTER TABLE tenants DROP COLUMN config_version;
DROP SEQUENCE tenant_config_version;
