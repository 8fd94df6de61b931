package db

import (
	"context"
	"fmt"
)

// Onboarding is how far a tenant got through the first steps the dashboard
// walks a new owner through.
type Onboarding struct {
	Persona   bool // the assistant has a name or background
	Knowledge bool // the knowledge base has an entry
	Tested    bool // the owner talked to the bot in the test chat
	Installed bool // the widget loaded on the tenant's site (WidgetSeen: not read here)
	Leads     bool // a lead form or a contact-form tool is on
}

// Done reports whether every step is done.
func (o Onboarding) Done() bool {
	return o.Persona && o.Knowledge && o.Tested && o.Installed && o.Leads
}

// TenantOnboarding reads the tenant's first steps in one query, all but
// Installed, which the caller knows from WidgetSeen.
func (d *DB) TenantOnboarding(ctx context.Context, tenantID string) (Onboarding, error) {
	var o Onboarding
	err := d.pool.QueryRow(ctx, `SELECT
		coalesce(btrim(t.bot_name), '') <> '' OR coalesce(btrim(t.bot_lore), '') <> '',
		EXISTS (SELECT 1 FROM corpus_entries WHERE tenant_id = t.id),
		EXISTS (SELECT 1 FROM conversations WHERE tenant_id = t.id AND is_test),
		EXISTS (SELECT 1 FROM segments WHERE tenant_id = t.id AND is_active AND (form_config->>'enabled')::boolean IS TRUE)
			OR EXISTS (SELECT 1 FROM tools WHERE tenant_id = t.id AND is_active AND type = 'SUBMIT_FORM')
		FROM tenants t WHERE t.id = $1`, tenantID).Scan(&o.Persona, &o.Knowledge, &o.Tested, &o.Leads)
	if err != nil {
		return Onboarding{}, fmt.Errorf("reading onboarding: %w", err)
	}
	return o, nil
}
