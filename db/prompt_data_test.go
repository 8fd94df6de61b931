package db_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/business"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/db/visitors"
)

// PromptData reads in one batch what PromptCorpus, HasCorpusSummaries,
// ListMemory, ListTools and HasActiveProducts read one by one.
func TestPromptData(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := dbtest.SetupPromptCorpus(t)
	f.Add(t, f.Tenant.ID, dbtest.PromptEntry{Title: "everyone", Priority: 3})
	f.Add(t, f.Tenant.ID, dbtest.PromptEntry{Title: "sales, summarised", Segment: f.Sales, Summary: "short", Priority: 2})
	f.Add(t, f.Tenant.ID, dbtest.PromptEntry{Title: "fr", Locale: "fr", Priority: 1})
	other := dbtest.SetupPromptCorpus(t) // another tenant's rows must not show
	other.Add(t, other.Tenant.ID, dbtest.PromptEntry{Title: "theirs", Summary: "short"})

	check := func(t *testing.T, tenantID, segment, locale, visitorID string) {
		t.Helper()
		got, err := f.Store.PromptData(ctx, tenantID, segment, locale, visitorID, 50)
		if err != nil {
			t.Fatal(err)
		}
		var want parley.PromptData
		if want.Corpus, err = f.Store.PromptCorpus(ctx, tenantID, segment, locale, 50); err != nil {
			t.Fatal(err)
		}
		if want.HasSummaries, err = f.Store.HasCorpusSummaries(ctx, tenantID, segment, locale); err != nil {
			t.Fatal(err)
		}
		if visitorID != "" {
			if want.Memory, err = f.Store.ListMemory(ctx, tenantID, visitorID); err != nil {
				t.Fatal(err)
			}
		}
		if want.Tools, err = f.Store.ListTools(ctx, tenantID); err != nil {
			t.Fatal(err)
		}
		if want.HasProducts, err = f.Store.HasActiveProducts(ctx, tenantID); err != nil {
			t.Fatal(err)
		}
		tenant, err := f.Store.TenantBySlug(ctx, f.Tenant.Slug)
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
	check(t, f.Tenant.ID, f.Sales, "", "")
	check(t, f.Tenant.ID, f.Support, "en", "")
	check(t, f.Tenant.ID, "", "fr-CA", "")

	v, err := f.Store.CreateVisitor(ctx, f.Tenant.ID, visitors.VisitorWrite{Email: parley.Some(fmt.Sprintf("v%d@example.com", time.Now().UnixNano()))})
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range [][2]string{{"name", "Ada"}, {"city", "Paris"}} {
		if _, err := f.Store.UpsertMemory(ctx, f.Tenant.ID, v.ID, kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.Store.CreateTool(ctx, f.Tenant.ID, db.ToolWrite{Name: parley.Some("Contact form"),
		Description: parley.Some("Collects contact details"), Type: parley.Some("SUBMIT_FORM")}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.Store.UpsertProduct(ctx, f.Tenant.ID, business.ProductWrite{ExternalID: parley.Some("sku-1"), Name: parley.Some("Widget"),
		IsActive: parley.Some(true)}); err != nil {
		t.Fatal(err)
	}
	check(t, f.Tenant.ID, f.Sales, "fr", v.ID)
	if got, err := f.Store.PromptData(ctx, f.Tenant.ID, f.Sales, "", v.ID, 50); err != nil || len(got.Memory) != 2 || len(got.Tools) != 1 || !got.HasProducts || !got.HasSummaries {
		t.Errorf("with memory, a tool and a product: %+v, %v", got, err)
	}
	if got, err := f.Store.PromptData(ctx, f.Tenant.ID, f.Sales, "", "", 0); err != nil || got.Corpus != nil {
		t.Errorf("limit 0: corpus %v, %v; want none", got.Corpus, err)
	}
	if _, err := f.Store.PromptData(ctx, f.Tenant.ID, "not-a-uuid", "", "", 50); parley.ErrorKind(err) != parley.KindNotFound {
		t.Errorf("a segment id that is no uuid: %v, want not found", err)
	}
}
