package db_test

import (
	"context"
	"crypto/rand"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/accounts"
	"github.com/parley/parley/db/business"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/db/visitors"
)

// configVersion reads the tenant's configuration version.
func configVersion(t *testing.T, store *db.DB, tenantID string) int64 {
	t.Helper()
	var v int64
	if err := store.Pool().QueryRow(context.Background(), `SELECT config_version FROM tenants WHERE id = $1`, tenantID).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// Every committed change to what a chat reads of its tenant before the
// model is called moves the tenant's configuration version, and only its
// own: the tenant row (but the widget's sighting), its segments, corpus,
// tools, products and connectors, whether inserted, updated or deleted.
func TestConfigVersionCountsChanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := dbtest.SetupPromptCorpus(t)
	other := dbtest.SetupPromptCorpus(t)
	id := f.Tenant.ID
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := f.Store.Pool().Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	changes := []struct {
		name string
		do   func()
	}{
		{"tenant row", func() { exec(`UPDATE tenants SET bot_name = 'Zed' WHERE id = $1`, id) }},
		{"segment inserted", func() { f.Segment(t, "billing") }},
		{"segment updated", func() { exec(`UPDATE segments SET system_prompt = 'new' WHERE id = $1`, f.Sales) }},
		{"corpus inserted", func() { f.Add(t, id, dbtest.PromptEntry{Title: "new entry"}) }},
		{"corpus updated", func() { exec(`UPDATE corpus_entries SET content = 'changed' WHERE tenant_id = $1`, id) }},
		{"corpus deleted", func() { exec(`DELETE FROM corpus_entries WHERE tenant_id = $1`, id) }},
		{"tool inserted", func() {
			exec(`INSERT INTO tools (tenant_id, name, description, type) VALUES ($1, 'Form', 'A form', 'SUBMIT_FORM')`, id)
		}},
		{"tool updated", func() { exec(`UPDATE tools SET is_active = false WHERE tenant_id = $1`, id) }},
		{"tool deleted", func() { exec(`DELETE FROM tools WHERE tenant_id = $1`, id) }},
		{"product inserted", func() {
			if _, _, err := f.Store.UpsertProduct(ctx, id, business.ProductWrite{ExternalID: parley.Some("sku-1"), Name: parley.Some("Widget"),
				IsActive: parley.Some(true)}); err != nil {
				t.Fatal(err)
			}
		}},
		{"product deleted", func() { exec(`DELETE FROM products WHERE tenant_id = $1`, id) }},
	}
	for _, c := range changes {
		before, theirs := configVersion(t, f.Store, id), configVersion(t, f.Store, other.Tenant.ID)
		c.do()
		if after := configVersion(t, f.Store, id); after <= before {
			t.Errorf("%s: version %d then %d, want it to move", c.name, before, after)
		}
		if got := configVersion(t, f.Store, other.Tenant.ID); got != theirs {
			t.Errorf("%s: another tenant's version moved from %d to %d", c.name, theirs, got)
		}
	}

	// A statement that writes nothing, and the widget's sighting, leave it.
	before := configVersion(t, f.Store, id)
	exec(`UPDATE corpus_entries SET content = 'x' WHERE tenant_id = $1 AND false`, id)
	if err := f.Store.NoteWidgetSeen(ctx, id, "https://example.com", time.Now()); err != nil {
		t.Fatal(err)
	}
	if after := configVersion(t, f.Store, id); after != before {
		t.Errorf("no change and a widget sighting: version %d then %d, want it unchanged", before, after)
	}
	var seen *time.Time
	if err := f.Store.Pool().QueryRow(ctx, `SELECT widget_seen_at FROM tenants WHERE id = $1`, id).Scan(&seen); err != nil || seen == nil {
		t.Fatalf("the sighting was not recorded (%v, %v): the case checks nothing", seen, err)
	}
}

