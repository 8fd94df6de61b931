package admin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/business"
	"github.com/parley/parley/db/visitors"
	"github.com/parley/parley/web/webtest"
)

// chooseOption selects value in the select with id, firing change as a user's choice does.
func chooseOption(id, value string) chromedp.Action[chromedp.Void] {
	js := `(() => { const s = document.getElementById(` + webtest.JSString(id) + `); s.value = ` + webtest.JSString(value) +
		`; s.dispatchEvent(new Event('change', {bubbles: true})); return s.value; })()`
	return chromedp.Evaluate[chromedp.Void](js)
}

// toolNamed finds the tenant's tool by name.
func toolNamed(t *testing.T, b *webtest.Bundle, tenantID, name string) parley.Tool {
	t.Helper()
	tools, err := b.DB.ListTools(context.Background(), tenantID)
	webtest.MustStep(t, "listing tools", err)
	for _, tl := range tools {
		if tl.Name == name {
			return tl
		}
	}
	t.Fatalf("no tool named %q among %d", name, len(tools))
	return parley.Tool{}
}

func TestAdminConfigToolsBrowser(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.OwnedTenant(t, "builder")
	ctx := webtest.BrowserTab(t)
	webtest.OpenSignedIn(ctx, t, b, ten, "/admin/tools")

	t.Run("SubmitForm", func(t *testing.T) {
		if nav := webtest.MustRunStep(ctx, t, "nav", chromedp.Text(chromedp.CSS(`nav a[aria-current="page"]`))); nav != "Tools" {
			t.Errorf("current nav item = %q", nav)
		}
		webtest.MustStep(t, "opening the create form", chromedp.Do(ctx, chromedp.Click(chromedp.ID("new-tool")), chromedp.WaitVisible(chromedp.ID("tool-form"))))
		// Synthetic types are never offered.
		types := webtest.MustRunStep(ctx, t, "types", chromedp.Evaluate[[]string](`[...document.querySelectorAll('#type option')].map(o => o.value)`))
		if strings.Join(types, ",") != strings.Join(parley.UserToolTypes, ",") {
			t.Errorf("types offered = %v", types)
		}
		webtest.MustStep(t, "filling the form", chromedp.Do(ctx,
			webtest.FillField("name", "Contact request"),
			webtest.FillField("description", "Collects the visitor's contact details when they ask to be called back."),
			webtest.FillField("field-0-name", "email"),
			webtest.FillField("field-0-label", "Your email"),
			chooseOption("field-0-type", "email"),
			chromedp.Click(chromedp.ID("field-0-required")),
			chromedp.Click(chromedp.ID("add-field")),
			chromedp.WaitVisible(chromedp.ID("field-1-name")),
			webtest.FillField("field-1-name", "email"),
			webtest.FillField("field-1-label", "Company"),
		))
		if status := webtest.SubmitForm(ctx, t, "#save-tool"); status != http.StatusUnprocessableEntity {
			t.Fatalf("saving a form with a duplicate field name: status %d, want 422", status)
		}
		if msg := webtest.MustRunStep(ctx, t, "config error", chromedp.Text(chromedp.ID("err-config"))); !strings.Contains(msg, `name "email" is used twice`) {
			t.Errorf("config error = %q", msg)
		}
		// The form keeps what was typed, both rows included.
		if v := webtest.MustRunStep(ctx, t, "second field", chromedp.Value(chromedp.ID("field-1-label"))); v != "Company" {
			t.Errorf("second field's label after the failed save = %q", v)
		}
		if v := webtest.MustRunStep(ctx, t, "name", chromedp.Value(chromedp.ID("name"))); v != "Contact request" {
			t.Errorf("name after the failed save = %q", v)
		}
		if tools, _ := b.DB.ListTools(context.Background(), ten.ID); len(tools) != 0 {
			t.Fatalf("an invalid form was saved: %+v", tools)
		}
		webtest.MustStep(t, "fixing the name", chromedp.Do(ctx, webtest.FillField("field-1-name", "company")))
		if status := webtest.SubmitForm(ctx, t, "#save-tool"); status != http.StatusOK {
			t.Fatalf("after saving: status %d", status)
		}
		if loc := webtest.MustRunStep(ctx, t, "location", chromedp.Location()); loc != b.TS.URL+"/admin/tools" {
			t.Errorf("after saving at %s", loc)
		}
		tl := toolNamed(t, b, ten.ID, "Contact request")
		var cfg parley.SubmitFormConfig
		webtest.MustStep(t, "reading the config", json.Unmarshal(tl.Config, &cfg))
		want := []parley.FormField{{Name: "email", Label: "Your email", Type: "email", Required: true}, {Name: "company", Label: "Company", Type: "text"}}
		if len(cfg.Fields) != 2 || cfg.Fields[0] != want[0] || cfg.Fields[1] != want[1] {
			t.Errorf("stored fields = %+v, want %+v", cfg.Fields, want)
		}
		if tl.Type != parley.ToolSubmitForm || !tl.IsActive {
			t.Errorf("stored type %s, active %v", tl.Type, tl.IsActive)
		}
		if row := webtest.MustRunStep(ctx, t, "row", chromedp.Text(chromedp.CSS("#tool-"+tl.ID))); !strings.Contains(row, "Lead capture") || !strings.Contains(row, "active") {
			t.Errorf("row = %q", row)
		}
	})

	t.Run("GenerateQuote", func(t *testing.T) {
		webtest.MustStep(t, "choosing the type", chromedp.Do(ctx,
			chromedp.Navigate(b.TS.URL+"/admin/tools/new"),
			chooseOption("type", parley.ToolGenerateQuote),
			// htmx swaps in the price list editor.
			chromedp.WaitVisible(chromedp.ID("currency")),
		))
		webtest.MustStep(t, "filling the price list", chromedp.Do(ctx,
			webtest.FillField("name", "Quote"),
			webtest.FillField("description", "Prices a quote from the price list."),
			webtest.FillField("currency", "EUR"),
			webtest.FillField("taxRate", "20"),
			webtest.FillField("validityDays", "15"),
			webtest.FillField("item-0-name", "Audit"),
			webtest.FillField("item-0-unitPrice", "1200"),
			webtest.FillField("item-0-unit", "day"),
			chromedp.Click(chromedp.ID("add-item")),
			chromedp.WaitVisible(chromedp.ID("item-1-name")),
			webtest.FillField("item-1-name", "Training"),
			webtest.FillField("item-1-unitPrice", "450.50"),
			webtest.FillField("item-1-unit", "session"),
			webtest.FillField("item-1-options", "Remote=0; Materials=25"),
		))
		if status := webtest.SubmitForm(ctx, t, "#save-tool"); status != http.StatusOK {
			t.Fatalf("after saving: status %d", status)
		}
		tl := toolNamed(t, b, ten.ID, "Quote")
		var cfg parley.QuoteConfig
		webtest.MustStep(t, "reading the config", json.Unmarshal(tl.Config, &cfg))
		if tl.Type != parley.ToolGenerateQuote || cfg.Currency != "EUR" || cfg.TaxRate != 20 || cfg.ValidityDays != 15 || len(cfg.Items) != 2 {
			t.Fatalf("stored %s %+v", tl.Type, cfg)
		}
		if it := cfg.Items[0]; it.Name != "Audit" || it.UnitPrice != 1200 || it.Unit != "day" || it.Currency != "EUR" {
			t.Errorf("first item = %+v", it)
		}
		if it := cfg.Items[1]; it.Name != "Training" || it.UnitPrice != 450.5 || len(it.Options) != 2 || it.Options[1] != (parley.QuoteOption{Name: "Materials", UnitPrice: 25}) {
			t.Errorf("second item = %+v", it)
		}
		// The list is ordered by position: the new tool went last.
		names := webtest.MustRunStep(ctx, t, "names", chromedp.Evaluate[[]string](`[...document.querySelectorAll('#tools tbody tr td:first-child')].map(td => td.textContent.trim())`))
		if strings.Join(names, ",") != "Contact request,Quote" {
			t.Errorf("listed tools = %v", names)
		}
	})

	t.Run("Edit", func(t *testing.T) {
		tl := toolNamed(t, b, ten.ID, "Quote")
		webtest.MustStep(t, "opening the tool", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin/tools/"+tl.ID)))
		if v := webtest.MustRunStep(ctx, t, "second item", chromedp.Value(chromedp.ID("item-1-options"))); v != "Remote=0; Materials=25" {
			t.Errorf("options shown = %q", v)
		}
		webtest.MustStep(t, "editing", chromedp.Do(ctx,
			webtest.FillField("name", "Quote builder"),
			chromedp.Click(chromedp.ID("isActive")),
			webtest.FillField("item-0-unitPrice", "1350.25"),
		))
		if status := webtest.SubmitForm(ctx, t, "#save-tool"); status != http.StatusOK {
			t.Fatalf("after saving: status %d", status)
		}
		got, err := b.DB.Tool(context.Background(), ten.ID, tl.ID)
		webtest.MustStep(t, "reading the tool", err)
		var cfg parley.QuoteConfig
		webtest.MustStep(t, "reading the config", json.Unmarshal(got.Config, &cfg))
		if got.Name != "Quote builder" || got.IsActive || len(cfg.Items) != 2 || cfg.Items[0].UnitPrice != 1350.25 || len(cfg.Items[1].Options) != 2 {
			t.Errorf("after editing: %s active %v, %+v", got.Name, got.IsActive, cfg)
		}
		if row := webtest.MustRunStep(ctx, t, "row", chromedp.Text(chromedp.CSS("#tool-"+tl.ID))); !strings.Contains(row, "Quote builder") || !strings.Contains(row, "inactive") {
			t.Errorf("row = %q", row)
		}
	})

	t.Run("Delete", func(t *testing.T) {
		tl := toolNamed(t, b, ten.ID, "Contact request")
		row := "#tool-" + tl.ID
		webtest.MustStep(t, "opening the list", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin/tools"), chromedp.WaitVisible(chromedp.CSS(row))))
		if msg := webtest.ClickAndConfirm(ctx, t, row+" button.danger"); !strings.Contains(msg, "Delete the tool Contact request?") {
			t.Errorf("confirmation = %q", msg)
		}
		webtest.MustStep(t, "waiting for the row to go", chromedp.Do(ctx, chromedp.WaitNotPresent(chromedp.CSS(row))))
		if loc := webtest.MustRunStep(ctx, t, "location", chromedp.Location()); loc != b.TS.URL+"/admin/tools" {
			t.Errorf("location after deleting = %s", loc)
		}
		if _, err := b.DB.Tool(context.Background(), ten.ID, tl.ID); parley.ErrorKind(err) != parley.KindNotFound {
			t.Errorf("the tool is still stored: %v", err)
		}
	})
}

func TestAdminConfigProductsBrowser(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.OwnedTenant(t, "builder")
	ctx := webtest.BrowserTab(t)
	// Another product, so that the search has something to leave out.
	_, _, err := b.DB.UpsertProduct(context.Background(), ten.ID, business.ProductWrite{Name: parley.Some("Office chair"), IsActive: parley.Some(true)})
	webtest.MustStep(t, "creating a product", err)
	webtest.OpenSignedIn(ctx, t, b, ten, "/admin/products")

	webtest.MustStep(t, "filling the form", chromedp.Do(ctx,
		chromedp.Click(chromedp.ID("new-product")),
		chromedp.WaitVisible(chromedp.ID("product-form")),
		webtest.FillField("name", "Trail runner"),
		webtest.FillField("description", "A light shoe for muddy paths."),
		webtest.FillField("price", "89.90"),
		webtest.FillField("currency", "eur"),
		webtest.FillField("url", "https://shop.example.com/trail"),
		webtest.FillField("tags", "shoes, running"),
	))
	if status := webtest.SubmitForm(ctx, t, "#save-product"); status != http.StatusOK {
		t.Fatalf("after creating: status %d", status)
	}
	ps, _, err := b.DB.ListProducts(context.Background(), ten.ID, business.ProductQuery{Search: "Trail runner", Page: 1, Limit: 10})
	webtest.MustStep(t, "listing products", err)
	if len(ps) != 1 {
		t.Fatalf("stored products named Trail runner: %d", len(ps))
	}
	p := ps[0]
	if p.Price == nil || *p.Price != 89.9 || webtest.StrOrEmpty(p.Currency) != "EUR" || strings.Join(p.Tags, ",") != "shoes,running" || !p.IsActive {
		t.Errorf("stored %+v", p)
	}
	row := "#product-" + p.ID

	t.Run("Search", func(t *testing.T) {
		webtest.MustStep(t, "searching", chromedp.Do(ctx,
			chromedp.WaitVisible(chromedp.CSS(row)),
			webtest.KeyIn(chromedp.ID("product-search"), "trail"),
		))
		// "tra" already leaves one row: the list and the address are read
		// once the request for the whole word has answered (at most 10 s).
		_, _ = chromedp.Run(ctx, chromedp.Poll[bool](`location.search.includes('search=trail')`, chromedp.WithPollingTimeout(10*time.Second)))
		webtest.MustStep(t, "waiting for the filtered list", chromedp.Do(ctx, chromedp.Poll[chromedp.Void](
			`document.querySelectorAll('#products tbody tr').length === 1 && document.querySelector('#products tbody tr').id === `+webtest.JSString("product-"+p.ID))))
		if loc := webtest.MustRunStep(ctx, t, "location", chromedp.Location()); !strings.Contains(loc, "search=trail") {
			t.Errorf("the search is not in the address: %s", loc)
		}
	})

	t.Run("Edit", func(t *testing.T) {
		webtest.MustStep(t, "editing", chromedp.Do(ctx,
			chromedp.Navigate(b.TS.URL+"/admin/products/"+p.ID),
			webtest.FillField("price", "79"),
			webtest.FillField("tags", "shoes"),
		))
		if status := webtest.SubmitForm(ctx, t, "#save-product"); status != http.StatusOK {
			t.Fatalf("after saving: status %d", status)
		}
		got, err := b.DB.Product(context.Background(), ten.ID, p.ID)
		webtest.MustStep(t, "reading the product", err)
		if got.Price == nil || *got.Price != 79 || strings.Join(got.Tags, ",") != "shoes" || webtest.StrOrEmpty(got.URL) != "https://shop.example.com/trail" {
			t.Errorf("after editing %+v", got)
		}
		if price := webtest.MustRunStep(ctx, t, "price", chromedp.Text(chromedp.CSS(row+" td:nth-child(2)"))); price != "79.00 EUR" {
			t.Errorf("listed price = %q", price)
		}
	})

	t.Run("Delete", func(t *testing.T) {
		if msg := webtest.ClickAndConfirm(ctx, t, row+" button.danger"); !strings.Contains(msg, "Delete the product Trail runner?") {
			t.Errorf("confirmation = %q", msg)
		}
		webtest.MustStep(t, "waiting for the row to go", chromedp.Do(ctx, chromedp.WaitNotPresent(chromedp.CSS(row))))
		if _, err := b.DB.Product(context.Background(), ten.ID, p.ID); parley.ErrorKind(err) != parley.KindNotFound {
			t.Errorf("the product is still stored: %v", err)
		}
	})
}

func TestAdminConfigVisitorsBrowser(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.OwnedTenant(t, "builder")
	tok := b.Token(t, ten.ID, auth.ScopeVisitorsRead, auth.ScopeVisitorsWrite)
	status, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/visitors", tok, map[string]any{
		"email": "ada@example.com", "displayName": "Ada", "phone": "+33 1 23 45 67 89", "authProvider": "google",
		"externalId": "crm-42", "metadata": map[string]any{"plan": "pro", "seats": 12},
	})
	if status != http.StatusCreated {
		t.Fatalf("creating a visitor: %d %v", status, body)
	}
	id := body["id"].(string)
	ctx := webtest.BrowserTab(t)
	webtest.OpenSignedIn(ctx, t, b, ten, "/admin/visitors")

	t.Run("Profile", func(t *testing.T) {
		webtest.MustStep(t, "opening the list", chromedp.Do(ctx,
			chromedp.Click(chromedp.CSS("#visitor-"+id+" a")),
			chromedp.WaitVisible(chromedp.ID("profile")),
		))
		for sel, want := range map[string]string{
			"visitor-email": "ada@example.com", "visitor-name": "Ada", "visitor-phone": "+33 1 23 45 67 89",
			"visitor-provider": "google", "visitor-external-id": "crm-42", "conversation-count": "0", "memory-count": "0",
		} {
			if got := webtest.MustRunStep(ctx, t, sel, chromedp.Text(chromedp.ID(sel))); got != want {
				t.Errorf("#%s = %q, want %q", sel, got, want)
			}
		}
		if md := webtest.MustRunStep(ctx, t, "metadata", chromedp.Text(chromedp.ID("visitor-metadata"))); md != "{\n  \"plan\": \"pro\",\n  \"seats\": 12\n}" {
			t.Errorf("metadata shown = %q", md)
		}
	})

	t.Run("Memory", func(t *testing.T) {
		webtest.MustStep(t, "adding a fact", chromedp.Do(ctx, webtest.FillField("key", "company_size"), webtest.FillField("value", "50 people")))
		if status := webtest.SubmitForm(ctx, t, "#add-fact"); status != http.StatusOK {
			t.Fatalf("after adding: status %d", status)
		}
		if v := webtest.MustRunStep(ctx, t, "fact", chromedp.Text(chromedp.CSS("#fact-company_size td:nth-child(2)"))); v != "50 people" {
			t.Errorf("fact shown = %q", v)
		}
		if n := webtest.MustRunStep(ctx, t, "count", chromedp.Text(chromedp.ID("memory-count"))); n != "1" {
			t.Errorf("memory count = %q", n)
		}
		if f, err := b.DB.Memory(context.Background(), ten.ID, id, "company_size"); err != nil || f.Value != "50 people" {
			t.Errorf("stored fact %+v, %v", f, err)
		}
		if msg := webtest.ClickAndConfirm(ctx, t, "#fact-company_size button"); !strings.Contains(msg, "Forget company_size?") {
			t.Errorf("confirmation = %q", msg)
		}
		webtest.MustStep(t, "waiting for the row to go", chromedp.Do(ctx, chromedp.WaitNotPresent(chromedp.ID("fact-company_size"))))
		if n := webtest.MustRunStep(ctx, t, "count", chromedp.Text(chromedp.ID("memory-count"))); n != "0" {
			t.Errorf("memory count after deleting = %q", n)
		}
		if _, err := b.DB.Memory(context.Background(), ten.ID, id, "company_size"); parley.ErrorKind(err) != parley.KindNotFound {
			t.Errorf("the fact is still stored: %v", err)
		}
	})

	t.Run("Erase", func(t *testing.T) {
		if txt := webtest.MustRunStep(ctx, t, "explanation", chromedp.Text(chromedp.ID("erase"))); !strings.Contains(txt, "memory and their conversations permanently") {
			t.Errorf("erase section = %q", txt)
		}
		if msg := webtest.ClickAndConfirm(ctx, t, "#erase-visitor"); !strings.Contains(msg, "deleted permanently") {
			t.Errorf("confirmation = %q", msg)
		}
		// htmx sends the browser to the list.
		webtest.WaitUntil(ctx, t, "the list", `location.pathname === '/admin/visitors' && document.readyState === 'complete'`)
		if loc := webtest.MustRunStep(ctx, t, "location", chromedp.Location()); loc != b.TS.URL+"/admin/visitors" {
			t.Errorf("after erasing at %s", loc)
		}
		if flash := webtest.OkFlash(ctx, t); !strings.Contains(flash, "Visitor erased") {
			t.Errorf("flash = %q", flash)
		}
		if status, body := b.Do(t, "GET", "/tenants/"+ten.Slug+"/visitors/"+id, tok, nil); status != http.StatusNotFound {
			t.Errorf("the visitor is still there: %d %v", status, body)
		}
	})
}

