package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/web/webtest"
)

func TestVisitors(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)

	t.Run("CreateValidate", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "scale")
		path := "/tenants/" + ten.Slug + "/visitors"
		st, v := b.Do(t, "POST", path, ten.Token, map[string]any{"email": "Ada@Example.com", "displayName": "Ada", "phone": "+33 1 23 45 67 89",
			"authProvider": "google", "metadata": map[string]any{"plan": "pro"}})
		if st != 201 || v["email"] != "ada@example.com" || v["memoryCount"] != float64(0) || v["conversationCount"] != float64(0) || v["metadata"].(map[string]any)["plan"] != "pro" {
			t.Fatalf("create: %d %v", st, v)
		}
		cases := []struct {
			name, field string
			body        map[string]any
		}{
			{"NoIdentity", "email", map[string]any{"displayName": "x"}},
			{"BadEmail", "email", map[string]any{"email": "not-an-email"}},
			{"DuplicateEmail", "email", map[string]any{"email": "ADA@example.com"}},
			{"ExternalID256", "externalId", map[string]any{"externalId": strings.Repeat("x", 256)}},
			{"Name256", "displayName", map[string]any{"externalId": "n1", "displayName": strings.Repeat("n", 256)}},
			{"BadPhone", "phone", map[string]any{"externalId": "p1", "phone": "call me"}},
			{"MetadataArray", "metadata", map[string]any{"externalId": "m1", "metadata": []int{1}}},
			{"MetadataTooBig", "metadata", map[string]any{"externalId": "m2", "metadata": map[string]any{"x": strings.Repeat("a", 17000)}}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				st, body := b.Do(t, "POST", path, ten.Token, tc.body)
				if st != 400 && st != 409 {
					t.Fatalf("want 400 or 409, got %d %v", st, body)
				}
				if d, _ := body["details"].(map[string]any); d[tc.field] == nil {
					t.Errorf("details lack %s: %v", tc.field, body)
				}
			})
		}
		if st, body := b.Do(t, "POST", path, ten.Token, map[string]any{"externalId": strings.Repeat("x", 255)}); st != 201 {
			t.Errorf("externalId of 255: %d %v", st, body)
		}
	})

	t.Run("ListSearchPaginate", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "scale")
		path := "/tenants/" + ten.Slug + "/visitors"
		for i := 0; i < 5; i++ {
			b.Do(t, "POST", path, ten.Token, map[string]any{"email": fmt.Sprintf("user%d@shop.test", i), "displayName": fmt.Sprintf("User %d", i)})
		}
		b.Do(t, "POST", path, ten.Token, map[string]any{"externalId": "crm-42", "displayName": "Grace Hopper"})
		_, list := b.Do(t, "GET", path, ten.Token, nil)
		if list["total"] != float64(6) || list["limit"] != float64(50) || list["offset"] != float64(0) || len(list["visitors"].([]any)) != 6 {
			t.Errorf("defaults: %v", list)
		}
		_, page := b.Do(t, "GET", path+"?limit=2&offset=4", ten.Token, nil)
		if page["total"] != float64(6) || len(page["visitors"].([]any)) != 2 {
			t.Errorf("page: %v", page)
		}
		for q, want := range map[string]float64{"?search=grace": 1, "?search=CRM-4": 1, "?search=shop.test": 5, "?search=%25": 0} {
			_, found := b.Do(t, "GET", path+q, ten.Token, nil)
			if found["total"] != want {
				t.Errorf("%s: total %v, want %v", q, found["total"], want)
			}
		}
		for _, q := range []string{"?limit=0", "?limit=201", "?offset=-1", "?limit=abc"} {
			if st, _ := b.Do(t, "GET", path+q, ten.Token, nil); st != 400 {
				t.Errorf("%s: %d", q, st)
			}
		}
		if st, _ := b.Do(t, "GET", path+"?limit=200", ten.Token, nil); st != 200 {
			t.Errorf("limit 200: %d", st)
		}
	})

	t.Run("PatchMemoryDelete", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "scale")
		other := b.NewTenant(t, "scale")
		path := "/tenants/" + ten.Slug + "/visitors"
		_, v := b.Do(t, "POST", path, ten.Token, map[string]any{"email": "bo@x.test", "externalId": "bo"})
		id := v["id"].(string)
		st, upd := b.Do(t, "PATCH", path+"/"+id, ten.Token, map[string]any{"displayName": "Bo"})
		if st != 200 || upd["displayName"] != "Bo" || upd["email"] != "bo@x.test" {
			t.Errorf("patch: %d %v", st, upd)
		}
		b.Do(t, "PATCH", path+"/"+id, ten.Token, map[string]any{"email": nil})
		if st, body := b.Do(t, "PATCH", path+"/"+id, ten.Token, map[string]any{"externalId": nil}); st != 400 {
			t.Errorf("clearing both identities: %d %v", st, body)
		}

		mem := path + "/" + id + "/memory"
		st, f := b.Do(t, "POST", mem, ten.Token, map[string]any{"key": "company", "value": "Acme"})
		if st != 200 || f["key"] != "company" || f["value"] != "Acme" || f["updatedAt"] == nil {
			t.Errorf("remember: %d %v", st, f)
		}
		_, f = b.Do(t, "POST", mem, ten.Token, map[string]any{"key": "company", "value": "Acme Corp"})
		_, f2 := b.Do(t, "POST", mem, ten.Token, map[string]any{"key": "budget", "value": 5000})
		if f["value"] != "Acme Corp" || f2["value"] != "5000" {
			t.Errorf("upsert and number: %v %v", f, f2)
		}
		for _, bad := range []map[string]any{{"value": "x"}, {"key": "a b", "value": "x"}, {"key": "k"}, {"key": "k", "value": ""},
			{"key": "k", "value": map[string]any{}}, {"key": "k", "value": strings.Repeat("v", 2001)}} {
			if st, body := b.Do(t, "POST", mem, ten.Token, bad); st != 400 {
				t.Errorf("%v: %d %v", bad, st, body)
			}
		}
		resp := b.Raw(t, "GET", mem, ten.Token, nil)
		var facts []map[string]any
		webtest.DecodeJSON(t, resp, &facts)
		if len(facts) != 2 || facts[0]["key"] != "budget" {
			t.Errorf("memory list: %v", facts)
		}
		if st, got := b.Do(t, "GET", mem+"/company", ten.Token, nil); st != 200 || got["value"] != "Acme Corp" {
			t.Errorf("get fact: %d %v", st, got)
		}
		_, detail := b.Do(t, "GET", path+"/"+id, ten.Token, nil)
		if detail["memoryCount"] != float64(2) {
			t.Errorf("memoryCount = %v", detail["memoryCount"])
		}
		if st, _ := b.Do(t, "GET", "/tenants/"+other.Slug+"/visitors/"+id+"/memory", other.Token, nil); st != 404 {
			t.Errorf("other tenant reads memory: %d", st)
		}
		if st, _ := b.Do(t, "POST", "/tenants/"+other.Slug+"/visitors/"+id+"/memory", other.Token, map[string]any{"key": "x", "value": "y"}); st != 404 {
			t.Errorf("other tenant writes memory: %d", st)
		}
		st, del := b.Do(t, "DELETE", mem+"/company", ten.Token, nil)
		if st != 200 || del["deleted"] != true || del["key"] != "company" {
			t.Errorf("forget: %d %v", st, del)
		}
		if st, _ := b.Do(t, "GET", mem+"/company", ten.Token, nil); st != 404 {
			t.Errorf("forgotten fact: %d", st)
		}
		if st, _ := b.Do(t, "DELETE", "/tenants/"+other.Slug+"/visitors/"+id, other.Token, nil); st != 404 {
			t.Errorf("other tenant deletes visitor: %d", st)
		}
		st, del = b.Do(t, "DELETE", path+"/"+id, ten.Token, nil)
		if st != 200 || del["deleted"] != true || del["id"] != id {
			t.Errorf("delete: %d %v", st, del)
		}
		var n int
		_ = b.DB.Pool().QueryRow(t.Context(), `SELECT count(*) FROM memory_facts WHERE visitor_id = $1`, id).Scan(&n)
		if n != 0 {
			t.Errorf("%d facts survive their visitor", n)
		}
		if st, _ := b.Do(t, "GET", path+"/"+id, ten.Token, nil); st != http.StatusNotFound {
			t.Errorf("after delete: %d", st)
		}
	})
}

