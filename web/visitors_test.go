package web

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestVisitors(t *testing.T) {
	t.Parallel()
	b := setup(t)

	t.Run("CreateValidate", func(t *testing.T) {
		t.Parallel()
		ten := b.newTenant(t, "scale")
		path := "/tenants/" + ten.Slug + "/visitors"
		st, v := b.do(t, "POST", path, ten.Token, map[string]any{"email": "Ada@Example.com", "displayName": "Ada", "phone": "+33 1 23 45 67 89",
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
				st, body := b.do(t, "POST", path, ten.Token, tc.body)
				if st != 400 && st != 409 {
					t.Fatalf("want 400 or 409, got %d %v", st, body)
				}
				if d, _ := body["details"].(map[string]any); d[tc.field] == nil {
					t.Errorf("details lack %s: %v", tc.field, body)
				}
			})
		}
		if st, body := b.do(t, "POST", path, ten.Token, map[string]any{"externalId": strings.Repeat("x", 255)}); st != 201 {
			t.Errorf("externalId of 255: %d %v", st, body)
		}
	})

	t.Run("ListSearchPaginate", func(t *testing.T) {
		t.Parallel()
		ten := b.newTenant(t, "scale")
		path := "/tenants/" + ten.Slug + "/visitors"
		for i := 0; i < 5; i++ {
			b.do(t, "POST", path, ten.Token, map[string]any{"email": fmt.Sprintf("user%d@shop.test", i), "displayName": fmt.Sprintf("User %d", i)})
		}
		b.do(t, "POST", path, ten.Token, map[string]any{"externalId": "crm-42", "displayName": "Grace Hopper"})
		_, list := b.do(t, "GET", path, ten.Token, nil)
		if list["total"] != float64(6) || list["limit"] != float64(50) || list["offset"] != float64(0) || len(list["visitors"].([]any)) != 6 {
			t.Errorf("defaults: %v", list)
		}
		_, page := b.do(t, "GET", path+"?limit=2&offset=4", ten.Token, nil)
		if page["total"] != float64(6) || len(page["visitors"].([]any)) != 2 {
			t.Errorf("page: %v", page)
		}
		for q, want := range map[string]float64{"?search=grace": 1, "?search=CRM-4": 1, "?search=shop.test": 5, "?search=%25": 0} {
			_, found := b.do(t, "GET", path+q, ten.Token, nil)
			if found["total"] != want {
				t.Errorf("%s: total %v, want %v", q, found["total"], want)
			}
		}
		for _, q := range []string{"?limit=0", "?limit=201", "?offset=-1", "?limit=abc"} {
			if st, _ := b.do(t, "GET", path+q, ten.Token, nil); st != 400 {
				t.Errorf("%s: %d", q, st)
			}
		}
		if st, _ := b.do(t, "GET", path+"?limit=200", ten.Token, nil); st != 200 {
			t.Errorf("limit 200: %d", st)
		}
	})

	t.Run("PatchMemoryDelete", func(t *testing.T) {
		t.Parallel()
		ten := b.newTenant(t, "scale")
		other := b.newTenant(t, "scale")
		path := "/tenants/" + ten.Slug + "/visitors"
		_, v := b.do(t, "POST", path, ten.Token, map[string]any{"email": "bo@x.test", "externalId": "bo"})
		id := v["id"].(string)
		st, upd := b.do(t, "PATCH", path+"/"+id, ten.Token, map[string]any{"displayName": "Bo"})
		if st != 200 || upd["displayName"] != "Bo" || upd["email"] != "bo@x.test" {
			t.Errorf("patch: %d %v", st, upd)
		}
		b.do(t, "PATCH", path+"/"+id, ten.Token, map[string]any{"email": nil})
		if st, body := b.do(t, "PATCH", path+"/"+id, ten.Token, map[string]any{"externalId": nil}); st != 400 {
			t.Errorf("clearing both identities: %d %v", st, body)
		}

		mem := path + "/" + id + "/memory"
		st, f := b.do(t, "POST", mem, ten.Token, map[string]any{"key": "company", "value": "Acme"})
		if st != 200 || f["key"] != "company" || f["value"] != "Acme" || f["updatedAt"] == nil {
			t.Errorf("remember: %d %v", st, f)
		}
		_, f = b.do(t, "POST", mem, ten.Token, map[string]any{"key": "company", "value": "Acme Corp"})
		_, f2 := b.do(t, "POST", mem, ten.Token, map[string]any{"key": "budget", "value": 5000})
		if f["value"] != "Acme Corp" || f2["value"] != "5000" {
			t.Errorf("upsert and number: %v %v", f, f2)
		}
		for _, bad := range []map[string]any{{"value": "x"}, {"key": "a b", "value": "x"}, {"key": "k"}, {"key": "k", "value": ""},
			{"key": "k", "value": map[string]any{}}, {"key": "k", "value": strings.Repeat("v", 2001)}} {
			if st, body := b.do(t, "POST", mem, ten.Token, bad); st != 400 {
				t.Errorf("%v: %d %v", bad, st, body)
			}
		}
		resp := b.raw(t, "GET", mem, ten.Token, nil)
		var facts []map[string]any
		decodeJSON(t, resp, &facts)
		if len(facts) != 2 || facts[0]["key"] != "budget" {
			t.Errorf("memory list: %v", facts)
		}
		if st, got := b.do(t, "GET", mem+"/company", ten.Token, nil); st != 200 || got["value"] != "Acme Corp" {
			t.Errorf("get fact: %d %v", st, got)
		}
		_, detail := b.do(t, "GET", path+"/"+id, ten.Token, nil)
		if detail["memoryCount"] != float64(2) {
			t.Errorf("memoryCount = %v", detail["memoryCount"])
		}
		if st, _ := b.do(t, "GET", "/tenants/"+other.Slug+"/visitors/"+id+"/memory", other.Token, nil); st != 404 {
			t.Errorf("other tenant reads memory: %d", st)
		}
		if st, _ := b.do(t, "POST", "/tenants/"+other.Slug+"/visitors/"+id+"/memory", other.Token, map[string]any{"key": "x", "value": "y"}); st != 404 {
			t.Errorf("other tenant writes memory: %d", st)
		}
		st, del := b.do(t, "DELETE", mem+"/company", ten.Token, nil)
		if st != 200 || del["deleted"] != true || del["key"] != "company" {
			t.Errorf("forget: %d %v", st, del)
		}
		if st, _ := b.do(t, "GET", mem+"/company", ten.Token, nil); st != 404 {
			t.Errorf("forgotten fact: %d", st)
		}
		if st, _ := b.do(t, "DELETE", "/tenants/"+other.Slug+"/visitors/"+id, other.Token, nil); st != 404 {
			t.Errorf("other tenant deletes visitor: %d", st)
		}
		st, del = b.do(t, "DELETE", path+"/"+id, ten.Token, nil)
		if st != 200 || del["deleted"] != true || del["id"] != id {
			t.Errorf("delete: %d %v", st, del)
		}
		var n int
		_ = b.db.Pool().QueryRow(t.Context(), `SELECT count(*) FROM memory_facts WHERE visitor_id = $1`, id).Scan(&n)
		if n != 0 {
			t.Errorf("%d facts survive their visitor", n)
		}
		if st, _ := b.do(t, "GET", path+"/"+id, ten.Token, nil); st != http.StatusNotFound {
			t.Errorf("after delete: %d", st)
		}
	})
}