func TestAdminConfigMCPBrowser(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)

	t.Run("Builder", func(t *testing.T) {
		t.Parallel()
		ten := b.OwnedTenant(t, "builder")
		ctx := webtest.BrowserTab(t)
		webtest.OpenSignedIn(ctx, t, b, ten, "/admin/mcp-tools")
		const key = "sk-mcp-very-secret-9431"
		webtest.MustStep(t, "filling the form", chromedp.Do(ctx,
			webtest.FillField("mcpToolsUrl", "https://mcp.example.com/mcp"),
			webtest.FillField("mcpToolsApiKey", key),
			webtest.FillField("mcpToolsMaxTools", "5"),
		))
		if status := webtest.SubmitForm(ctx, t, "#save-mcp"); status != http.StatusOK {
			t.Fatalf("after saving: status %d", status)
		}
		if msg := webtest.MustRunStep(ctx, t, "key status", chromedp.Text(chromedp.ID("key-status"))); !strings.Contains(msg, "A key is set") {
			t.Errorf("key status = %q", msg)
		}
		html := webtest.MustRunStep(ctx, t, "page", chromedp.OuterHTML(chromedp.CSS("html")))
		if strings.Contains(html, key) {
			t.Error("the API key is shown")
		}
		if v := webtest.MustRunStep(ctx, t, "key field", chromedp.Value(chromedp.ID("mcpToolsApiKey"))); v != "" {
			t.Errorf("key field = %q", v)
		}
		s, err := b.DB.MCPSettings(context.Background(), ten.ID)
		webtest.MustStep(t, "reading the settings", err)
		plain, err := b.Box.Open(s.SealedAPIKey)
		if err != nil || string(plain) != key || webtest.StrOrEmpty(s.URL) != "https://mcp.example.com/mcp" || s.MaxTools != 5 {
			t.Errorf("stored %q %d, key %q (%v)", webtest.StrOrEmpty(s.URL), s.MaxTools, plain, err)
		}

		// Saving again without typing a key keeps it.
		webtest.MustStep(t, "editing", chromedp.Do(ctx, webtest.FillField("mcpToolsMaxTools", "7")))
		if status := webtest.SubmitForm(ctx, t, "#save-mcp"); status != http.StatusOK {
			t.Fatalf("after saving again: status %d", status)
		}
		s, err = b.DB.MCPSettings(context.Background(), ten.ID)
		webtest.MustStep(t, "reading the settings", err)
		if plain, err := b.Box.Open(s.SealedAPIKey); err != nil || string(plain) != key || s.MaxTools != 7 {
			t.Errorf("after a save without a key: key %q, max %d", plain, s.MaxTools)
		}

		if msg := webtest.ClickAndConfirm(ctx, t, "#remove-mcp"); !strings.Contains(msg, "Remove the MCP configuration?") {
			t.Errorf("confirmation = %q", msg)
		}
		webtest.WaitUntil(ctx, t, "the page", `document.readyState === 'complete' && (document.querySelector('.flash.ok') || {}).textContent === 'MCP configuration removed.'`)
		if msg := webtest.MustRunStep(ctx, t, "key status", chromedp.Text(chromedp.ID("key-status"))); !strings.Contains(msg, "No key is set") {
			t.Errorf("key status after removing = %q", msg)
		}
		if s, _ := b.DB.MCPSettings(context.Background(), ten.ID); s.URL != nil || s.SealedAPIKey != nil {
			t.Errorf("after removing: %+v", s)
		}
	})

	t.Run("Starter", func(t *testing.T) {
		t.Parallel()
		ten := b.OwnedTenant(t, "starter")
		ctx := webtest.BrowserTab(t)
		webtest.OpenSignedIn(ctx, t, b, ten, "/admin/mcp-tools")
		if msg := webtest.MustRunStep(ctx, t, "upgrade", chromedp.Text(chromedp.ID("mcp-upgrade"))); !strings.Contains(msg, "builder plan") || !strings.Contains(msg, "starter") {
			t.Errorf("upgrade message = %q", msg)
		}
		if n := webtest.MustRunStep(ctx, t, "forms", chromedp.Evaluate[int](`document.querySelectorAll('#mcp-form').length`)); n != 0 {
			t.Error("a starter tenant is shown the form")
		}
	})
}

