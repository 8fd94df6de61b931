package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
)

// clickAndConfirm clicks sel, accepts the confirmation dialog it opens and
// returns the dialog's message.
func clickAndConfirm(ctx context.Context, t *testing.T, sel string) string {
	t.Helper()
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	asked := make(chan string, 1)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			asked <- ev.Message
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
			return
		}
	}()
	// A button just swapped in is only htmx's (hx-confirm included) once htmx
	// has processed its form: clicking earlier submits the form plainly.
	waitUntil(ctx, t, "htmx to take "+sel, fmt.Sprintf(`(() => {
		const b = document.querySelector(%q);
		if (!b || document.querySelector('.htmx-settling, .htmx-swapping')) return false;
		const f = b.closest('[hx-post], [hx-get], [hx-delete]');
		return !f || !!f['htmx-internal-data'];
	})()`, sel))
	mustStep(t, "clicking "+sel, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel))))
	select {
	case msg := <-asked:
		return msg
	case <-time.After(10 * time.Second):
		t.Fatalf("clicking %s opened no confirmation dialog", sel)
		return ""
	}
}

// waitUntil waits for a JavaScript condition to hold, across the page loads
// that interrupt an evaluation (an htmx redirect, a reload). It asks every
// 100 ms. (At 20 ms a wait ended inside htmx's swap more often: a node found
// by the wait was gone when the next step read it.)
func waitUntil(ctx context.Context, t *testing.T, what, cond string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](cond))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %s never held (last error %v)", what, cond, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// chooseOption selects value in the select with id, firing change as a user's choice does.
func chooseOption(id, value string) chromedp.Action[chromedp.Void] {
	js := `(() => { const s = document.getElementById(` + jsString(id) + `); s.value = ` + jsString(value) +
		`; s.dispatchEvent(new Event('change', {bubbles: true})); return s.value; })()`
	return chromedp.Evaluate[chromedp.Void](js)
}

