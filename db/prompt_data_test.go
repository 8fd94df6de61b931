package db_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
)

// PromptData reads in one batch what PromptCorpus, HasCorpusSummaries,
// ListMemory, ListTools and HasActiveProducts read one by one.
func TestPromptData(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := setupPromptCorpus(t)
	f.add(t, f.tenant.ID, entry{title: "everyone", priority: 3})
	f.add(t, f.tenant.ID, entry{title: "sales, summarised", segment: f.sales, summary: "short", priority: 2})
	f.add(t, f.tenant.ID, entry{title: "fr", locale: "fr", priority: 1})
	other := setupPromptCorpus(t) // another tenant's rows must not show
	other.add(t, other.tenant.ID, entry{title: "theirs", summary: "short"})

	check := func(t *testing.T, tenantID, segment, locale, visitorID string) {
		t.Helper()
		got, err := f.store.PromptData(ctx, tenantID, segment, locale, visitorID, 50)
		if err != nil {
			t.Fatal(err)
		}
		var want parley.PromptData
		if want.Corpus, err = f.store.PromptCorpus(ctx, tenantID, segment, locale, 50); err != nil {
			t.Fatal(err)
		}
		if want.HasSummaries, err = f.store.HasCorpusSummaries(ctx, tenantID, segment, locale); err != nil {
			t.Fatal(err)
		}
		if visitorID != "" {
			if want.Memory, err = f.store.ListMemory(ctx, tenantID, visitorID); err != nil {
				t.Fatal(err)
			}
		}
		if want.Tools, err = f.store.ListTools(ctx, tenantID); err != nil {
			t.Fatal(err)
		}
		if want.HasProducts, err = f.store.HasActiveProducts(ctx, tenantID); err != nil {
			t.Fatal(err)
		}
		tenant, err := f.store.TenantBySlug(ctx, f.tenant.Slug)
		if err != nil {
			t.Fatal(err)
		}
		want.ConfigVersion = tenant.ConfigVersion
		if !reflect.DeepEqual(got, want) {
			t.Errorf("segment %q, locale %q, visitor %q:\n got %+v\nwant %+v", segment, locale, visitorID, got, want)
		}
		if len(want.Corpus) == 0 {
			t.Errorf("segment %q, locale %q: no corpus entry; the case checks nothing", segment, locale)
		}
	}
	check(t, f.tenant.ID, f.sales, "", "")
	check(t, f.tenant.ID, f.support, "en", "")
	check(t, f.tenant.ID, "", "fr-CA", "")

	v, err := f.store.CreateVisitor(ctx, f.tenant.ID, db.VisitorWrite{Email: parley.Some(fmt.Sprintf("v%d@example.com", time.Now().UnixNano()))})
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range [][2]string{{"name", "Ada"}, {"city", "Paris"}} {
		if _, err := f.store.UpsertMemory(ctx, f.tenant.ID, v.ID, kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.store.CreateTool(ctx, f.tenant.ID, db.ToolWrite{Name: parley.Some("Contact form"),
		Description: parley.Some("Collects contact details"), Type: parley.Some("SUBMIT_FORM")}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.store.UpsertProduct(ctx, f.tenant.ID, db.ProductWrite{ExternalID: parley.Some("sku-1"), Name: parley.Some("Widget"),
		IsActive: parley.Some(true)}); err != nil {
		t.Fatal(err)
	}
	check(t, f.tenant.ID, f.sales, "fr", v.ID)
	if got, err := f.store.PromptData(ctx, f.tenant.ID, f.sales, "", v.ID, 50); err != nil || len(got.Memory) != 2 || len(got.Tools) != 1 || !got.HasProducts || !got.HasSummaries {
		t.Errorf("with memory, a tool and a product: %+v, %v", got, err)
	}
	if got, err := f.store.PromptData(ctx, f.tenant.ID, f.sales, "", "", 0); err != nil || got.Corpus != nil {
		t.Errorf("limit 0: corpus %v, %v; want none", got.Corpus, err)
	}
	if _, err := f.store.PromptData(ctx, f.tenant.ID, "not-a-uuid", "", "", 50); parley.ErrorKind(err) != parley.KindNotFound {
		t.Errorf("a segment id that is no uuid: %v, want not found", err)
	}
}