// otherTenantData stores a tool, a product and a visitor with a fact for tenantID.
func otherTenantData(t *testing.T, b *webtest.Bundle, tenantID string) (toolID, productID, visitorID string) {
	t.Helper()
	ctx := context.Background()
	tl, err := b.DB.CreateTool(ctx, tenantID, db.ToolWrite{Name: parley.Some("Theirs"), Description: parley.Some("Not yours."),
		Type: parley.Some(parley.ToolRecommendProduct), Config: parley.Some(json.RawMessage(`{"maxResults":3}`))})
	webtest.MustStep(t, "creating a tool", err)
	p, _, err := b.DB.UpsertProduct(ctx, tenantID, business.ProductWrite{Name: parley.Some("Their product")})
	webtest.MustStep(t, "creating a product", err)
	v, err := b.DB.CreateVisitor(ctx, tenantID, visitors.VisitorWrite{Email: parley.Some("them@example.com")})
	webtest.MustStep(t, "creating a visitor", err)
	_, err = b.DB.UpsertMemory(ctx, tenantID, v.ID, "secret", "theirs")
	webtest.MustStep(t, "storing a fact", err)
	return tl.ID, p.ID, v.ID
}

func TestAdminConfigIsolation(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	mine, theirs := b.OwnedTenant(t, "builder"), b.NewTenant(t, "builder")
	toolID, productID, visitorID := otherTenantData(t, b, theirs.ID)
	c := b.NewAdminClient(t)
	c.SignIn(mine)
	c.Get("/admin/tools")

	c.ExpectNotFound(t, []webtest.AdminCall{
		{Name: "ShowTool", Method: "GET", Path: "/admin/tools/" + toolID, Form: nil, HX: false},
		{Name: "EditTool", Method: "POST", Path: "/admin/tools/" + toolID, Form: url.Values{"name": {"Mine now"}, "description": {"x"}, "position": {"0"}, "maxResults": {"3"}}, HX: false},
		{Name: "DeleteTool", Method: "POST", Path: "/admin/tools/" + toolID + "/delete", Form: url.Values{}, HX: true},
		{Name: "ShowProduct", Method: "GET", Path: "/admin/products/" + productID, Form: nil, HX: false},
		{Name: "EditProduct", Method: "POST", Path: "/admin/products/" + productID, Form: url.Values{"name": {"Mine now"}}, HX: false},
		{Name: "DeleteProduct", Method: "POST", Path: "/admin/products/" + productID + "/delete", Form: url.Values{}, HX: true},
		{Name: "ShowVisitor", Method: "GET", Path: "/admin/visitors/" + visitorID, Form: nil, HX: false},
		{Name: "EditVisitor", Method: "POST", Path: "/admin/visitors/" + visitorID, Form: url.Values{"email": {"mine@example.com"}}, HX: false},
		{Name: "AddFact", Method: "POST", Path: "/admin/visitors/" + visitorID + "/memory", Form: url.Values{"key": {"k"}, "value": {"v"}}, HX: false},
		{Name: "DeleteFact", Method: "POST", Path: "/admin/visitors/" + visitorID + "/memory/secret/delete", Form: url.Values{}, HX: true},
		{Name: "EraseVisitor", Method: "POST", Path: "/admin/visitors/" + visitorID + "/erase", Form: url.Values{}, HX: true},
		{Name: "NotAnID", Method: "GET", Path: "/admin/tools/not-a-uuid", Form: nil, HX: false},
	})

	// Nothing of theirs changed.
	ctx := context.Background()
	if tl, err := b.DB.Tool(ctx, theirs.ID, toolID); err != nil || tl.Name != "Theirs" {
		t.Errorf("their tool: %+v, %v", tl, err)
	}
	if p, err := b.DB.Product(ctx, theirs.ID, productID); err != nil || p.Name != "Their product" {
		t.Errorf("their product: %+v, %v", p, err)
	}
	if v, err := b.DB.VisitorDetail(ctx, theirs.ID, visitorID); err != nil || webtest.StrOrEmpty(v.Email) != "them@example.com" || v.MemoryCount != 1 {
		t.Errorf("their visitor: %+v, %v", v, err)
	}
	// Their segment cannot be given to my tool either.
	seg, err := b.DB.DefaultSegment(ctx, theirs.ID)
	webtest.MustStep(t, "reading their segment", err)
	c.Get("/admin/tools/new")
	p := c.Submit("/admin/tools", url.Values{"type": {parley.ToolRecommendProduct}, "name": {"Mine"}, "description": {"d"},
		"position": {"0"}, "maxResults": {"3"}, "segmentId": {seg.ID}, "isActive": {"true"}})
	if p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Text("#err-segmentId"), "no segment") {
		t.Errorf("their segment: %d %q", p.Status, p.Text("#err-segmentId"))
	}
}