// okFlash waits for the page's success message and returns its text, read
// in one evaluation: a node found first and read after can be swapped out
// in between by the navigation or swap that brought the message.
func okFlash(ctx context.Context, t *testing.T) string {
	t.Helper()
	const read = `(document.querySelector('.flash.ok')?.innerText || '').trim()`
	waitUntil(ctx, t, "the success message", read+` !== ''`)
	return mustRunStep(ctx, t, "flash", chromedp.Evaluate[string](read))
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// toolNamed finds the tenant's tool by name.
func toolNamed(t *testing.T, b *bundle, tenantID, name string) parley.Tool {
	t.Helper()
	tools, err := b.db.ListTools(context.Background(), tenantID)
	mustStep(t, "listing tools", err)
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
	b := setup(t)
	ten := b.ownedTenant(t, "builder")
	ctx := browserTab(t)
	openSignedIn(ctx, t, b, ten, "/admin/tools")

	t.Run("SubmitForm", func(t *testing.T) {
		if nav := mustRunStep(ctx, t, "nav", chromedp.Text(chromedp.CSS(`nav a[aria-current="page"]`))); nav != "Tools" {
			t.Errorf("current nav item = %q", nav)
		}
		mustStep(t, "opening the create form", chromedp.Do(ctx, chromedp.Click(chromedp.ID("new-tool")), chromedp.WaitVisible(chromedp.ID("tool-form"))))
		// Synthetic types are never offered.
		types := mustRunStep(ctx, t, "types", chromedp.Evaluate[[]string](`[...document.querySelectorAll('#type option')].map(o => o.value)`))
		if strings.Join(types, ",") != strings.Join(parley.UserToolTypes, ",") {
			t.Errorf("types offered = %v", types)
		}
		mustStep(t, "filling the form", chromedp.Do(ctx,
			fillField("name", "Contact request"),
			fillField("description", "Collects the visitor's contact details when they ask to be called back."),
			fillField("field-0-name", "email"),
			fillField("field-0-label", "Your email"),
			chooseOption("field-0-type", "email"),
			chromedp.Click(chromedp.ID("field-0-required")),
			chromedp.Click(chromedp.ID("add-field")),
			chromedp.WaitVisible(chromedp.ID("field-1-name")),
			fillField("field-1-name", "email"),
			fillField("field-1-label", "Company"),
		))
		if status := submitForm(ctx, t, "#save-tool"); status != http.StatusUnprocessableEntity {
			t.Fatalf("saving a form with a duplicate field name: status %d, want 422", status)
		}
		if msg := mustRunStep(ctx, t, "config error", chromedp.Text(chromedp.ID("err-config"))); !strings.Contains(msg, `name "email" is used twice`) {
			t.Errorf("config error = %q", msg)
		}
		// The form keeps what was typed, both rows included.
		if v := mustRunStep(ctx, t, "second field", chromedp.Value(chromedp.ID("field-1-label"))); v != "Company" {
			t.Errorf("second field's label after the failed save = %q", v)
		}
		if v := mustRunStep(ctx, t, "name", chromedp.Value(chromedp.ID("name"))); v != "Contact request" {
			t.Errorf("name after the failed save = %q", v)
		}
		if tools, _ := b.db.ListTools(context.Background(), ten.ID); len(tools) != 0 {
			t.Fatalf("an invalid form was saved: %+v", tools)
		}
		mustStep(t, "fixing the name", chromedp.Do(ctx, fillField("field-1-name", "company")))
		if status := submitForm(ctx, t, "#save-tool"); status != http.StatusOK {
			t.Fatalf("after saving: status %d", status)
		}
		if loc := mustRunStep(ctx, t, "location", chromedp.Location()); loc != b.ts.URL+"/admin/tools" {
			t.Errorf("after saving at %s", loc)
		}
		tl := toolNamed(t, b, ten.ID, "Contact request")
		var cfg parley.SubmitFormConfig
		mustStep(t, "reading the config", json.Unmarshal(tl.Config, &cfg))
		want := []parley.FormField{{Name: "email", Label: "Your email", Type: "email", Required: true}, {Name: "company", Label: "Company", Type: "text"}}
		if len(cfg.Fields) != 2 || cfg.Fields[0] != want[0] || cfg.Fields[1] != want[1] {
			t.Errorf("stored fields = %+v, want %+v", cfg.Fields, want)
		}
		if tl.Type != parley.ToolSubmitForm || !tl.IsActive {
			t.Errorf("stored type %s, active %v", tl.Type, tl.IsActive)
		}
		if row := mustRunStep(ctx, t, "row", chromedp.Text(chromedp.CSS("#tool-"+tl.ID))); !strings.Contains(row, "Lead capture") || !strings.Contains(row, "active") {
			t.Errorf("row = %q", row)
		}
	})

	t.Run("GenerateQuote", func(t *testing.T) {
		mustStep(t, "choosing the type", chromedp.Do(ctx,
			chromedp.Navigate(b.ts.URL+"/admin/tools/new"),
			chooseOption("type", parley.ToolGenerateQuote),
			// htmx swaps in the price list editor.
			chromedp.WaitVisible(chromedp.ID("currency")),
		))
		mustStep(t, "filling the price list", chromedp.Do(ctx,
			fillField("name", "Quote"),
			fillField("description", "Prices a quote from the price list."),
			fillField("currency", "EUR"),
			fillField("taxRate", "20"),
			fillField("validityDays", "15"),
			fillField("item-0-name", "Audit"),
			fillField("item-0-unitPrice", "1200"),
			fillField("item-0-unit", "day"),
			chromedp.Click(chromedp.ID("add-item")),
			chromedp.WaitVisible(chromedp.ID("item-1-name")),
			fillField("item-1-name", "Training"),
			fillField("item-1-unitPrice", "450.50"),
			fillField("item-1-unit", "session"),
			fillField("item-1-options", "Remote=0; Materials=25"),
		))
		if status := submitForm(ctx, t, "#save-tool"); status != http.StatusOK {
			t.Fatalf("after saving: status %d", status)
		}
		tl := toolNamed(t, b, ten.ID, "Quote")
		var cfg parley.QuoteConfig
		mustStep(t, "reading the config", json.Unmarshal(tl.Config, &cfg))
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
		names := mustRunStep(ctx, t, "names", chromedp.Evaluate[[]string](`[...document.querySelectorAll('#tools tbody tr td:first-child')].map(td => td.textContent.trim())`))
		if strings.Join(names, ",") != "Contact request,Quote" {
			t.Errorf("listed tools = %v", names)
		}
	})

	t.Run("Edit", func(t *testing.T) {
		tl := toolNamed(t, b, ten.ID, "Quote")
		mustStep(t, "opening the tool", chromedp.Do(ctx, chromedp.Navigate(b.ts.URL+"/admin/tools/"+tl.ID)))
		if v := mustRunStep(ctx, t, "second item", chromedp.Value(chromedp.ID("item-1-options"))); v != "Remote=0; Materials=25" {
			t.Errorf("options shown = %q", v)
		}
		mustStep(t, "editing", chromedp.Do(ctx,
			fillField("name", "Quote builder"),
			chromedp.Click(chromedp.ID("isActive")),
			fillField("item-0-unitPrice", "1350.25"),
		))
		if status := submitForm(ctx, t, "#save-tool"); status != http.StatusOK {
			t.Fatalf("after saving: status %d", status)
		}
		got, err := b.db.Tool(context.Background(), ten.ID, tl.ID)
		mustStep(t, "reading the tool", err)
		var cfg parley.QuoteConfig
		mustStep(t, "reading the config", json.Unmarshal(got.Config, &cfg))
		if got.Name != "Quote builder" || got.IsActive || len(cfg.Items) != 2 || cfg.Items[0].UnitPrice != 1350.25 || len(cfg.Items[1].Options) != 2 {
			t.Errorf("after editing: %s active %v, %+v", got.Name, got.IsActive, cfg)
		}
		if row := mustRunStep(ctx, t, "row", chromedp.Text(chromedp.CSS("#tool-"+tl.ID))); !strings.Contains(row, "Quote builder") || !strings.Contains(row, "inactive") {
			t.Errorf("row = %q", row)
		}
	})

	t.Run("Delete", func(t *testing.T) {
		tl := toolNamed(t, b, ten.ID, "Contact request")
		row := "#tool-" + tl.ID
		mustStep(t, "opening the list", chromedp.Do(ctx, chromedp.Navigate(b.ts.URL+"/admin/tools"), chromedp.WaitVisible(chromedp.CSS(row))))
		if msg := clickAndConfirm(ctx, t, row+" button.danger"); !strings.Contains(msg, "Delete the tool Contact request?") {
			t.Errorf("confirmation = %q", msg)
		}
		mustStep(t, "waiting for the row to go", chromedp.Do(ctx, chromedp.WaitNotPresent(chromedp.CSS(row))))
		if loc := mustRunStep(ctx, t, "location", chromedp.Location()); loc != b.ts.URL+"/admin/tools" {
			t.Errorf("location after deleting = %s", loc)
		}
		if _, err := b.db.Tool(context.Background(), ten.ID, tl.ID); parley.ErrorKind(err) != parley.KindNotFound {
			t.Errorf("the tool is still stored: %v", err)
		}
	})
}

func TestAdminConfigProductsBrowser(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ten := b.ownedTenant(t, "builder")
	ctx := browserTab(t)
	// Another product, so that the search has something to leave out.
	_, _, err := b.db.UpsertProduct(context.Background(), ten.ID, db.ProductWrite{Name: parley.Some("Office chair"), IsActive: parley.Some(true)})
	mustStep(t, "creating a product", err)
	openSignedIn(ctx, t, b, ten, "/admin/products")

	mustStep(t, "filling the form", chromedp.Do(ctx,
		chromedp.Click(chromedp.ID("new-product")),
		chromedp.WaitVisible(chromedp.ID("product-form")),
		fillField("name", "Trail runner"),
		fillField("description", "A light shoe for muddy paths."),
		fillField("price", "89.90"),
		fillField("currency", "eur"),
		fillField("url", "https://shop.example.com/trail"),
		fillField("tags", "shoes, running"),
	))
	if status := submitForm(ctx, t, "#save-product"); status != http.StatusOK {
		t.Fatalf("after creating: status %d", status)
	}
	ps, _, err := b.db.ListProducts(context.Background(), ten.ID, db.ProductQuery{Search: "Trail runner", Page: 1, Limit: 10})
	mustStep(t, "listing products", err)
	if len(ps) != 1 {
		t.Fatalf("stored products named Trail runner: %d", len(ps))
	}
	p := ps[0]
	if p.Price == nil || *p.Price != 89.9 || strOrEmpty(p.Currency) != "EUR" || strings.Join(p.Tags, ",") != "shoes,running" || !p.IsActive {
		t.Errorf("stored %+v", p)
	}
	row := "#product-" + p.ID

	t.Run("Search", func(t *testing.T) {
		mustStep(t, "searching", chromedp.Do(ctx,
			chromedp.WaitVisible(chromedp.CSS(row)),
			keyIn(chromedp.ID("product-search"), "trail"),
		))
		// "tra" already leaves one row: the list and the address are read
		// once the request for the whole word has answered (at most 10 s).
		_, _ = chromedp.Run(ctx, chromedp.Poll[bool](`location.search.includes('search=trail')`, chromedp.WithPollingTimeout(10*time.Second)))
		mustStep(t, "waiting for the filtered list", chromedp.Do(ctx, chromedp.Poll[chromedp.Void](
			`document.querySelectorAll('#products tbody tr').length === 1 && document.querySelector('#products tbody tr').id === `+jsString("product-"+p.ID))))
		if loc := mustRunStep(ctx, t, "location", chromedp.Location()); !strings.Contains(loc, "search=trail") {
			t.Errorf("the search is not in the address: %s", loc)
		}
	})

	t.Run("Edit", func(t *testing.T) {
		mustStep(t, "editing", chromedp.Do(ctx,
			chromedp.Navigate(b.ts.URL+"/admin/products/"+p.ID),
			fillField("price", "79"),
			fillField("tags", "shoes"),
		))
		if status := submitForm(ctx, t, "#save-product"); status != http.StatusOK {
			t.Fatalf("after saving: status %d", status)
		}
		got, err := b.db.Product(context.Background(), ten.ID, p.ID)
		mustStep(t, "reading the product", err)
		if got.Price == nil || *got.Price != 79 || strings.Join(got.Tags, ",") != "shoes" || strOrEmpty(got.URL) != "https://shop.example.com/trail" {
			t.Errorf("after editing %+v", got)
		}
		if price := mustRunStep(ctx, t, "price", chromedp.Text(chromedp.CSS(row+" td:nth-child(2)"))); price != "79.00 EUR" {
			t.Errorf("listed price = %q", price)
		}
	})

	t.Run("Delete", func(t *testing.T) {
		if msg := clickAndConfirm(ctx, t, row+" button.danger"); !strings.Contains(msg, "Delete the product Trail runner?") {
			t.Errorf("confirmation = %q", msg)
		}
		mustStep(t, "waiting for the row to go", chromedp.Do(ctx, chromedp.WaitNotPresent(chromedp.CSS(row))))
		if _, err := b.db.Product(context.Background(), ten.ID, p.ID); parley.ErrorKind(err) != parley.KindNotFound {
			t.Errorf("the product is still stored: %v", err)
		}
	})
}

func TestAdminConfigVisitorsBrowser(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ten := b.ownedTenant(t, "builder")
	tok := b.token(t, ten.ID, auth.ScopeVisitorsRead, auth.ScopeVisitorsWrite)
	status, body := b.do(t, "POST", "/tenants/"+ten.Slug+"/visitors", tok, map[string]any{
		"email": "ada@example.com", "displayName": "Ada", "phone": "+33 1 23 45 67 89", "authProvider": "google",
		"externalId": "crm-42", "metadata": map[string]any{"plan": "pro", "seats": 12},
	})
	if status != http.StatusCreated {
		t.Fatalf("creating a visitor: %d %v", status, body)
	}
	id := body["id"].(string)
	ctx := browserTab(t)
	openSignedIn(ctx, t, b, ten, "/admin/visitors")

	t.Run("Profile", func(t *testing.T) {
		mustStep(t, "opening the list", chromedp.Do(ctx,
			chromedp.Click(chromedp.CSS("#visitor-"+id+" a")),
			chromedp.WaitVisible(chromedp.ID("profile")),
		))
		for sel, want := range map[string]string{
			"visitor-email": "ada@example.com", "visitor-name": "Ada", "visitor-phone": "+33 1 23 45 67 89",
			"visitor-provider": "google", "visitor-external-id": "crm-42", "conversation-count": "0", "memory-count": "0",
		} {
			if got := mustRunStep(ctx, t, sel, chromedp.Text(chromedp.ID(sel))); got != want {
				t.Errorf("#%s = %q, want %q", sel, got, want)
			}
		}
		if md := mustRunStep(ctx, t, "metadata", chromedp.Text(chromedp.ID("visitor-metadata"))); md != "{\n  \"plan\": \"pro\",\n  \"seats\": 12\n}" {
			t.Errorf("metadata shown = %q", md)
		}
	})

	t.Run("Memory", func(t *testing.T) {
		mustStep(t, "adding a fact", chromedp.Do(ctx, fillField("key", "company_size"), fillField("value", "50 people")))
		if status := submitForm(ctx, t, "#add-fact"); status != http.StatusOK {
			t.Fatalf("after adding: status %d", status)
		}
		if v := mustRunStep(ctx, t, "fact", chromedp.Text(chromedp.CSS("#fact-company_size td:nth-child(2)"))); v != "50 people" {
			t.Errorf("fact shown = %q", v)
		}
		if n := mustRunStep(ctx, t, "count", chromedp.Text(chromedp.ID("memory-count"))); n != "1" {
			t.Errorf("memory count = %q", n)
		}
		if f, err := b.db.Memory(context.Background(), ten.ID, id, "company_size"); err != nil || f.Value != "50 people" {
			t.Errorf("stored fact %+v, %v", f, err)
		}
		if msg := clickAndConfirm(ctx, t, "#fact-company_size button"); !strings.Contains(msg, "Forget company_size?") {
			t.Errorf("confirmation = %q", msg)
		}
		mustStep(t, "waiting for the row to go", chromedp.Do(ctx, chromedp.WaitNotPresent(chromedp.ID("fact-company_size"))))
		if n := mustRunStep(ctx, t, "count", chromedp.Text(chromedp.ID("memory-count"))); n != "0" {
			t.Errorf("memory count after deleting = %q", n)
		}
		if _, err := b.db.Memory(context.Background(), ten.ID, id, "company_size"); parley.ErrorKind(err) != parley.KindNotFound {
			t.Errorf("the fact is still stored: %v", err)
		}
	})

	t.Run("Erase", func(t *testing.T) {
		if txt := mustRunStep(ctx, t, "explanation", chromedp.Text(chromedp.ID("erase"))); !strings.Contains(txt, "memory and their conversations permanently") {
			t.Errorf("erase section = %q", txt)
		}
		if msg := clickAndConfirm(ctx, t, "#erase-visitor"); !strings.Contains(msg, "deleted permanently") {
			t.Errorf("confirmation = %q", msg)
		}
		// htmx sends the browser to the list.
		waitUntil(ctx, t, "the list", `location.pathname === '/admin/visitors' && document.readyState === 'complete'`)
		if loc := mustRunStep(ctx, t, "location", chromedp.Location()); loc != b.ts.URL+"/admin/visitors" {
			t.Errorf("after erasing at %s", loc)
		}
		if flash := okFlash(ctx, t); !strings.Contains(flash, "Visitor erased") {
			t.Errorf("flash = %q", flash)
		}
		if status, body := b.do(t, "GET", "/tenants/"+ten.Slug+"/visitors/"+id, tok, nil); status != http.StatusNotFound {
			t.Errorf("the visitor is still there: %d %v", status, body)
		}
	})
}

func TestAdminConfigMCPBrowser(t *testing.T) {
	t.Parallel()
	b := setup(t)

	t.Run("Builder", func(t *testing.T) {
		t.Parallel()
		ten := b.ownedTenant(t, "builder")
		ctx := browserTab(t)
		openSignedIn(ctx, t, b, ten, "/admin/mcp-tools")
		const key = "sk-mcp-very-secret-9431"
		mustStep(t, "filling the form", chromedp.Do(ctx,
			fillField("mcpToolsUrl", "https://mcp.example.com/mcp"),
			fillField("mcpToolsApiKey", key),
			fillField("mcpToolsMaxTools", "5"),
		))
		if status := submitForm(ctx, t, "#save-mcp"); status != http.StatusOK {
			t.Fatalf("after saving: status %d", status)
		}
		if msg := mustRunStep(ctx, t, "key status", chromedp.Text(chromedp.ID("key-status"))); !strings.Contains(msg, "A key is set") {
			t.Errorf("key status = %q", msg)
		}
		html := mustRunStep(ctx, t, "page", chromedp.OuterHTML(chromedp.CSS("html")))
		if strings.Contains(html, key) {
			t.Error("the API key is shown")
		}
		if v := mustRunStep(ctx, t, "key field", chromedp.Value(chromedp.ID("mcpToolsApiKey"))); v != "" {
			t.Errorf("key field = %q", v)
		}
		s, err := b.db.MCPSettings(context.Background(), ten.ID)
		mustStep(t, "reading the settings", err)
		plain, err := b.box.Open(s.SealedAPIKey)
		if err != nil || string(plain) != key || strOrEmpty(s.URL) != "https://mcp.example.com/mcp" || s.MaxTools != 5 {
			t.Errorf("stored %q %d, key %q (%v)", strOrEmpty(s.URL), s.MaxTools, plain, err)
		}

		// Saving again without typing a key keeps it.
		mustStep(t, "editing", chromedp.Do(ctx, fillField("mcpToolsMaxTools", "7")))
		if status := submitForm(ctx, t, "#save-mcp"); status != http.StatusOK {
			t.Fatalf("after saving again: status %d", status)
		}
		s, err = b.db.MCPSettings(context.Background(), ten.ID)
		mustStep(t, "reading the settings", err)
		if plain, err := b.box.Open(s.SealedAPIKey); err != nil || string(plain) != key || s.MaxTools != 7 {
			t.Errorf("after a save without a key: key %q, max %d", plain, s.MaxTools)
		}

		if msg := clickAndConfirm(ctx, t, "#remove-mcp"); !strings.Contains(msg, "Remove the MCP configuration?") {
			t.Errorf("confirmation = %q", msg)
		}
		waitUntil(ctx, t, "the page", `document.readyState === 'complete' && (document.querySelector('.flash.ok') || {}).textContent === 'MCP configuration removed.'`)
		if msg := mustRunStep(ctx, t, "key status", chromedp.Text(chromedp.ID("key-status"))); !strings.Contains(msg, "No key is set") {
			t.Errorf("key status after removing = %q", msg)
		}
		if s, _ := b.db.MCPSettings(context.Background(), ten.ID); s.URL != nil || s.SealedAPIKey != nil {
			t.Errorf("after removing: %+v", s)
		}
	})

	t.Run("Starter", func(t *testing.T) {
		t.Parallel()
		ten := b.ownedTenant(t, "starter")
		ctx := browserTab(t)
		openSignedIn(ctx, t, b, ten, "/admin/mcp-tools")
		if msg := mustRunStep(ctx, t, "upgrade", chromedp.Text(chromedp.ID("mcp-upgrade"))); !strings.Contains(msg, "builder plan") || !strings.Contains(msg, "starter") {
			t.Errorf("upgrade message = %q", msg)
		}
		if n := mustRunStep(ctx, t, "forms", chromedp.Evaluate[int](`document.querySelectorAll('#mcp-form').length`)); n != 0 {
			t.Error("a starter tenant is shown the form")
		}
	})
}

// otherTenantData stores a tool, a product and a visitor with a fact for tenantID.
func otherTenantData(t *testing.T, b *bundle, tenantID string) (toolID, productID, visitorID string) {
	t.Helper()
	ctx := context.Background()
	tl, err := b.db.CreateTool(ctx, tenantID, db.ToolWrite{Name: parley.Some("Theirs"), Description: parley.Some("Not yours."),
		Type: parley.Some(parley.ToolRecommendProduct), Config: parley.Some(json.RawMessage(`{"maxResults":3}`))})
	mustStep(t, "creating a tool", err)
	p, _, err := b.db.UpsertProduct(ctx, tenantID, db.ProductWrite{Name: parley.Some("Their product")})
	mustStep(t, "creating a product", err)
	v, err := b.db.CreateVisitor(ctx, tenantID, db.VisitorWrite{Email: parley.Some("them@example.com")})
	mustStep(t, "creating a visitor", err)
	_, err = b.db.UpsertMemory(ctx, tenantID, v.ID, "secret", "theirs")
	mustStep(t, "storing a fact", err)
	return tl.ID, p.ID, v.ID
}

func TestAdminConfigIsolation(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t, nil)
	mine, theirs := b.ownedTenant(t, "builder"), b.newTenant(t, "builder")
	toolID, productID, visitorID := otherTenantData(t, b, theirs.ID)
	c := b.newAdminClient(t)
	c.signIn(mine)
	c.get("/admin/tools")

	c.expectNotFound(t, []adminCall{
		{"ShowTool", "GET", "/admin/tools/" + toolID, nil, false},
		{"EditTool", "POST", "/admin/tools/" + toolID, url.Values{"name": {"Mine now"}, "description": {"x"}, "position": {"0"}, "maxResults": {"3"}}, false},
		{"DeleteTool", "POST", "/admin/tools/" + toolID + "/delete", url.Values{}, true},
		{"ShowProduct", "GET", "/admin/products/" + productID, nil, false},
		{"EditProduct", "POST", "/admin/products/" + productID, url.Values{"name": {"Mine now"}}, false},
		{"DeleteProduct", "POST", "/admin/products/" + productID + "/delete", url.Values{}, true},
		{"ShowVisitor", "GET", "/admin/visitors/" + visitorID, nil, false},
		{"EditVisitor", "POST", "/admin/visitors/" + visitorID, url.Values{"email": {"mine@example.com"}}, false},
		{"AddFact", "POST", "/admin/visitors/" + visitorID + "/memory", url.Values{"key": {"k"}, "value": {"v"}}, false},
		{"DeleteFact", "POST", "/admin/visitors/" + visitorID + "/memory/secret/delete", url.Values{}, true},
		{"EraseVisitor", "POST", "/admin/visitors/" + visitorID + "/erase", url.Values{}, true},
		{"NotAnID", "GET", "/admin/tools/not-a-uuid", nil, false},
	})

	// Nothing of theirs changed.
	ctx := context.Background()
	if tl, err := b.db.Tool(ctx, theirs.ID, toolID); err != nil || tl.Name != "Theirs" {
		t.Errorf("their tool: %+v, %v", tl, err)
	}
	if p, err := b.db.Product(ctx, theirs.ID, productID); err != nil || p.Name != "Their product" {
		t.Errorf("their product: %+v, %v", p, err)
	}
	if v, err := b.db.VisitorDetail(ctx, theirs.ID, visitorID); err != nil || strOrEmpty(v.Email) != "them@example.com" || v.MemoryCount != 1 {
		t.Errorf("their visitor: %+v, %v", v, err)
	}
	// Their segment cannot be given to my tool either.
	seg, err := b.db.DefaultSegment(ctx, theirs.ID)
	mustStep(t, "reading their segment", err)
	c.get("/admin/tools/new")
	p := c.submit("/admin/tools", url.Values{"type": {parley.ToolRecommendProduct}, "name": {"Mine"}, "description": {"d"},
		"position": {"0"}, "maxResults": {"3"}, "segmentId": {seg.ID}, "isActive": {"true"}})
	if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.text("#err-segmentId"), "no segment") {
		t.Errorf("their segment: %d %q", p.status, p.text("#err-segmentId"))
	}
}