func TestProductsAndMCPSettings(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)

	t.Run("ProductsCRUDAndBulk", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "scale")
		path := "/tenants/" + ten.Slug + "/products"
		st, p := b.Do(t, "POST", path, ten.Token, map[string]any{"name": "Trail shoes", "description": "Light running shoes for mountains",
			"price": 129.9, "currency": "eur", "url": "https://shop.test/shoes", "tags": []string{"running", "outdoor"}, "externalId": "sku-1"})
		if st != 201 || p["currency"] != "EUR" || p["price"] != 129.9 || p["isActive"] != true {
			t.Fatalf("create: %d %v", st, p)
		}
		st, p2 := b.Do(t, "POST", path, ten.Token, map[string]any{"name": "Trail shoes v2", "externalId": "sku-1"})
		if st != 200 || p2["id"] != p["id"] || p2["price"] != 129.9 {
			t.Errorf("upsert by externalId keeps unsent fields: %d %v", st, p2)
		}
		for _, bad := range []map[string]any{{"price": 1}, {"name": "x", "price": 1}, {"name": "x", "price": -1, "currency": "EUR"},
			{"name": "x", "price": 1.001, "currency": "EUR"}, {"name": "x", "currency": "euro"}, {"name": strings.Repeat("n", 256)},
			{"name": "x", "url": "nope"}} {
			if st, body := b.Do(t, "POST", path, ten.Token, bad); st != 400 {
				t.Errorf("%v: %d %v", bad, st, body)
			}
		}
		items := []map[string]any{}
		for i := 0; i < 3; i++ {
			items = append(items, map[string]any{"externalId": fmt.Sprintf("b-%d", i), "name": fmt.Sprintf("Bag %d", i)})
		}
		items = append(items, map[string]any{"externalId": "sku-1", "name": "Trail shoes v3"}, map[string]any{"name": "no id"},
			map[string]any{"externalId": "bad", "name": "x", "price": 5})
		st, res := b.Do(t, "POST", path+"/bulk", ten.Token, map[string]any{"products": items})
		if st != 200 || res["created"] != float64(3) || res["updated"] != float64(1) || len(res["errors"].([]any)) != 2 {
			t.Errorf("bulk: %d %v", st, res)
		} else if e := res["errors"].([]any); e[0].(map[string]any)["index"] != float64(4) || e[1].(map[string]any)["index"] != float64(5) {
			t.Errorf("bulk errors name items 4 and 5: %v", e)
		}
		big := make([]map[string]any, 101)
		for i := range big {
			big[i] = map[string]any{"externalId": fmt.Sprint(i), "name": "x"}
		}
		if st, _ := b.Do(t, "POST", path+"/bulk", ten.Token, map[string]any{"products": big}); st != 400 {
			t.Errorf("101 products: %d", st)
		}
		_, list := b.Do(t, "GET", path+"?search=shoe", ten.Token, nil)
		if list["pagination"].(map[string]any)["total"] != float64(1) {
			t.Errorf("search: %v", list)
		}
		_, all := b.Do(t, "GET", path+"?limit=2", ten.Token, nil)
		if pg := all["pagination"].(map[string]any); pg["total"] != float64(4) || pg["pages"] != float64(2) {
			t.Errorf("pagination: %v", pg)
		}
		id := p["id"].(string)
		st, upd := b.Do(t, "PATCH", path+"/"+id, ten.Token, map[string]any{"isActive": false, "price": nil})
		if st != 200 || upd["isActive"] != false || upd["price"] != nil || upd["currency"] != "EUR" {
			t.Errorf("patch: %d %v", st, upd)
		}
		_, active := b.Do(t, "GET", path+"?isActive=true", ten.Token, nil)
		if active["pagination"].(map[string]any)["total"] != float64(3) {
			t.Errorf("active filter: %v", active)
		}
		other := b.NewTenant(t, "scale")
		if st, _ := b.Do(t, "GET", "/tenants/"+other.Slug+"/products/"+id, other.Token, nil); st != 404 {
			t.Errorf("other tenant reads product: %d", st)
		}
		if st, del := b.Do(t, "DELETE", path+"/"+id, ten.Token, nil); st != 200 || del["id"] != id {
			t.Errorf("delete: %d %v", st, del)
		}
	})

	t.Run("MCPSettings", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "builder")
		path := "/tenants/" + ten.Slug + "/mcp-tools"
		_, got := b.Do(t, "GET", path, ten.Token, nil)
		if got["mcpToolsUrl"] != nil || got["mcpToolsMaxTools"] != float64(10) || got["hasApiKey"] != false || got["plan"] != "builder" {
			t.Errorf("initial: %v", got)
		}
		key := "mcp-secret-key-123"
		st, saved := b.Do(t, "PUT", path, ten.Token, map[string]any{"mcpToolsUrl": "https://tools.example.com/mcp", "mcpToolsApiKey": key, "mcpToolsMaxTools": 20})
		if st != 200 || saved["hasApiKey"] != true || saved["mcpToolsMaxTools"] != float64(20) {
			t.Fatalf("save: %d %v", st, saved)
		}
		if raw := b.RawBody(t, "GET", path, ten.Token); strings.Contains(raw, key) {
			t.Errorf("key echoed: %s", raw)
		}
		raw := b.RawBody(t, "GET", "/tenants/"+ten.Slug, ten.Token)
		if strings.Contains(raw, key) || !strings.Contains(raw, `"mcpToolsUrl":"https://tools.example.com/mcp"`) || !strings.Contains(raw, `"mcpToolsMaxTools":20`) {
			t.Errorf("tenant shows the MCP settings without the key: %s", raw)
		}
		_, kept := b.Do(t, "PUT", path, ten.Token, map[string]any{"mcpToolsUrl": "https://tools.example.com/mcp2"})
		if kept["hasApiKey"] != true || kept["mcpToolsMaxTools"] != float64(20) {
			t.Errorf("absent key and max kept: %v", kept)
		}
		for _, bad := range []map[string]any{{}, {"mcpToolsUrl": "http://tools.example.com/mcp"}, {"mcpToolsUrl": "https://x.test/" + strings.Repeat("p", 490)},
			{"mcpToolsUrl": "https://x.test", "mcpToolsMaxTools": 0}, {"mcpToolsUrl": "https://x.test", "mcpToolsMaxTools": 21},
			{"mcpToolsUrl": "https://x.test", "mcpToolsApiKey": strings.Repeat("k", 501)},
			{"mcpToolsUrl": "https://192.168.1.10/mcp"}, {"mcpToolsUrl": "https://[::1]/mcp"}} {
			if st, body := b.Do(t, "PUT", path, ten.Token, bad); st != 400 {
				t.Errorf("%v: %d %v", bad, st, body)
			}
		}
		if st, del := b.Do(t, "DELETE", path, ten.Token, nil); st != 200 || del["deleted"] != true {
			t.Errorf("delete: %d %v", st, del)
		}
		_, got = b.Do(t, "GET", path, ten.Token, nil)
		if got["mcpToolsUrl"] != nil || got["hasApiKey"] != false {
			t.Errorf("after delete: %v", got)
		}
		starter := b.NewTenant(t, "starter")
		st, body := b.Do(t, "PUT", "/tenants/"+starter.Slug+"/mcp-tools", starter.Token, map[string]any{"mcpToolsUrl": "https://x.test"})
		if st != http.StatusPaymentRequired || body["code"] != "PLAN_REQUIRED" || !strings.Contains(body["error"].(string), "builder") {
			t.Errorf("starter plan: %d %v", st, body)
		}
	})
}