func TestAdminConfigValidation(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	ten := b.OwnedTenant(t, "builder")
	c := b.NewAdminClient(t)
	c.SignIn(ten)
	ctx := context.Background()
	v, err := b.DB.CreateVisitor(ctx, ten.ID, visitors.VisitorWrite{Email: parley.Some("grace@example.com")})
	webtest.MustStep(t, "creating a visitor", err)
	_, err = b.DB.CreateTool(ctx, ten.ID, db.ToolWrite{Name: parley.Some("Taken"), Description: parley.Some("d"),
		Type: parley.Some(parley.ToolRememberFact), Config: parley.Some(json.RawMessage(`{"allowedKeys":[]}`))})
	webtest.MustStep(t, "creating a tool", err)

	tool := func(typ string, extra url.Values) url.Values {
		f := url.Values{"type": {typ}, "name": {"A tool"}, "description": {"Does things."}, "position": {"1"}, "isActive": {"true"}}
		for k, v := range extra {
			f[k] = v
		}
		return f
	}
	for _, tc := range []struct {
		name, page, path string
		form             url.Values
		status           int
		errID, errText   string
	}{
		{"SyntheticType", "/admin/tools/new", "/admin/tools", tool("MCP_PROXY", nil), 422, "err-type", "injected automatically"},
		{"DuplicateFieldName", "/admin/tools/new", "/admin/tools", tool(parley.ToolSubmitForm, url.Values{
			"field.0.name": {"email"}, "field.0.label": {"Email"}, "field.0.type": {"email"},
			"field.3.name": {"email"}, "field.3.label": {"Again"}, "field.3.type": {"text"}}), 422, "err-config", `"email" is used twice`},
		{"QuoteWithoutItems", "/admin/tools/new", "/admin/tools", tool(parley.ToolGenerateQuote, url.Values{"currency": {"EUR"}, "validityDays": {"30"}}), 422, "err-config", "1 to 200 items"},
		{"QuoteBadPrice", "/admin/tools/new", "/admin/tools", tool(parley.ToolGenerateQuote, url.Values{"currency": {"EUR"}, "item.0.name": {"A"}, "item.0.unitPrice": {"cheap"}}), 422, "err-items", "unit price must be a number"},
		{"MeetingOutOfRange", "/admin/tools/new", "/admin/tools", tool(parley.ToolBookMeeting, url.Values{"durationMinutes": {"2"}}), 422, "err-config", "meeting length (minutes) must be between 5 and 480"},
		{"RememberBadKey", "/admin/tools/new", "/admin/tools", tool(parley.ToolRememberFact, url.Values{"allowedKeys": {"ok_key, Not OK"}}), 422, "err-config", `allowed keys: "Not OK" must be lower-case letters, digits and underscores, at most 64`},
		{"WebhookHTTP", "/admin/tools/new", "/admin/tools", tool(parley.ToolEscalateToHuman, url.Values{"webhookUrl": {"http://hooks.example.com"}}), 422, "err-webhookUrl", "must use https"},
		{"ToolNameTaken", "/admin/tools/new", "/admin/tools", tool(parley.ToolRememberFact, url.Values{"name": {"Taken"}}), 409, "err-name", "already used by another tool"},
		{"ToolNoDescription", "/admin/tools/new", "/admin/tools", tool(parley.ToolRecommendProduct, url.Values{"description": {" "}, "maxResults": {"3"}}), 422, "err-description", "must not be empty"},
		{"ProductPriceWithoutCurrency", "/admin/products/new", "/admin/products", url.Values{"name": {"Lamp"}, "price": {"10"}}, 422, "err-currency", "is required with a price"},
		{"ProductPriceNotANumber", "/admin/products/new", "/admin/products", url.Values{"name": {"Lamp"}, "price": {"ten"}, "currency": {"EUR"}}, 422, "err-price", "must be a number"},
		{"ProductBadURL", "/admin/products/new", "/admin/products", url.Values{"name": {"Lamp"}, "url": {"shop/lamp"}}, 422, "err-url", "absolute URL"},
		{"VisitorBadEmail", "/admin/visitors/" + v.ID, "/admin/visitors/" + v.ID, url.Values{"email": {"not-an-email"}}, 422, "err-email", "must be an email address"},
		{"VisitorBadMetadata", "/admin/visitors/" + v.ID, "/admin/visitors/" + v.ID, url.Values{"email": {"grace@example.com"}, "metadata": {"[1, 2]"}}, 422, "err-metadata", "must be a JSON object"},
		{"VisitorNoIdentity", "/admin/visitors/" + v.ID, "/admin/visitors/" + v.ID, url.Values{"email": {""}, "externalId": {""}}, 422, "err-email", "cannot clear both"},
		{"FactBadKey", "/admin/visitors/" + v.ID, "/admin/visitors/" + v.ID + "/memory", url.Values{"key": {"bad key!"}, "value": {"x"}}, 422, "err-key", "letters, digits"},
		{"FactEmptyValue", "/admin/visitors/" + v.ID, "/admin/visitors/" + v.ID + "/memory", url.Values{"key": {"ok"}, "value": {"  "}}, 422, "err-value", "must not be empty"},
		{"MCPNotHTTPS", "/admin/mcp-tools", "/admin/mcp-tools", url.Values{"mcpToolsUrl": {"http://mcp.example.com"}, "mcpToolsMaxTools": {"10"}}, 422, "err-mcpToolsUrl", "must use https"},
		{"MCPTooManyTools", "/admin/mcp-tools", "/admin/mcp-tools", url.Values{"mcpToolsUrl": {"https://mcp.example.com"}, "mcpToolsMaxTools": {"21"}}, 422, "err-mcpToolsMaxTools", "between 1 and 20"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cc := c.As(t)
			cc.Get(tc.page)
			p := cc.Submit(tc.path, tc.form)
			if p.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", p.Status, tc.status, p.Text("main"))
			}
			if msg := p.Text("#" + tc.errID); !strings.Contains(msg, tc.errText) {
				t.Errorf("#%s = %q, want it to contain %q", tc.errID, msg, tc.errText)
			}
			if p.Doc.Find(`form input[name="_csrf"]`).Length() == 0 {
				t.Error("the re-rendered form has no CSRF token")
			}
		})
	}

	// Nothing invalid was stored.
	if tools, _ := b.DB.ListTools(ctx, ten.ID); len(tools) != 1 {
		t.Errorf("tools stored: %d, want only the first", len(tools))
	}
	if _, total, _ := b.DB.ListProducts(ctx, ten.ID, business.ProductQuery{Page: 1, Limit: 10}); total != 0 {
		t.Errorf("products stored: %d", total)
	}
	if got, _ := b.DB.VisitorDetail(ctx, ten.ID, v.ID); webtest.StrOrEmpty(got.Email) != "grace@example.com" || got.MemoryCount != 0 {
		t.Errorf("visitor after failed saves: %+v", got)
	}
	if s, _ := b.DB.MCPSettings(ctx, ten.ID); s.URL != nil {
		t.Errorf("MCP settings stored: %+v", s)
	}

	t.Run("MCPOnStarter", func(t *testing.T) {
		starter := b.OwnedTenant(t, "starter")
		sc := b.NewAdminClient(t)
		sc.SignIn(starter)
		p := sc.Get("/admin/mcp-tools")
		if p.Status != http.StatusOK || p.Doc.Find("#mcp-form").Length() != 0 || !strings.Contains(p.Text("#mcp-upgrade"), "builder") {
			t.Errorf("starter page: %d, form %d", p.Status, p.Doc.Find("#mcp-form").Length())
		}
		p = sc.Submit("/admin/mcp-tools", url.Values{"mcpToolsUrl": {"https://mcp.example.com"}, "mcpToolsMaxTools": {"10"}})
		if p.Status != http.StatusPaymentRequired {
			t.Errorf("saving on starter: %d", p.Status)
		}
	})

	t.Run("ConfigFragment", func(t *testing.T) {
		cc := c.As(t)
		p := cc.Do("GET", "/admin/tools/config-fields?type="+parley.ToolBookMeeting, nil, map[string]string{"HX-Request": "true"})
		if p.Status != http.StatusOK || p.Doc.Find("#durationMinutes").AttrOr("value", "") != "30" || !strings.Contains(p.Text("#calendar-note"), "calendar connector") {
			t.Errorf("BOOK_MEETING fragment: %d %s", p.Status, p.Body)
		}
		if p := cc.Get("/admin/tools/config-fields?type=EXPLORE_CORPUS"); p.Status != http.StatusBadRequest {
			t.Errorf("a synthetic type's fragment: %d", p.Status)
		}
	})
}