func TestAdminConfigValidation(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t, nil)
	ten := b.ownedTenant(t, "builder")
	c := b.newAdminClient(t)
	c.signIn(ten)
	ctx := context.Background()
	v, err := b.db.CreateVisitor(ctx, ten.ID, db.VisitorWrite{Email: parley.Some("grace@example.com")})
	mustStep(t, "creating a visitor", err)
	_, err = b.db.CreateTool(ctx, ten.ID, db.ToolWrite{Name: parley.Some("Taken"), Description: parley.Some("d"),
		Type: parley.Some(parley.ToolRememberFact), Config: parley.Some(json.RawMessage(`{"allowedKeys":[]}`))})
	mustStep(t, "creating a tool", err)

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
			cc := c.as(t)
			cc.get(tc.page)
			p := cc.submit(tc.path, tc.form)
			if p.status != tc.status {
				t.Fatalf("status %d, want %d: %s", p.status, tc.status, p.text("main"))
			}
			if msg := p.text("#" + tc.errID); !strings.Contains(msg, tc.errText) {
				t.Errorf("#%s = %q, want it to contain %q", tc.errID, msg, tc.errText)
			}
			if p.doc.Find(`form input[name="_csrf"]`).Length() == 0 {
				t.Error("the re-rendered form has no CSRF token")
			}
		})
	}

	// Nothing invalid was stored.
	if tools, _ := b.db.ListTools(ctx, ten.ID); len(tools) != 1 {
		t.Errorf("tools stored: %d, want only the first", len(tools))
	}
	if _, total, _ := b.db.ListProducts(ctx, ten.ID, db.ProductQuery{Page: 1, Limit: 10}); total != 0 {
		t.Errorf("products stored: %d", total)
	}
	if got, _ := b.db.VisitorDetail(ctx, ten.ID, v.ID); strOrEmpty(got.Email) != "grace@example.com" || got.MemoryCount != 0 {
		t.Errorf("visitor after failed saves: %+v", got)
	}
	if s, _ := b.db.MCPSettings(ctx, ten.ID); s.URL != nil {
		t.Errorf("MCP settings stored: %+v", s)
	}

	t.Run("MCPOnStarter", func(t *testing.T) {
		starter := b.ownedTenant(t, "starter")
		sc := b.newAdminClient(t)
		sc.signIn(starter)
		p := sc.get("/admin/mcp-tools")
		if p.status != http.StatusOK || p.doc.Find("#mcp-form").Length() != 0 || !strings.Contains(p.text("#mcp-upgrade"), "builder") {
			t.Errorf("starter page: %d, form %d", p.status, p.doc.Find("#mcp-form").Length())
		}
		p = sc.submit("/admin/mcp-tools", url.Values{"mcpToolsUrl": {"https://mcp.example.com"}, "mcpToolsMaxTools": {"10"}})
		if p.status != http.StatusPaymentRequired {
			t.Errorf("saving on starter: %d", p.status)
		}
	})

	t.Run("ConfigFragment", func(t *testing.T) {
		cc := c.as(t)
		p := cc.do("GET", "/admin/tools/config-fields?type="+parley.ToolBookMeeting, nil, map[string]string{"HX-Request": "true"})
		if p.status != http.StatusOK || p.doc.Find("#durationMinutes").AttrOr("value", "") != "30" || !strings.Contains(p.text("#calendar-note"), "calendar connector") {
			t.Errorf("BOOK_MEETING fragment: %d %s", p.status, p.body)
		}
		if p := cc.get("/admin/tools/config-fields?type=EXPLORE_CORPUS"); p.status != http.StatusBadRequest {
			t.Errorf("a synthetic type's fragment: %d", p.status)
		}
	})
}