// TestProductLifecycle walks the product catalog through every operation:
// create and upsert, invalid bodies, partial updates, list filters, bulk,
// delete, 404, 403 and 413; each request is also checked to be valid, or
// refused, by openapi.json.
func TestProductLifecycle(t *testing.T) {
	t.Parallel()
	c := &webtest.OpenAPIChecker{T: t, B: webtest.Setup(t)}
	b := c.B
	ten := b.NewTenant(t, "scale")
	base := "/tenants/" + ten.Slug + "/products"
	obj := func(body any) map[string]any { m, _ := body.(map[string]any); return m }
	pagination := func(body any) map[string]any { m, _ := obj(body)["pagination"].(map[string]any); return m }
	products := func(body any) []any { l, _ := obj(body)["products"].([]any); return l }

	status, body := c.Exchange("GET", base, ten.Token, nil, true)
	if p := pagination(body); status != http.StatusOK || len(products(body)) != 0 || p["total"] != float64(0) || p["pages"] != float64(0) || p["limit"] != float64(20) {
		t.Fatalf("GET products of a new tenant: %d %v", status, body)
	}

	// Create: defaults, then every member; the answer is the product itself.
	status, body = c.Exchange("POST", base, ten.Token, map[string]any{"name": " Mug "}, true)
	if p := obj(body); status != http.StatusCreated || p["name"] != "Mug" || p["price"] != nil || p["isActive"] != true || len(p["tags"].([]any)) != 0 {
		t.Fatalf("POST product: %d %v", status, body)
	}
	mugID := obj(body)["id"].(string)
	full := map[string]any{
		"externalId": "sku-1", "name": "Trail shoes", "description": "Grippy soles for muddy trails.", "price": 129.9,
		"currency": "eur", "url": "https://shop.example.com/p/1", "imageUrl": "http://cdn.example.com/1.jpg",
		"tags": []string{"running", " running ", "shoes", ""}, "isActive": true,
	}
	status, body = c.Exchange("POST", base, ten.Token, full, true)
	if p := obj(body); status != http.StatusCreated || p["currency"] != "EUR" || p["price"] != 129.9 || len(p["tags"].([]any)) != 2 || p["externalId"] != "sku-1" {
		t.Fatalf("POST full product: %d %v", status, body)
	}
	shoesID := obj(body)["id"].(string)

	// A known externalId: an upsert, 200, only the members sent change; name is not required.
	status, body = c.Exchange("POST", base, ten.Token, map[string]any{"externalId": "sku-1", "price": 99.5}, true)
	if p := obj(body); status != http.StatusOK || p["id"] != shoesID || p["name"] != "Trail shoes" || p["price"] != 99.5 {
		t.Errorf("POST upsert: %d %v", status, body)
	}
	if status, body = c.Exchange("POST", base, ten.Token, map[string]any{"externalId": "sku-new", "price": 1, "currency": "EUR"}, true); status != http.StatusBadRequest || webtest.ErrorDetails(body)["name"] == nil {
		t.Errorf("POST an unknown externalId without a name: %d %v", status, body)
	}

	// Invalid bodies.
	for what, req := range map[string]map[string]any{
		"noName":      {},
		"blankName":   {"name": " "},
		"nullName":    {"name": nil},
		"longName":    {"name": strings.Repeat("n", 256)},
		"description": {"name": "n", "description": strings.Repeat("d", 5001)},
		"externalId":  {"name": "n", "externalId": strings.Repeat("x", 256)},
		"negative":    {"name": "n", "price": -1, "currency": "EUR"},
		"huge":        {"name": "n", "price": 2e9, "currency": "EUR"},
		"priceType":   {"name": "n", "price": "10"},
		"currency":    {"name": "n", "price": 1, "currency": "EURO"},
		"url":         {"name": "n", "url": "ftp://shop.example.com/p"},
		"imageUrl":    {"name": "n", "imageUrl": "not a url"},
		"tags":        {"name": "n", "tags": strings.Fields("a b c d e f g h i j k l m n o p q r s t u")},
		"tag51":       {"name": "n", "tags": []string{strings.Repeat("t", 51)}},
		"isActive":    {"name": "n", "isActive": nil},
	} {
		status, body = c.Exchange("POST", base, ten.Token, req, false)
		if status != http.StatusBadRequest {
			t.Errorf("POST %s: %d %v", what, status, body)
		}
	}
	for what, req := range map[string]map[string]any{
		"cents":      {"name": "n", "price": 1.234, "currency": "EUR"},
		"noCurrency": {"name": "n", "price": 5},
	} {
		if status, body = c.Exchange("POST", base, ten.Token, req, true); status != http.StatusBadRequest {
			t.Errorf("POST %s: %d %v", what, status, body)
		}
	}
	if status, body = c.Exchange("PATCH", base+"/"+shoesID, ten.Token, map[string]any{"currency": nil}, true); status != http.StatusBadRequest || webtest.ErrorDetails(body)["currency"] != "is required with a price" {
		t.Errorf("PATCH clearing the currency of a priced product: %d %v", status, body)
	}

	// Update (PUT and PATCH both partial), clear, conflict.
	status, body = c.Exchange("PUT", base+"/"+shoesID, ten.Token, map[string]any{"description": "", "tags": nil, "url": nil, "price": nil, "currency": "", "id": "ignored"}, true)
	if p := obj(body); status != http.StatusOK || p["description"] != nil || len(p["tags"].([]any)) != 0 || p["url"] != nil || p["price"] != nil || p["currency"] != nil || p["name"] != "Trail shoes" {
		t.Errorf("PUT clear: %d %v", status, body)
	}
	status, body = c.Exchange("PATCH", base+"/"+mugID, ten.Token, map[string]any{"price": 12, "currency": "usd", "tags": []string{"kitchen"}}, true)
	if p := obj(body); status != http.StatusOK || p["price"] != float64(12) || p["currency"] != "USD" || p["name"] != "Mug" {
		t.Errorf("PATCH product: %d %v", status, body)
	}
	if status, body = c.Exchange("PATCH", base+"/"+mugID, ten.Token, map[string]any{"externalId": "sku-1"}, true); status != http.StatusConflict || webtest.ErrorDetails(body)["externalId"] == nil {
		t.Errorf("PATCH a taken externalId: %d %v", status, body)
	}

	// List: filter, search, paginate, by name.
	if status, body = c.Exchange("POST", base, ten.Token, map[string]any{"name": "Old mug", "isActive": false}, true); status != http.StatusCreated {
		t.Fatalf("POST inactive product: %d %v", status, body)
	}
	status, body = c.Exchange("GET", base+"?isActive=true", ten.Token, nil, true)
	if status != http.StatusOK || pagination(body)["total"] != float64(2) || obj(products(body)[0])["name"] != "Mug" {
		t.Errorf("GET active products: %d %v", status, body)
	}
	for q, want := range map[string]string{"?search=muddy": "", "?search=kitchen": "Mug", "?search=shoe": "Trail shoes"} {
		status, body = c.Exchange("GET", base+q, ten.Token, nil, true)
		if status != http.StatusOK || (want != "" && (len(products(body)) != 1 || obj(products(body)[0])["name"] != want)) {
			t.Errorf("GET products%s: %d %v", q, status, body)
		}
	}
	status, body = c.Exchange("GET", base+"?page=2&limit=1", ten.Token, nil, true)
	if p := pagination(body); status != http.StatusOK || len(products(body)) != 1 || p["page"] != float64(2) || p["limit"] != float64(1) || p["total"] != float64(3) || p["pages"] != float64(3) {
		t.Errorf("GET page 2: %d %v", status, body)
	}
	if status, body = c.Exchange("GET", base+"?page=9", ten.Token, nil, true); status != http.StatusOK || len(products(body)) != 0 {
		t.Errorf("GET past the last page: %d %v", status, body)
	}
	for _, q := range []string{"?limit=101", "?limit=0", "?page=0", "?page=1000001", "?page=x", "?isActive=false", "?isActive=maybe"} {
		if status, body = c.Exchange("GET", base+q, ten.Token, nil, false); status != http.StatusBadRequest {
			t.Errorf("GET products%s: %d %v", q, status, body)
		}
	}

	// Bulk: created, then updated/created with per-item errors.
	bulk := base + "/bulk"
	status, body = c.Exchange("POST", bulk, ten.Token, map[string]any{"products": []any{
		map[string]any{"externalId": "b1", "name": "B1", "price": 1, "currency": "USD"},
		map[string]any{"externalId": "b2", "name": "B2"},
	}}, true)
	if got := obj(body); status != http.StatusOK || got["created"] != float64(2) || got["updated"] != float64(0) || len(got["errors"].([]any)) != 0 {
		t.Fatalf("POST bulk: %d %v", status, body)
	}
	status, body = c.Exchange("POST", bulk, ten.Token, map[string]any{"products": []any{
		map[string]any{"externalId": "b1", "price": 2},
		map[string]any{"externalId": "b3", "name": "B3"},
		map[string]any{"name": "no id"},
		map[string]any{"externalId": "b3", "name": "twice"},
		"not an object",
		map[string]any{"externalId": "b4", "name": "B4", "price": 1.234, "currency": "EUR"},
	}}, false)
	got := obj(body)
	if status != http.StatusOK || got["created"] != float64(1) || got["updated"] != float64(1) || len(got["errors"].([]any)) != 4 {
		t.Fatalf("POST bulk with bad items: %d %v", status, body)
	}
	if e := got["errors"].([]any); obj(e[0])["externalId"] != "" || obj(e[1])["externalId"] != "b3" || obj(e[3])["externalId"] != "b4" {
		t.Errorf("POST bulk errors: %v", e)
	}
	hundredOne := []any{}
	for i := 0; i < 101; i++ {
		hundredOne = append(hundredOne, map[string]any{"externalId": fmt.Sprint(i), "name": "p"})
	}
	for _, req := range []any{map[string]any{"products": []any{}}, map[string]any{"products": "x"}, map[string]any{}, map[string]any{"products": hundredOne}, "not an object"} {
		if status, body = c.Exchange("POST", bulk, ten.Token, req, false); status != http.StatusBadRequest {
			t.Errorf("POST bulk %.60v: %d %v", req, status, body)
		}
	}

	// Read, delete, 404, 403, 413.
	status, body = c.Exchange("GET", base+"/"+mugID, ten.Token, nil, true)
	if status != http.StatusOK || obj(body)["id"] != mugID {
		t.Errorf("GET product: %d %v", status, body)
	}
	status, body = c.Exchange("DELETE", base+"/"+mugID, ten.Token, nil, true)
	if got := obj(body); status != http.StatusOK || got["deleted"] != true || got["id"] != mugID {
		t.Errorf("DELETE product: %d %v", status, body)
	}
	for _, method := range []string{"GET", "PUT", "PATCH", "DELETE"} {
		var req any
		if method == "PUT" || method == "PATCH" {
			req = map[string]any{"name": "x"}
		}
		for _, id := range []string{mugID, "not-a-uuid"} {
			if status, body = c.Exchange(method, base+"/"+id, ten.Token, req, true); status != http.StatusNotFound || obj(body)["error"] != "Product not found" {
				t.Errorf("%s product %s: %d %v", method, id, status, body)
			}
		}
	}
	if status, body = c.Exchange("GET", base, b.Token(t, ten.ID, auth.ScopeVisitorsRead), nil, true); status != http.StatusForbidden || obj(body)["error"] != "Missing scope: tools:read" {
		t.Errorf("GET products with visitors:read: %d %v", status, body)
	}
	if status, body = c.Exchange("POST", bulk, b.Token(t, ten.ID, auth.ScopeToolsRead), map[string]any{"products": []any{map[string]any{"externalId": "x", "name": "x"}}}, true); status != http.StatusForbidden {
		t.Errorf("POST bulk with tools:read: %d %v", status, body)
	}
	if status, body = c.Exchange("POST", base, ten.Token, map[string]any{"name": "n", "description": strings.Repeat("d", 1<<20)}, false); status != http.StatusRequestEntityTooLarge {
		t.Errorf("POST large body: %d %v", status, body)
	}
}