// The chat's reads are served from the cache, which a change leaves as it
// was; the session lease reads the version that tells the turn so, and a
// fresh read renews the cache. The visitor's memory is never cached.
func TestChatConfigCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := dbtest.SetupPromptCorpus(t)
	id, slug := f.Tenant.ID, f.Tenant.Slug
	f.Add(t, id, dbtest.PromptEntry{Title: "first"})

	ten, seg, cached, err := f.Store.ChatTenantAndSegment(ctx, slug, "sales", false)
	if err != nil || seg == nil || seg.ID != f.Sales || cached {
		t.Fatalf("first read: %v %v %v, want the segment read, not cached", seg, cached, err)
	}
	data, err := f.Store.ChatPromptData(ctx, id, f.Sales, "", "", 10, 0)
	if err != nil || len(data.Corpus) != 1 {
		t.Fatalf("first prompt read: %+v %v", data, err)
	}
	if data.ConfigVersion != ten.ConfigVersion {
		t.Errorf("prompt data at version %d, tenant at %d", data.ConfigVersion, ten.ConfigVersion)
	}
	// The rate limit's statement reads the tenant's version (by slug).
	current := func() int64 {
		t.Helper()
		_, _, v, err := f.Store.HitWithinForTenant(ctx, []db.Window{{Key: "cache:" + slug, Length: time.Minute, Limit: 1000}}, time.Now(), slug)
		if err != nil || v == nil {
			t.Fatalf("version with the counters: %v %v", v, err)
		}
		return *v
	}
	if v := current(); v != ten.ConfigVersion {
		t.Errorf("the counters' statement reads version %d, the tenant was read at %d", v, ten.ConfigVersion)
	}
	if _, _, v, err := f.Store.HitWithinForTenant(ctx, []db.Window{{Key: "cache:none", Length: time.Minute, Limit: 1000}}, time.Now(), "no-such-tenant"); err != nil || v != nil {
		t.Errorf("no such tenant: version %v, %v; want none", v, err)
	}

	// A change: the cache still answers the old configuration, and the
	// counters' version says it is stale.
	if _, err := f.Store.Pool().Exec(ctx, `UPDATE tenants SET bot_name = 'Zephyrine' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	f.Add(t, id, dbtest.PromptEntry{Title: "second"})
	old, _, cached, err := f.Store.ChatTenantAndSegment(ctx, slug, "sales", false)
	if err != nil || !cached || botName(old) == "Zephyrine" || old.ConfigVersion != ten.ConfigVersion {
		t.Fatalf("cached read: cached %v, name %q version %d (%v), want the first read's", cached, botName(old), old.ConfigVersion, err)
	}
	if data, _ := f.Store.ChatPromptData(ctx, id, f.Sales, "", "", 10, 0); len(data.Corpus) != 1 {
		t.Errorf("cached prompt data: %d entries, want the first read's 1", len(data.Corpus))
	}
	now := current()
	if now <= ten.ConfigVersion {
		t.Fatalf("the counters read version %d after the change, want more than %d", now, ten.ConfigVersion)
	}

	// A fresh read sees it and renews the cache.
	fresh, _, _, err := f.Store.ChatTenantAndSegment(ctx, slug, "sales", true)
	if err != nil || botName(fresh) != "Zephyrine" || fresh.ConfigVersion != now {
		t.Fatalf("fresh read: name %q version %d (%v), want Zephyrine at %d", botName(fresh), fresh.ConfigVersion, err, now)
	}
	if again, _, _, _ := f.Store.ChatTenantAndSegment(ctx, slug, "sales", false); botName(again) != "Zephyrine" {
		t.Errorf("the cache after a fresh read: %q", botName(again))
	}
	if data, _ := f.Store.ChatPromptData(ctx, id, f.Sales, "", "", 10, now); len(data.Corpus) != 2 || data.ConfigVersion != now {
		t.Errorf("fresh prompt data: %d entries at version %d, want 2 at %d", len(data.Corpus), data.ConfigVersion, now)
	}
	if data, _ := f.Store.ChatPromptData(ctx, id, f.Sales, "", "", 10, 0); len(data.Corpus) != 2 {
		t.Errorf("the prompt cache after a fresh read: %d entries", len(data.Corpus))
	}

	// Memory is read each time, cache or not.
	v, err := f.Store.CreateVisitor(ctx, id, visitors.VisitorWrite{Email: parley.Some("cache@example.com")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Store.UpsertMemory(ctx, id, v.ID, "city", "Paris"); err != nil {
		t.Fatal(err)
	}
	data, err = f.Store.ChatPromptData(ctx, id, f.Sales, "", v.ID, 10, 0)
	if err != nil || len(data.Memory) != 1 || data.Memory[0].Value != "Paris" {
		t.Errorf("memory through the cache: %+v %v", data.Memory, err)
	}
	if data, _ := f.Store.ChatPromptData(ctx, id, f.Sales, "", "", 10, 0); len(data.Memory) != 0 {
		t.Errorf("another visitor's turn got memory: %+v", data.Memory)
	}

	// A slice the turn changes is its own.
	data.Corpus[0].Title = "changed by a turn"
	if again, _ := f.Store.ChatPromptData(ctx, id, f.Sales, "", "", 10, 0); again.Corpus[0].Title == "changed by a turn" {
		t.Error("a turn's change to its corpus reached the cache")
	}

	// Another tenant's slug is another entry.
	g := dbtest.SetupPromptCorpus(t)
	theirs, seg, _, err := f.Store.ChatTenantAndSegment(ctx, g.Tenant.Slug, "sales", false)
	if err != nil || theirs.ID != g.Tenant.ID || seg == nil || seg.ID != g.Sales {
		t.Errorf("another tenant through the same cache: %s %+v %v", theirs.ID, seg, err)
	}
}

func botName(t parley.Tenant) string {
	if t.BotName == nil {
		return ""
	}
	return *t.BotName
}

// Versions come from one sequence: no two tenants share one, so a slug
// another tenant takes over (the first deleted) is never found current with
// what the cache kept of the first.
func TestChatConfigSlugTakenOver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.New(t)
	first := dbtest.NewTenant(t, store)
	second := dbtest.NewTenant(t, store)
	if first.ConfigVersion == second.ConfigVersion {
		t.Fatalf("two new tenants share version %d", first.ConfigVersion)
	}
	kept, _, _, err := store.ChatTenantAndSegment(ctx, first.Slug, "", false)
	if err != nil || kept.ID != first.ID {
		t.Fatalf("first read: %s %v", kept.ID, err)
	}
	if _, err := store.Pool().Exec(ctx, `DELETE FROM tenants WHERE id = $1`, first.ID); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	taker, err := store.CreateTenant(ctx, db.NewTenant{Slug: first.Slug, Name: "Taker", Plan: "starter",
		SealedSigningKey: []byte("not really sealed"),
		Token:            accounts.NewToken{Name: "t", Hash: b, DisplayPrefix: "ak_xxxx", Scopes: []string{"stats:read"}}})
	if err != nil {
		t.Fatal(err)
	}
	if cached, _, fromCache, _ := store.ChatTenantAndSegment(ctx, first.Slug, "", false); !fromCache || cached.ID != first.ID {
		t.Fatalf("the cache should still hold the first tenant (%s, cached %v): the case checks nothing", cached.ID, fromCache)
	}
	_, _, v, err := store.HitWithinForTenant(ctx, []db.Window{{Key: "takeover:" + first.Slug, Length: time.Minute, Limit: 1000}}, time.Now(), first.Slug)
	if err != nil || v == nil {
		t.Fatalf("version of the slug: %v %v", v, err)
	}
	if now := configVersion(t, store, taker.ID); *v == kept.ConfigVersion || *v != now {
		t.Errorf("the slug's version is %d: the first tenant's was %d, the taker's is %d", *v, kept.ConfigVersion, now)
	}
}