func TestAdminConfigWebhookSecret(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t, nil)
	ten := b.ownedTenant(t, "builder")
	c := b.newAdminClient(t)
	c.signIn(ten)
	const secret = "whsec-do-not-show-5521"
	c.get("/admin/tools/new?type=" + parley.ToolEscalateToHuman)
	p := c.submit("/admin/tools", url.Values{"type": {parley.ToolEscalateToHuman}, "name": {"Handoff"}, "description": {"Hands over to a person."},
		"position": {"0"}, "isActive": {"true"}, "handoffMessage": {"A colleague takes over."},
		"webhookUrl": {"https://hooks.example.com/parley"}, "webhookSecret": {secret}})
	if p.status != http.StatusSeeOther || p.location() != "/admin/tools" {
		t.Fatalf("creating: %d to %q: %s", p.status, p.location(), p.text("main"))
	}
	tl := toolNamed(t, b, ten.ID, "Handoff")
	if plain, err := b.box.Open(tl.WebhookSecret); err != nil || string(plain) != secret || strOrEmpty(tl.WebhookURL) != "https://hooks.example.com/parley" {
		t.Fatalf("stored secret %q (%v), url %q", plain, err, strOrEmpty(tl.WebhookURL))
	}

	edit := c.get("/admin/tools/" + tl.ID)
	if !strings.Contains(edit.text("#secret-status"), "A secret is set") || strings.Contains(edit.body, secret) {
		t.Errorf("edit page: status %q, secret shown %v", edit.text("#secret-status"), strings.Contains(edit.body, secret))
	}
	if v := edit.doc.Find("#handoffMessage").Text(); v != "A colleague takes over." {
		t.Errorf("handoff message shown = %q", v)
	}

	// Saving without a new secret keeps it; ticking "remove" clears it.
	form := formValues(edit.doc.Find("#tool-form"))
	form.Set("name", "Human handoff")
	if p := c.submit("/admin/tools/"+tl.ID, form); p.status != http.StatusSeeOther {
		t.Fatalf("saving: %d %s", p.status, p.text("main"))
	}
	if got, _ := b.db.Tool(context.Background(), ten.ID, tl.ID); got.Name != "Human handoff" || got.WebhookSecret == nil {
		t.Errorf("after saving without a secret: %q, secret kept %v", got.Name, got.WebhookSecret != nil)
	}
	form.Set("clearWebhookSecret", "true")
	if p := c.submit("/admin/tools/"+tl.ID, form); p.status != http.StatusSeeOther {
		t.Fatalf("removing the secret: %d %s", p.status, p.text("main"))
	}
	if got, _ := b.db.Tool(context.Background(), ten.ID, tl.ID); got.WebhookSecret != nil {
		t.Error("the secret is still stored")
	}
	if p := c.get("/admin/tools/" + tl.ID); !strings.Contains(p.text("#secret-status"), "No secret is set") {
		t.Errorf("after removing: %q", p.text("#secret-status"))
	}
}