// TestVisitorLifecycle walks visitors and their memory through every
// operation: create, duplicates, list, partial updates, memory upserts and
// its limit, delete with the memory, 404, 403 and 413; each request is also
// checked to be valid, or refused, by openapi.json.
func TestVisitorLifecycle(t *testing.T) {
	t.Parallel()
	c := &webtest.OpenAPIChecker{T: t, B: webtest.Setup(t)}
	b := c.B
	ten := b.NewTenant(t, "scale")
	base := "/tenants/" + ten.Slug + "/visitors"
	obj := func(body any) map[string]any { m, _ := body.(map[string]any); return m }
	visitors := func(body any) []any { l, _ := obj(body)["visitors"].([]any); return l }

	status, body := c.Exchange("GET", base, ten.Token, nil, true)
	if got := obj(body); status != http.StatusOK || len(visitors(body)) != 0 || got["total"] != float64(0) || got["limit"] != float64(50) || got["offset"] != float64(0) {
		t.Fatalf("GET visitors of a new tenant: %d %v", status, body)
	}

	// Create: text trimmed, email lower-cased, counts present.
	status, body = c.Exchange("POST", base, ten.Token, map[string]any{
		"email": " Ada@Example.COM ", "displayName": " Ada ", "phone": "+33 1 23 45 67 89", "authProvider": "email",
		"externalId": "crm-1", "metadata": map[string]any{"plan": "pro"},
	}, true)
	if v := obj(body); status != http.StatusCreated || v["email"] != "ada@example.com" || v["displayName"] != "Ada" || v["memoryCount"] != float64(0) || v["conversationCount"] != float64(0) {
		t.Fatalf("POST visitor: %d %v", status, body)
	}
	adaID := obj(body)["id"].(string)
	status, body = c.Exchange("POST", base, ten.Token, map[string]any{"externalId": "crm-2", "email": ""}, true)
	if v := obj(body); status != http.StatusCreated || v["email"] != nil || len(v["metadata"].(map[string]any)) != 0 {
		t.Fatalf("POST visitor by externalId: %d %v", status, body)
	}
	bobID := obj(body)["id"].(string)

	// Invalid bodies.
	for what, req := range map[string]map[string]any{
		"nothing":      {},
		"blankEmail":   {"email": "   "},
		"email":        {"email": "nope"},
		"phone":        {"email": "a@b.co", "phone": "call me"},
		"metadata":     {"externalId": "x", "metadata": []any{1}},
		"metadataText": {"externalId": "x", "metadata": "x"},
		"displayName":  {"externalId": "x", "displayName": strings.Repeat("d", 256)},
		"authProvider": {"externalId": "x", "authProvider": strings.Repeat("a", 51)},
		"externalId":   {"externalId": strings.Repeat("x", 256)},
		"emailType":    {"email": 5},
	} {
		if status, body = c.Exchange("POST", base, ten.Token, req, false); status != http.StatusBadRequest {
			t.Errorf("POST %s: %d %v", what, status, body)
		}
	}
	if status, body = c.Exchange("POST", base, ten.Token, map[string]any{}, false); webtest.ErrorDetails(body)["email"] != "email or externalId is required" {
		t.Errorf("POST without email or externalId: %d %v", status, body)
	}
	if status, body = c.Exchange("POST", base, ten.Token, map[string]any{"externalId": "x", "metadata": map[string]any{"k": strings.Repeat("v", 17000)}}, true); status != http.StatusBadRequest || webtest.ErrorDetails(body)["metadata"] == nil {
		t.Errorf("POST metadata over 16 KiB: %d %v", status, body)
	}
	// Duplicates: email case-insensitively, externalId exactly.
	if status, body = c.Exchange("POST", base, ten.Token, map[string]any{"email": "ADA@example.com"}, true); status != http.StatusConflict || webtest.ErrorDetails(body)["email"] == nil {
		t.Errorf("POST a taken email: %d %v", status, body)
	}
	if status, body = c.Exchange("POST", base, ten.Token, map[string]any{"externalId": "crm-2"}, true); status != http.StatusConflict || webtest.ErrorDetails(body)["externalId"] == nil {
		t.Errorf("POST a taken externalId: %d %v", status, body)
	}

	// List: search, paginate, newest first.
	status, body = c.Exchange("GET", base+"?search=ADA", ten.Token, nil, true)
	if status != http.StatusOK || obj(body)["total"] != float64(1) || obj(visitors(body)[0])["id"] != adaID {
		t.Errorf("GET visitors?search: %d %v", status, body)
	}
	status, body = c.Exchange("GET", base+"?search=crm&limit=1&offset=1", ten.Token, nil, true)
	if got := obj(body); status != http.StatusOK || got["total"] != float64(2) || got["limit"] != float64(1) || got["offset"] != float64(1) || len(visitors(body)) != 1 || obj(visitors(body)[0])["id"] != adaID {
		t.Errorf("GET visitors page 2: %d %v", status, body)
	}
	for _, q := range []string{"?limit=0", "?limit=201", "?offset=-1", "?offset=x", "?search=" + strings.Repeat("s", 201)} {
		if status, body = c.Exchange("GET", base+q, ten.Token, nil, false); status != http.StatusBadRequest {
			t.Errorf("GET visitors%s: %d %v", q, status, body)
		}
	}

	// Read and update.
	status, body = c.Exchange("GET", base+"/"+adaID, ten.Token, nil, true)
	if status != http.StatusOK || obj(body)["externalId"] != "crm-1" {
		t.Errorf("GET visitor: %d %v", status, body)
	}
	status, body = c.Exchange("PATCH", base+"/"+adaID, ten.Token, map[string]any{"displayName": nil, "phone": "", "metadata": nil, "id": "ignored", "memoryCount": 9}, true)
	if v := obj(body); status != http.StatusOK || v["displayName"] != nil || v["phone"] != nil || len(v["metadata"].(map[string]any)) != 0 || v["email"] != "ada@example.com" || v["memoryCount"] != float64(0) {
		t.Errorf("PATCH visitor: %d %v", status, body)
	}
	if status, body = c.Exchange("PATCH", base+"/"+bobID, ten.Token, map[string]any{"externalId": nil}, true); status != http.StatusBadRequest || webtest.ErrorDetails(body)["email"] == nil {
		t.Errorf("PATCH clearing the only identifier: %d %v", status, body)
	}
	if status, body = c.Exchange("PATCH", base+"/"+bobID, ten.Token, map[string]any{"email": "Ada@example.com"}, true); status != http.StatusConflict {
		t.Errorf("PATCH a taken email: %d %v", status, body)
	}
	if status, body = c.Exchange("PATCH", base+"/"+bobID, ten.Token, map[string]any{"phone": "12"}, false); status != http.StatusBadRequest || webtest.ErrorDetails(body)["phone"] == nil {
		t.Errorf("PATCH a short phone: %d %v", status, body)
	}

	// Memory: upsert by key, values as text, bare array by key.
	mem := base + "/" + adaID + "/memory"
	status, body = c.Exchange("GET", mem, ten.Token, nil, true)
	if l, ok := body.([]any); status != http.StatusOK || !ok || len(l) != 0 {
		t.Fatalf("GET memory of a new visitor: %d %v", status, body)
	}
	for _, tc := range []struct {
		key   string
		value any
		want  string
	}{{"company", "Acme", "Acme"}, {"team_size", 12, "12"}, {"vip", true, "true"}, {"plan.tier-2", 1.5, "1.5"}, {"company", " Acme Ltd ", " Acme Ltd "}} {
		status, body = c.Exchange("POST", mem, ten.Token, map[string]any{"key": tc.key, "value": tc.value}, true)
		if f := obj(body); status != http.StatusOK || f["key"] != tc.key || f["value"] != tc.want {
			t.Errorf("POST memory %s=%v: %d %v", tc.key, tc.value, status, body)
		}
	}
	status, body = c.Exchange("GET", mem, ten.Token, nil, true)
	if l, _ := body.([]any); status != http.StatusOK || len(l) != 4 || obj(l[0])["key"] != "company" || obj(l[1])["key"] != "plan.tier-2" {
		t.Errorf("GET memory: %d %v", status, body)
	}
	if status, body = c.Exchange("GET", base+"/"+adaID, ten.Token, nil, true); obj(body)["memoryCount"] != float64(4) {
		t.Errorf("memoryCount: %d %v", status, body)
	}
	status, body = c.Exchange("GET", mem+"/company", ten.Token, nil, true)
	if status != http.StatusOK || obj(body)["value"] != " Acme Ltd " {
		t.Errorf("GET memory fact: %d %v", status, body)
	}
	for what, req := range map[string]any{
		"badKey":     map[string]any{"key": "bad key", "value": "x"},
		"underscore": map[string]any{"key": "_x", "value": "x"},
		"longKey":    map[string]any{"key": strings.Repeat("k", 65), "value": "x"},
		"keyType":    map[string]any{"key": 5, "value": "x"},
		"noKey":      map[string]any{"value": "x"},
		"noValue":    map[string]any{"key": "k"},
		"nullValue":  map[string]any{"key": "k", "value": nil},
		"object":     map[string]any{"key": "k", "value": map[string]any{}},
		"array":      map[string]any{"key": "k", "value": []any{"x"}},
		"empty":      map[string]any{"key": "k", "value": ""},
		"blank":      map[string]any{"key": "k", "value": "   "},
		"long":       map[string]any{"key": "k", "value": strings.Repeat("v", 2001)},
		"string":     "not an object",
	} {
		if status, body = c.Exchange("POST", mem, ten.Token, req, false); status != http.StatusBadRequest {
			t.Errorf("POST memory %s: %d %v", what, status, body)
		}
	}
	status, body = c.Exchange("DELETE", mem+"/vip", ten.Token, nil, true)
	if got := obj(body); status != http.StatusOK || got["deleted"] != true || got["key"] != "vip" {
		t.Errorf("DELETE memory fact: %d %v", status, body)
	}
	for _, method := range []string{"GET", "DELETE"} {
		if status, body = c.Exchange(method, mem+"/vip", ten.Token, nil, true); status != http.StatusNotFound || obj(body)["error"] != "Memory fact not found" {
			t.Errorf("%s a deleted fact: %d %v", method, status, body)
		}
	}

	// At most 100 facts per visitor; updating one of them still works.
	bobMem := base + "/" + bobID + "/memory"
	for i := 0; i < 100; i++ {
		if status, got := b.Do(t, "POST", bobMem, ten.Token, map[string]any{"key": fmt.Sprintf("k%d", i), "value": "v"}); status != http.StatusOK {
			t.Fatalf("POST fact %d: %d %v", i, status, got)
		}
	}
	if status, body = c.Exchange("POST", bobMem, ten.Token, map[string]any{"key": "one_more", "value": "v"}, true); status != http.StatusConflict {
		t.Errorf("POST the 101st fact: %d %v", status, body)
	}
	if status, body = c.Exchange("POST", bobMem, ten.Token, map[string]any{"key": "k7", "value": "w"}, true); status != http.StatusOK {
		t.Errorf("POST an update at the limit: %d %v", status, body)
	}

	// Delete (with the memory), 404, 403, 413.
	status, body = c.Exchange("DELETE", base+"/"+adaID, ten.Token, nil, true)
	if got := obj(body); status != http.StatusOK || got["deleted"] != true || got["id"] != adaID {
		t.Errorf("DELETE visitor: %d %v", status, body)
	}
	for _, tc := range []struct{ method, path string }{
		{"GET", base + "/" + adaID}, {"PATCH", base + "/" + adaID}, {"DELETE", base + "/" + adaID}, {"GET", base + "/not-a-uuid"},
		{"GET", mem}, {"POST", mem}, {"GET", mem + "/company"}, {"DELETE", mem + "/company"},
	} {
		var req any
		if tc.method == "PATCH" {
			req = map[string]any{"displayName": "x"}
		} else if tc.method == "POST" {
			req = map[string]any{"key": "k", "value": "v"}
		}
		if status, body = c.Exchange(tc.method, tc.path, ten.Token, req, true); status != http.StatusNotFound || obj(body)["error"] != "Visitor not found" {
			t.Errorf("%s %s of a deleted visitor: %d %v", tc.method, tc.path, status, body)
		}
	}
	other := b.NewTenant(t, "scale")
	if status, body = c.Exchange("GET", "/tenants/"+other.Slug+"/visitors/"+bobID, other.Token, nil, true); status != http.StatusNotFound {
		t.Errorf("GET another tenant's visitor: %d %v", status, body)
	}
	if status, body = c.Exchange("POST", bobMem, b.Token(t, ten.ID, auth.ScopeVisitorsRead), map[string]any{"key": "k", "value": "v"}, true); status != http.StatusForbidden || obj(body)["error"] != "Missing scope: visitors:write" {
		t.Errorf("POST memory with visitors:read: %d %v", status, body)
	}
	if status, body = c.Exchange("GET", base, b.Token(t, ten.ID, auth.ScopeToolsRead), nil, true); status != http.StatusForbidden {
		t.Errorf("GET visitors with tools:read: %d %v", status, body)
	}
	if status, body = c.Exchange("POST", base, ten.Token, map[string]any{"externalId": "x", "displayName": strings.Repeat("d", 1<<20)}, false); status != http.StatusRequestEntityTooLarge {
		t.Errorf("POST large body: %d %v", status, body)
	}
}