func TestProductsAndMCPSettings(t *testing.T) {
	t.Parallel()
	b := setup(t)

	t.Run("ProductsCRUDAndBulk", func(t *testing.T) {
		t.Parallel()
		ten := b.newTenant(t, "scale")
		path := "/tenants/" + ten.Slug + "/products"
		st, p := b.do(t, "POST", path, ten.Token, map[string]any{"name": "Trail shoes", "description": "Light running shoes for mountains",
			"price": 129.9, "currency": "eur", "url": "https://shop.test/shoes", "tags": []string{"running", "outdoor"}, "externalId": "sku-1"})
		if st != 201 || p["currency"] != "EUR" || p["price"] != 129.9 || p["isActive"] != true {
			t.Fatalf("create: %d %v", st, p)
		}
		st, p2 := b.do(t, "POST", path, ten.Token, map[string]any{"name": "Trail shoes v2", "externalId": "sku-1"})
		if st != 200 || p2["id"] != p["id"] || p2["price"] != 129.9 {
			t.Errorf("upsert by externalId keeps unsent fields: %d %v", st, p2)
		}
		for _, bad := range []map[string]any{{"price": 1}, {"name": "x", "price": 1}, {"name": "x", "price": -1, "currency": "EUR"},
			{"name": "x", "price": 1.001, "currency": "EUR"}, {"name": "x", "currency": "euro"}, {"name": strings.Repeat("n", 256)},
			{"name": "x", "url": "nope"}} {
			if st, body := b.do(t, "POST", path, ten.Token, bad); st != 400 {
				t.Errorf("%v: %d %v", bad, st, body)
			}
		}
		items := []map[string]any{}
		for i := 0; i < 3; i++ {
			items = append(items, map[string]any{"externalId": fmt.Sprintf("b-%d", i), "name": fmt.Sprintf("Bag %d", i)})
		}
		items = append(items, map[string]any{"externalId": "sku-1", "name": "Trail shoes v3"}, map[string]any{"name": "no id"},
			map[string]any{"externalId": "bad", "name": "x", "price": 5})
		st, res := b.do(t, "POST", path+"/bulk", ten.Token, map[string]any{"products": items})
		if st != 200 || res["created"] != float64(3) || res["updated"] != float64(1) || len(res["errors"].([]any)) != 2 {
			t.Errorf("bulk: %d %v", st, res)
		}
		big := make([]map[string]any, 101)
		for i := range big {
			big[i] = map[string]any{"externalId": fmt.Sprint(i), "name": "x"}
		}
		if st, _ := b.do(t, "POST", path+"/bulk", ten.Token, map[string]any{"products": big}); st != 400 {
			t.Errorf("101 products: %d", st)
		}
		_, list := b.do(t, "GET", path+"?search=shoe", ten.Token, nil)
		if list["pagination"].(map[string]any)["total"] != float64(1) {
			t.Errorf("search: %v", list)
		}
		_, all := b.do(t, "GET", path+"?limit=2", ten.Token, nil)
		if pg := all["pagination"].(map[string]any); pg["total"] != float64(4) || pg["pages"] != float64(2) {
			t.Errorf("pagination: %v", pg)
		}
		id := p["id"].(string)
		st, upd := b.do(t, "PATCH", path+"/"+id, ten.Token, map[string]any{"isActive": false, "price": nil})
		if st != 200 || upd["isActive"] != false || upd["price"] != nil || upd["currency"] != "EUR" {
			t.Errorf("patch: %d %v", st, upd)
		}
		_, active := b.do(t, "GET", path+"?isActive=true", ten.Token, nil)
		if active["pagination"].(map[string]any)["total"] != float64(3) {
			t.Errorf("active filter: %v", active)
		}
		other := b.newTenant(t, "scale")
		if st, _ := b.do(t, "GET", "/tenants/"+other.Slug+"/products/"+id, other.Token, nil); st != 404 {
			t.Errorf("other tenant reads product: %d", st)
		}
		if st, del := b.do(t, "DELETE", path+"/"+id, ten.Token, nil); st != 200 || del["id"] != id {
			t.Errorf("delete: %d %v", st, del)
		}
	})

	t.Run("MCPSettings", func(t *testing.T) {
		t.Parallel()
		ten := b.newTenant(t, "builder")
		path := "/tenants/" + ten.Slug + "/mcp-tools"
		_, got := b.do(t, "GET", path, ten.Token, nil)
		if got["mcpToolsUrl"] != nil || got["mcpToolsMaxTools"] != float64(10) || got["hasApiKey"] != false || got["plan"] != "builder" {
			t.Errorf("initial: %v", got)
		}
		key := "mcp-secret-key-123"
		st, saved := b.do(t, "PUT", path, ten.Token, map[string]any{"mcpToolsUrl": "https://tools.example.com/mcp", "mcpToolsApiKey": key, "mcpToolsMaxTools": 20})
		if st != 200 || saved["hasApiKey"] != true || saved["mcpToolsMaxTools"] != float64(20) {
			t.Fatalf("save: %d %v", st, saved)
		}
		if raw := b.rawBody(t, "GET", path, ten.Token); strings.Contains(raw, key) {
			t.Errorf("key echoed: %s", raw)
		}
		raw := b.rawBody(t, "GET", "/tenants/"+ten.Slug, ten.Token)
		if strings.Contains(raw, key) || !strings.Contains(raw, `"mcpToolsUrl":"https://tools.example.com/mcp"`) || !strings.Contains(raw, `"mcpToolsMaxTools":20`) {
			t.Errorf("tenant shows the MCP settings without the key: %s", raw)
		}
		_, kept := b.do(t, "PUT", path, ten.Token, map[string]any{"mcpToolsUrl": "https://tools.example.com/mcp2"})
		if kept["hasApiKey"] != true || kept["mcpToolsMaxTools"] != float64(20) {
			t.Errorf("absent key and max kept: %v", kept)
		}
		for _, bad := range []map[string]any{{}, {"mcpToolsUrl": "http://tools.example.com/mcp"}, {"mcpToolsUrl": "https://x.test/" + strings.Repeat("p", 490)},
			{"mcpToolsUrl": "https://x.test", "mcpToolsMaxTools": 0}, {"mcpToolsUrl": "https://x.test", "mcpToolsMaxTools": 21},
			{"mcpToolsUrl": "https://x.test", "mcpToolsApiKey": strings.Repeat("k", 501)},
			{"mcpToolsUrl": "https://192.168.1.10/mcp"}, {"mcpToolsUrl": "https://[::1]/mcp"}} {
			if st, body := b.do(t, "PUT", path, ten.Token, bad); st != 400 {
				t.Errorf("%v: %d %v", bad, st, body)
			}
		}
		if st, del := b.do(t, "DELETE", path, ten.Token, nil); st != 200 || del["deleted"] != true {
			t.Errorf("delete: %d %v", st, del)
		}
		_, got = b.do(t, "GET", path, ten.Token, nil)
		if got["mcpToolsUrl"] != nil || got["hasApiKey"] != false {
			t.Errorf("after delete: %v", got)
		}
		starter := b.newTenant(t, "starter")
		st, body := b.do(t, "PUT", "/tenants/"+starter.Slug+"/mcp-tools", starter.Token, map[string]any{"mcpToolsUrl": "https://x.test"})
		if st != http.StatusPaymentRequired || body["code"] != "PLAN_REQUIRED" || !strings.Contains(body["error"].(string), "builder") {
			t.Errorf("starter plan: %d %v", st, body)
		}
	})
}