func TestAdminConfigWebhookSecret(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	ten := b.OwnedTenant(t, "builder")
	c := b.NewAdminClient(t)
	c.SignIn(ten)
	const secret = "whsec-do-not-show-5521"
	c.Get("/admin/tools/new?type=" + parley.ToolEscalateToHuman)
	p := c.Submit("/admin/tools", url.Values{"type": {parley.ToolEscalateToHuman}, "name": {"Handoff"}, "description": {"Hands over to a person."},
		"position": {"0"}, "isActive": {"true"}, "handoffMessage": {"A colleague takes over."},
		"webhookUrl": {"https://hooks.example.com/parley"}, "webhookSecret": {secret}})
	if p.Status != http.StatusSeeOther || p.Location() != "/admin/tools" {
		t.Fatalf("creating: %d to %q: %s", p.Status, p.Location(), p.Text("main"))
	}
	tl := toolNamed(t, b, ten.ID, "Handoff")
	if plain, err := b.Box.Open(tl.WebhookSecret); err != nil || string(plain) != secret || webtest.StrOrEmpty(tl.WebhookURL) != "https://hooks.example.com/parley" {
		t.Fatalf("stored secret %q (%v), url %q", plain, err, webtest.StrOrEmpty(tl.WebhookURL))
	}

	edit := c.Get("/admin/tools/" + tl.ID)
	if !strings.Contains(edit.Text("#secret-status"), "A secret is set") || strings.Contains(edit.Body, secret) {
		t.Errorf("edit page: status %q, secret shown %v", edit.Text("#secret-status"), strings.Contains(edit.Body, secret))
	}
	if v := edit.Doc.Find("#handoffMessage").Text(); v != "A colleague takes over." {
		t.Errorf("handoff message shown = %q", v)
	}

	// Saving without a new secret keeps it; ticking "remove" clears it.
	form := webtest.FormValues(edit.Doc.Find("#tool-form"))
	form.Set("name", "Human handoff")
	if p := c.Submit("/admin/tools/"+tl.ID, form); p.Status != http.StatusSeeOther {
		t.Fatalf("saving: %d %s", p.Status, p.Text("main"))
	}
	if got, _ := b.DB.Tool(context.Background(), ten.ID, tl.ID); got.Name != "Human handoff" || got.WebhookSecret == nil {
		t.Errorf("after saving without a secret: %q, secret kept %v", got.Name, got.WebhookSecret != nil)
	}
	form.Set("clearWebhookSecret", "true")
	if p := c.Submit("/admin/tools/"+tl.ID, form); p.Status != http.StatusSeeOther {
		t.Fatalf("removing the secret: %d %s", p.Status, p.Text("main"))
	}
	if got, _ := b.DB.Tool(context.Background(), ten.ID, tl.ID); got.WebhookSecret != nil {
		t.Error("the secret is still stored")
	}
	if p := c.Get("/admin/tools/" + tl.ID); !strings.Contains(p.Text("#secret-status"), "No secret is set") {
		t.Errorf("after removing: %q", p.Text("#secret-status"))
	}
}