// TestMCPSettingsLifecycle walks the MCP tools settings through save, keep,
// clear, invalid bodies, delete, the plans without MCP tools (402), 403,
// 404 and 413; each request is also checked to be valid, or refused, by
// openapi.json.
func TestMCPSettingsLifecycle(t *testing.T) {
	t.Parallel()
	c := &webtest.OpenAPIChecker{T: t, B: webtest.Setup(t)}
	b := c.B
	obj := func(body any) map[string]any { m, _ := body.(map[string]any); return m }
	builder := b.NewTenant(t, "builder")
	path := "/tenants/" + builder.Slug + "/mcp-tools"

	status, body := c.Exchange("GET", path, builder.Token, nil, true)
	if got := obj(body); status != http.StatusOK || got["mcpToolsUrl"] != nil || got["mcpToolsMaxTools"] != float64(10) || got["hasApiKey"] != false || got["plan"] != "builder" {
		t.Fatalf("GET mcp-tools: %d %v", status, body)
	}

	// Save; an absent key or number keeps the stored one, null or "" removes the key.
	status, body = c.Exchange("PUT", path, builder.Token, map[string]any{"mcpToolsUrl": "https://tools.example.com/mcp", "mcpToolsApiKey": "sk-1", "mcpToolsMaxTools": 5}, true)
	if got := obj(body); status != http.StatusOK || got["mcpToolsUrl"] != "https://tools.example.com/mcp" || got["hasApiKey"] != true || got["mcpToolsMaxTools"] != float64(5) {
		t.Fatalf("PUT mcp-tools: %d %v", status, body)
	}
	status, body = c.Exchange("PUT", path, builder.Token, map[string]any{"mcpToolsUrl": "https://tools.example.com/v2", "plan": "scale"}, true)
	if got := obj(body); status != http.StatusOK || got["hasApiKey"] != true || got["mcpToolsMaxTools"] != float64(5) || got["plan"] != "builder" {
		t.Errorf("PUT keeping the key: %d %v", status, body)
	}
	status, body = c.Exchange("PUT", path, builder.Token, map[string]any{"mcpToolsUrl": "https://tools.example.com/v2", "mcpToolsApiKey": nil, "mcpToolsMaxTools": nil}, true)
	if got := obj(body); status != http.StatusOK || got["hasApiKey"] != false || got["mcpToolsMaxTools"] != float64(5) {
		t.Errorf("PUT removing the key: %d %v", status, body)
	}

	// Invalid bodies.
	for what, req := range map[string]any{
		"noURL":      map[string]any{"mcpToolsMaxTools": 3},
		"nullURL":    map[string]any{"mcpToolsUrl": nil},
		"emptyURL":   map[string]any{"mcpToolsUrl": ""},
		"http":       map[string]any{"mcpToolsUrl": "http://tools.example.com/mcp"},
		"longURL":    map[string]any{"mcpToolsUrl": "https://tools.example.com/" + strings.Repeat("p", 480)},
		"zero":       map[string]any{"mcpToolsUrl": "https://tools.example.com/mcp", "mcpToolsMaxTools": 0},
		"twentyOne":  map[string]any{"mcpToolsUrl": "https://tools.example.com/mcp", "mcpToolsMaxTools": 21},
		"maxType":    map[string]any{"mcpToolsUrl": "https://tools.example.com/mcp", "mcpToolsMaxTools": "5"},
		"longKey":    map[string]any{"mcpToolsUrl": "https://tools.example.com/mcp", "mcpToolsApiKey": strings.Repeat("k", 501)},
		"notAnObjet": "https://tools.example.com/mcp",
	} {
		if status, body = c.Exchange("PUT", path, builder.Token, req, false); status != http.StatusBadRequest {
			t.Errorf("PUT %s: %d %v", what, status, body)
		}
	}
	status, body = c.Exchange("PUT", path, builder.Token, map[string]any{"mcpToolsUrl": "https://192.168.1.10/mcp"}, true)
	if msg := fmt.Sprint(webtest.ErrorDetails(body)["mcpToolsUrl"]); status != http.StatusBadRequest || !strings.HasPrefix(msg, "refused: ") {
		t.Errorf("PUT a private address: %d %v", status, body)
	}

	// Delete: back to the empty configuration.
	status, body = c.Exchange("DELETE", path, builder.Token, nil, true)
	if got := obj(body); status != http.StatusOK || got["deleted"] != true || got["mcpToolsUrl"] != nil || got["mcpToolsMaxTools"] != float64(10) || got["hasApiKey"] != false {
		t.Errorf("DELETE mcp-tools: %d %v", status, body)
	}
	if status, body = c.Exchange("GET", path, builder.Token, nil, true); obj(body)["mcpToolsUrl"] != nil || obj(body)["mcpToolsMaxTools"] != float64(10) {
		t.Errorf("GET after DELETE: %d %v", status, body)
	}

	// Plans without MCP tools: readable, deletable, not savable (402 whatever the body).
	for _, plan := range []string{"free", "starter"} {
		ten := b.NewTenant(t, plan)
		p := "/tenants/" + ten.Slug + "/mcp-tools"
		if status, body = c.Exchange("GET", p, ten.Token, nil, true); status != http.StatusOK || obj(body)["plan"] != plan {
			t.Errorf("GET mcp-tools on %s: %d %v", plan, status, body)
		}
		status, body = c.Exchange("PUT", p, ten.Token, map[string]any{"mcpToolsUrl": "https://tools.example.com/mcp"}, true)
		if got := obj(body); status != http.StatusPaymentRequired || got["code"] != "PLAN_REQUIRED" || webtest.ErrorDetails(body)["plan"] != plan || webtest.ErrorDetails(body)["requiredPlan"] != "builder" {
			t.Errorf("PUT mcp-tools on %s: %d %v", plan, status, body)
		}
		if status, body = c.Exchange("PUT", p, ten.Token, "not an object", false); status != http.StatusPaymentRequired {
			t.Errorf("PUT a string on %s: %d %v", plan, status, body)
		}
		if status, body = c.Exchange("DELETE", p, ten.Token, nil, true); status != http.StatusOK {
			t.Errorf("DELETE mcp-tools on %s: %d %v", plan, status, body)
		}
	}

	// 403, 404, 413.
	if status, body = c.Exchange("PUT", path, b.Token(t, builder.ID, auth.ScopeSettingsRead), map[string]any{"mcpToolsUrl": "https://tools.example.com/mcp"}, true); status != http.StatusForbidden || obj(body)["error"] != "Missing scope: settings:write" {
		t.Errorf("PUT with settings:read: %d %v", status, body)
	}
	if status, body = c.Exchange("GET", path, b.Token(t, builder.ID, auth.ScopeToolsRead), nil, true); status != http.StatusForbidden {
		t.Errorf("GET with tools:read: %d %v", status, body)
	}
	if status, body = c.Exchange("GET", "/tenants/no-such-tenant/mcp-tools", builder.Token, nil, true); status != http.StatusNotFound {
		t.Errorf("GET mcp-tools of no tenant: %d %v", status, body)
	}
	if status, body = c.Exchange("PUT", path, builder.Token, map[string]any{"mcpToolsUrl": "https://tools.example.com/mcp", "mcpToolsApiKey": strings.Repeat("k", 1<<20)}, false); status != http.StatusRequestEntityTooLarge {
		t.Errorf("PUT large body: %d %v", status, body)
	}
}
