package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/web/webtest"
)

func TestSegments(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)

	t.Run("CreateGeneratesUniqueSlugs", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "scale")
		st, s1 := b.Do(t, "POST", "/tenants/"+ten.Slug+"/segments", ten.Token, map[string]any{"name": "Équipe Ventes!", "systemPrompt": "Sell."})
		if st != http.StatusCreated || s1["slug"] != "equipe-ventes" || s1["systemPrompt"] != "Sell." || s1["isDefault"] != false || s1["isActive"] != true {
			t.Fatalf("create: %d %v", st, s1)
		}
		_, s2 := b.Do(t, "POST", "/tenants/"+ten.Slug+"/segments", ten.Token, map[string]any{"name": "Equipe ventes", "systemPrompt": "Sell."})
		if s2["slug"] != "equipe-ventes-2" {
			t.Errorf("second slug = %v", s2["slug"])
		}
		st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/segments", ten.Token, map[string]any{"name": "X", "slug": "equipe-ventes", "systemPrompt": "p"})
		if st != http.StatusConflict || !strings.Contains(body["error"].(string), "equipe-ventes") {
			t.Errorf("caller slug taken: %d %v", st, body)
		}
		st, body = b.Do(t, "POST", "/tenants/"+ten.Slug+"/segments", ten.Token, map[string]any{"name": "Pros", "slug": "pros", "systemPrompt": "p"})
		if st != http.StatusCreated || body["slug"] != "pros" {
			t.Errorf("caller slug: %d %v", st, body)
		}
	})

	t.Run("Validation", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "scale")
		path := "/tenants/" + ten.Slug + "/segments"
		starter := func(n int, text string) []map[string]string {
			out := []map[string]string{}
			for i := 0; i < n; i++ {
				out = append(out, map[string]string{"text": text, "emoji": "👋"})
			}
			return out
		}
		field := func(name, typ string) map[string]any {
			return map[string]any{"name": name, "label": "L", "type": typ, "required": true}
		}
		cases := []struct {
			name  string
			body  map[string]any
			field string // empty: valid
		}{
			{"MissingName", map[string]any{"systemPrompt": "p"}, "name"},
			{"MissingPrompt", map[string]any{"name": "n"}, "systemPrompt"},
			{"EmptyPrompt", map[string]any{"name": "n", "systemPrompt": "  "}, "systemPrompt"},
			{"Name255", map[string]any{"name": strings.Repeat("n", 255), "systemPrompt": "p"}, ""},
			{"Name256", map[string]any{"name": strings.Repeat("n", 256), "systemPrompt": "p"}, "name"},
			{"Slug100", map[string]any{"name": "n", "slug": strings.Repeat("s", 100), "systemPrompt": "p"}, ""},
			{"Slug101", map[string]any{"name": "n", "slug": strings.Repeat("s", 101), "systemPrompt": "p"}, "slug"},
			{"SlugUpper", map[string]any{"name": "n", "slug": "Sales", "systemPrompt": "p"}, "slug"},
			{"FourStarters", map[string]any{"name": "n", "systemPrompt": "p", "conversationStarters": starter(4, strings.Repeat("a", 50))}, ""},
			{"FiveStarters", map[string]any{"name": "n", "systemPrompt": "p", "conversationStarters": starter(5, "a")}, "conversationStarters"},
			{"StarterText51", map[string]any{"name": "n", "systemPrompt": "p", "conversationStarters": starter(1, strings.Repeat("a", 51))}, "conversationStarters"},
			{"StartersWrongType", map[string]any{"name": "n", "systemPrompt": "p", "conversationStarters": "hi"}, "conversationStarters"},
			{"FormOK", map[string]any{"name": "n", "systemPrompt": "p", "formConfig": map[string]any{"enabled": true, "intent": "lead", "fields": []any{field("email", "email"), field("full_name", "text")}}}, ""},
			{"FormDuplicateNames", map[string]any{"name": "n", "systemPrompt": "p", "formConfig": map[string]any{"enabled": true, "fields": []any{field("email", "email"), field("email", "text")}}}, "formConfig"},
			{"FormUnknownType", map[string]any{"name": "n", "systemPrompt": "p", "formConfig": map[string]any{"enabled": true, "fields": []any{field("age", "number")}}}, "formConfig"},
			{"FormEnabledNoFields", map[string]any{"name": "n", "systemPrompt": "p", "formConfig": map[string]any{"enabled": true, "fields": []any{}}}, "formConfig"},
			{"IsActiveString", map[string]any{"name": "n", "systemPrompt": "p", "isActive": "yes"}, "isActive"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				st, body := b.Do(t, "POST", path, ten.Token, tc.body)
				if tc.field == "" {
					if st != http.StatusCreated {
						t.Fatalf("want 201, got %d %v", st, body)
					}
					b.Do(t, "DELETE", path+"/"+body["id"].(string), ten.Token, nil)
					return
				}
				if st != http.StatusBadRequest {
					t.Fatalf("want 400, got %d %v", st, body)
				}
				if d, _ := body["details"].(map[string]any); d[tc.field] == nil {
					t.Errorf("details lack %s: %v", tc.field, body)
				}
			})
		}
	})

	t.Run("ListGetUpdate", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "scale")
		path := "/tenants/" + ten.Slug + "/segments"
		_, created := b.Do(t, "POST", path, ten.Token, map[string]any{"name": "Support", "systemPrompt": "Help.", "welcomeMessage": "Hi"})
		id := created["id"].(string)

		req, _ := http.NewRequest("GET", b.TS.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+ten.Token)
		resp, err := b.TS.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var list []map[string]any
		webtest.DecodeJSON(t, resp, &list)
		if len(list) != 2 || list[0]["isDefault"] != true {
			t.Fatalf("list = %v", list)
		}
		for _, s := range list {
			if _, ok := s["systemPrompt"]; ok {
				t.Errorf("list item has systemPrompt: %v", s)
			}
			if _, ok := s["corpusCount"].(float64); !ok {
				t.Errorf("list item lacks corpusCount: %v", s)
			}
			if _, ok := s["conversationsCount"].(float64); !ok {
				t.Errorf("list item lacks conversationsCount: %v", s)
			}
		}
		for _, ref := range []string{id, "support"} {
			st, got := b.Do(t, "GET", path+"/"+ref, ten.Token, nil)
			if st != 200 || got["systemPrompt"] != "Help." {
				t.Errorf("get %s: %d %v", ref, st, got)
			}
		}
		st, upd := b.Do(t, "PUT", path+"/"+id, ten.Token, map[string]any{"welcomeMessage": "Hello", "isActive": false})
		if st != 200 || upd["welcomeMessage"] != "Hello" || upd["name"] != "Support" || upd["isActive"] != false || upd["systemPrompt"] != "Help." {
			t.Errorf("update: %d %v", st, upd)
		}
		st, _ = b.Do(t, "PUT", path+"/"+id, ten.Token, map[string]any{"name": ""})
		if st != 400 {
			t.Errorf("empty name: %d", st)
		}
		st, _ = b.Do(t, "GET", path+"/00000000-0000-0000-0000-000000000000", ten.Token, nil)
		if st != 404 {
			t.Errorf("unknown id: %d", st)
		}
	})

	t.Run("DefaultMovesAndCannotBeDeleted", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "scale")
		path := "/tenants/" + ten.Slug + "/segments"
		_, def := b.Do(t, "GET", path+"/default", ten.Token, nil)
		st, body := b.Do(t, "DELETE", path+"/"+def["id"].(string), ten.Token, nil)
		if st != 400 || !strings.Contains(body["error"].(string), "default segment cannot be deleted") {
			t.Errorf("delete default: %d %v", st, body)
		}
		st, body = b.Do(t, "PUT", path+"/default", ten.Token, map[string]any{"isDefault": false})
		if st != 400 {
			t.Errorf("undefault the default: %d %v", st, body)
		}
		if st, body := b.Do(t, "POST", path, ten.Token, map[string]any{"name": "Off", "systemPrompt": "p", "isDefault": true, "isActive": false}); st != 400 {
			t.Errorf("inactive default created: %d %v", st, body)
		}
		_, off := b.Do(t, "POST", path, ten.Token, map[string]any{"name": "Off", "systemPrompt": "p", "isActive": false})
		if st, body := b.Do(t, "PUT", path+"/"+off["id"].(string), ten.Token, map[string]any{"isDefault": true}); st != 400 {
			t.Errorf("inactive segment made default: %d %v", st, body)
		}
		if st, body := b.Do(t, "PUT", path+"/"+off["id"].(string), ten.Token, map[string]any{"isDefault": true, "isActive": true}); st != 200 || body["isDefault"] != true {
			t.Errorf("activated and made default: %d %v", st, body)
		}
		b.Do(t, "PUT", path+"/default", ten.Token, map[string]any{"isDefault": true})
		_, other := b.Do(t, "POST", path, ten.Token, map[string]any{"name": "Other", "systemPrompt": "p", "isDefault": true})
		if other["isDefault"] != true {
			t.Fatalf("created default: %v", other)
		}
		_, old := b.Do(t, "GET", path+"/default", ten.Token, nil)
		if old["isDefault"] != false {
			t.Errorf("old default still default: %v", old)
		}
		st, body = b.Do(t, "DELETE", path+"/default", ten.Token, nil)
		if st != 200 || body["deleted"] != true || body["id"] != def["id"] {
			t.Errorf("delete former default: %d %v", st, body)
		}
	})

	t.Run("ConcurrentDefaultsLeaveExactlyOne", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "scale")
		path := "/tenants/" + ten.Slug + "/segments"
		var ids []string
		for i := 0; i < 6; i++ {
			_, s := b.Do(t, "POST", path, ten.Token, map[string]any{"name": fmt.Sprintf("S%d", i), "systemPrompt": "p"})
			ids = append(ids, s["id"].(string))
		}
		var wg sync.WaitGroup
		for _, id := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				b.Do(t, "PUT", path+"/"+id, ten.Token, map[string]any{"isDefault": true})
			}()
		}
		wg.Wait()
		var n int
		if err := b.DB.Pool().QueryRow(t.Context(), `SELECT count(*) FROM segments WHERE tenant_id = $1 AND is_default`, ten.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("%d default segments", n)
		}
	})

	t.Run("LimitGives429", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "starter") // 3 segments, one is the default
		path := "/tenants/" + ten.Slug + "/segments"
		for i := 0; i < 2; i++ {
			if st, body := b.Do(t, "POST", path, ten.Token, map[string]any{"name": fmt.Sprintf("S%d", i), "systemPrompt": "p"}); st != 201 {
				t.Fatalf("segment %d: %d %v", i, st, body)
			}
		}
		st, body := b.Do(t, "POST", path, ten.Token, map[string]any{"name": "One too many", "systemPrompt": "p"})
		if st != http.StatusTooManyRequests || !strings.Contains(body["error"].(string), "limit") {
			t.Errorf("over limit: %d %v", st, body)
		}
	})

	t.Run("DeleteWithCorpusRefusedUnlessCascade", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "scale")
		path := "/tenants/" + ten.Slug + "/segments"
		_, seg := b.Do(t, "POST", path, ten.Token, map[string]any{"name": "Docs", "systemPrompt": "p"})
		for i := 0; i < 2; i++ {
			st, _ := b.Do(t, "POST", "/tenants/"+ten.Slug+"/corpus", ten.Token, map[string]any{"title": fmt.Sprintf("E%d", i), "content": "c", "segmentSlug": "docs"})
			if st != 201 {
				t.Fatalf("corpus: %d", st)
			}
		}
		st, body := b.Do(t, "DELETE", path+"/docs", ten.Token, nil)
		if st != http.StatusConflict || body["details"].(map[string]any)["corpusEntries"] != float64(2) {
			t.Fatalf("delete with corpus: %d %v", st, body)
		}
		if st, _ := b.Do(t, "DELETE", path+"/docs?cascade=maybe", ten.Token, nil); st != 400 {
			t.Errorf("cascade=maybe: %d", st)
		}
		st, body = b.Do(t, "DELETE", path+"/docs?cascade=true", ten.Token, nil)
		if st != 200 || body["corpusEntriesDeleted"] != float64(2) || body["id"] != seg["id"] {
			t.Errorf("cascade delete: %d %v", st, body)
		}
		_, list := b.Do(t, "GET", "/tenants/"+ten.Slug+"/corpus", ten.Token, nil)
		if list["pagination"].(map[string]any)["total"] != float64(0) {
			t.Errorf("corpus left: %v", list)
		}
	})

	t.Run("ScopesAndIsolation", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "scale")
		other := b.NewTenant(t, "scale")
		path := "/tenants/" + ten.Slug + "/segments"
		read := b.Token(t, ten.ID, auth.ScopeSegmentsRead)
		if st, _ := b.Do(t, "GET", path, read, nil); st != 200 {
			t.Errorf("read with segments:read: %d", st)
		}
		if st, body := b.Do(t, "POST", path, read, map[string]any{"name": "n", "systemPrompt": "p"}); st != 403 || body["error"] != "Missing scope: segments:write" {
			t.Errorf("write with read scope: %d %v", st, body)
		}
		if st, _ := b.Do(t, "GET", path+"/default", other.Token, nil); st != 404 {
			t.Errorf("other tenant's token: %d", st)
		}
		_, otherDefault := b.Do(t, "GET", "/tenants/"+other.Slug+"/segments/default", other.Token, nil)
		if st, _ := b.Do(t, "GET", path+"/"+otherDefault["id"].(string), ten.Token, nil); st != 404 {
			t.Errorf("other tenant's segment id: %d", st)
		}
		if st, _ := b.Do(t, "DELETE", path+"/"+otherDefault["id"].(string), ten.Token, nil); st != 404 {
			t.Errorf("delete other tenant's segment: %d", st)
		}
	})
}

// TestSegmentLifecycle walks a tenant's segments through every operation:
// generated and chosen slugs, partial updates, the default segment's rules,
// deletion with cascade, 404, 403, 413 and the plan's limit; each request
// is also checked to be valid, or refused, by openapi.json.
func TestSegmentLifecycle(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	c := &webtest.OpenAPIChecker{T: t, B: b}
	ten := b.NewTenant(t, "scale")
	base := "/tenants/" + ten.Slug + "/segments"

	status, body := c.Exchange("GET", base, ten.Token, nil, true)
	if status != http.StatusOK {
		t.Fatalf("GET segments: %d %v", status, body)
	}
	if list, _ := body.([]any); len(list) != 1 || list[0].(map[string]any)["isDefault"] != true || list[0].(map[string]any)["slug"] != "default" {
		t.Fatalf("GET segments of a new tenant: %v", body)
	}
	defaultID := body.([]any)[0].(map[string]any)["id"].(string)

	// Create with every member; the slug is generated from the name.
	full := map[string]any{
		"name": "Équipe Ventes", "systemPrompt": "Sell.", "welcomeMessage": "Hi",
		"conversationStarters": []any{map[string]any{"text": "Pricing?", "emoji": "💶"}, map[string]any{"text": "Call me"}},
		"formConfig": map[string]any{"enabled": true, "intent": "lead", "confirmationMessage": "Thanks", "fields": []any{
			map[string]any{"name": "full_name", "label": "Name", "type": "text", "required": true},
			map[string]any{"name": "email", "label": "Email", "type": "email"},
		}},
		"isDefault": false, "isActive": true,
	}
	status, body = c.Exchange("POST", base, ten.Token, full, true)
	if status != http.StatusCreated {
		t.Fatalf("POST segment: %d %v", status, body)
	}
	created := body.(map[string]any)
	if created["slug"] != "equipe-ventes" || created["systemPrompt"] != "Sell." {
		t.Errorf("POST segment: %v", created)
	}
	id := created["id"].(string)

	// A generated slug that is taken gets a suffix; nullable members come back null.
	status, body = c.Exchange("POST", base, ten.Token, map[string]any{"name": "Equipe ventes", "systemPrompt": "p", "slug": "", "welcomeMessage": nil, "formConfig": nil}, true)
	if status != http.StatusCreated || body.(map[string]any)["slug"] != "equipe-ventes-2" || body.(map[string]any)["formConfig"] != nil {
		t.Fatalf("POST generated slug: %d %v", status, body)
	}
	secondID := body.(map[string]any)["id"].(string)

	// A taken slug the caller chose is a conflict.
	status, body = c.Exchange("POST", base, ten.Token, map[string]any{"name": "X", "slug": "equipe-ventes", "systemPrompt": "p"}, true)
	if status != http.StatusConflict || webtest.ErrorDetails(body)["slug"] == nil {
		t.Errorf("POST taken slug: %d %v", status, body)
	}

	// Invalid bodies: refused by the server and by the document, field by field.
	starters := []any{}
	for i := 0; i < 5; i++ {
		starters = append(starters, map[string]any{"text": "hi"})
	}
	invalid := map[string]any{
		"slug": "Bad Slug", "name": "", "systemPrompt": " ", "welcomeMessage": strings.Repeat("w", 1001),
		"conversationStarters": starters,
		"formConfig":           map[string]any{"enabled": true, "fields": []any{map[string]any{"name": "age", "label": "Age", "type": "number"}}},
		"isDefault":            nil, "isActive": "yes",
	}
	status, body = c.Exchange("POST", base, ten.Token, invalid, false)
	if status != http.StatusBadRequest {
		t.Fatalf("POST invalid segment: %d %v", status, body)
	}
	for field := range invalid {
		if _, ok := webtest.ErrorDetails(body)[field]; !ok {
			t.Errorf("POST invalid segment: no details for %s: %v", field, body)
		}
	}
	alone := map[string]any{
		"starterText":   map[string]any{"conversationStarters": []any{map[string]any{"text": strings.Repeat("a", 51)}}},
		"starterEmoji":  map[string]any{"conversationStarters": []any{map[string]any{"text": "a", "emoji": strings.Repeat("e", 17)}}},
		"formNoFields":  map[string]any{"formConfig": map[string]any{"enabled": true}},
		"formFieldName": map[string]any{"formConfig": map[string]any{"fields": []any{map[string]any{"name": "1st", "label": "L", "type": "text"}}}},
		"formLabel":     map[string]any{"formConfig": map[string]any{"fields": []any{map[string]any{"name": "a", "label": strings.Repeat("l", 101), "type": "text"}}}},
		"formIntent":    map[string]any{"formConfig": map[string]any{"intent": strings.Repeat("i", 101)}},
		"name256":       map[string]any{"name": strings.Repeat("n", 256)},
		"slug101":       map[string]any{"slug": strings.Repeat("s", 101)},
	}
	for _, field := range webtest.SortedKeys(invalid) {
		alone[field] = map[string]any{field: invalid[field]}
	}
	for what, fields := range alone {
		req := map[string]any{"name": "n", "systemPrompt": "p"}
		for k, v := range fields.(map[string]any) {
			req[k] = v
		}
		if status, body = c.Exchange("POST", base, ten.Token, req, false); status != http.StatusBadRequest {
			t.Errorf("POST %s: %d %v", what, status, body)
		}
	}
	if status, body = c.Exchange("POST", base, ten.Token, map[string]any{"name": "n"}, false); status != http.StatusBadRequest || webtest.ErrorDetails(body)["systemPrompt"] == nil {
		t.Errorf("POST without systemPrompt: %d %v", status, body)
	}

	// Read by id and by slug.
	for _, ref := range []string{id, "equipe-ventes"} {
		status, body = c.Exchange("GET", base+"/"+ref, ten.Token, nil, true)
		if status != http.StatusOK || body.(map[string]any)["id"] != id {
			t.Errorf("GET segment %s: %d %v", ref, status, body)
		}
	}

	// PUT and PATCH are partial updates; clearing gives nulls and [].
	status, body = c.Exchange("PUT", base+"/"+id, ten.Token, map[string]any{"welcomeMessage": "", "formConfig": nil, "conversationStarters": nil, "id": "ignored", "unknown": 1}, true)
	if got, _ := body.(map[string]any); status != http.StatusOK || got["welcomeMessage"] != nil || got["formConfig"] != nil || len(got["conversationStarters"].([]any)) != 0 || got["name"] != "Équipe Ventes" {
		t.Errorf("PUT clear: %d %v", status, body)
	}
	status, body = c.Exchange("PATCH", base+"/equipe-ventes", ten.Token, map[string]any{"isDefault": true, "name": "Sales", "slug": "sales"}, true)
	if got, _ := body.(map[string]any); status != http.StatusOK || got["isDefault"] != true || got["slug"] != "sales" {
		t.Errorf("PATCH make default: %d %v", status, body)
	}
	if status, body = c.Exchange("GET", base+"/default", ten.Token, nil, true); status != http.StatusOK || body.(map[string]any)["isDefault"] != false {
		t.Errorf("former default: %d %v", status, body)
	}
	// The default cannot be un-defaulted, deactivated or deleted.
	if status, body = c.Exchange("PATCH", base+"/sales", ten.Token, map[string]any{"isDefault": false}, true); status != http.StatusBadRequest || webtest.ErrorDetails(body)["isDefault"] == nil {
		t.Errorf("PATCH isDefault false on the default: %d %v", status, body)
	}
	if status, body = c.Exchange("PUT", base+"/"+id, ten.Token, map[string]any{"isActive": false}, true); status != http.StatusBadRequest || webtest.ErrorDetails(body)["isActive"] == nil {
		t.Errorf("PUT isActive false on the default: %d %v", status, body)
	}
	if status, body = c.Exchange("DELETE", base+"/"+id, ten.Token, nil, true); status != http.StatusBadRequest {
		t.Errorf("DELETE the default: %d %v", status, body)
	}
	if status, body = c.Exchange("PUT", base+"/"+id, ten.Token, map[string]any{"slug": "default"}, true); status != http.StatusConflict {
		t.Errorf("PUT taken slug: %d %v", status, body)
	}
	if status, body = c.Exchange("PUT", base+"/"+id, ten.Token, map[string]any{"slug": nil, "name": nil}, false); status != http.StatusBadRequest || len(webtest.ErrorDetails(body)) != 2 {
		t.Errorf("PUT null slug and name: %d %v", status, body)
	}

	// Deleting a segment with corpus entries needs cascade=true.
	status, body = c.Exchange("POST", "/tenants/"+ten.Slug+"/corpus", ten.Token, map[string]any{"title": "T", "content": "C", "segmentSlug": "default"}, true)
	if status != http.StatusCreated {
		t.Fatalf("POST corpus in a segment: %d %v", status, body)
	}
	if status, body = c.Exchange("GET", base, ten.Token, nil, true); status != http.StatusOK {
		t.Fatalf("GET segments: %d %v", status, body)
	}
	for _, s := range body.([]any) {
		if s := s.(map[string]any); s["slug"] == "default" && s["corpusCount"] != float64(1) {
			t.Errorf("corpusCount: %v", s)
		}
	}
	status, body = c.Exchange("DELETE", base+"/default", ten.Token, nil, true)
	if status != http.StatusConflict || webtest.ErrorDetails(body)["corpusEntries"] != float64(1) || webtest.ErrorDetails(body)["tools"] != float64(0) {
		t.Errorf("DELETE with corpus: %d %v", status, body)
	}
	if status, body = c.Exchange("DELETE", base+"/default?cascade=maybe", ten.Token, nil, false); status != http.StatusBadRequest {
		t.Errorf("DELETE cascade=maybe: %d %v", status, body)
	}
	status, body = c.Exchange("DELETE", base+"/default?cascade=true", ten.Token, nil, true)
	if got, _ := body.(map[string]any); status != http.StatusOK || got["deleted"] != true || got["id"] != defaultID || got["corpusEntriesDeleted"] != float64(1) || got["toolsDeleted"] != float64(0) {
		t.Errorf("DELETE cascade: %d %v", status, body)
	}
	if status, body = c.Exchange("DELETE", base+"/"+secondID, ten.Token, nil, true); status != http.StatusOK || body.(map[string]any)["corpusEntriesDeleted"] != float64(0) {
		t.Errorf("DELETE without corpus: %d %v", status, body)
	}

	// 404, 403, 413, and the plan's limit.
	for _, method := range []string{"GET", "DELETE"} {
		for _, ref := range []string{"no-such-segment", "00000000-0000-0000-0000-000000000000", secondID} {
			if status, body = c.Exchange(method, base+"/"+ref, ten.Token, nil, true); status != http.StatusNotFound || body.(map[string]any)["error"] != "Segment not found" {
				t.Errorf("%s unknown segment %s: %d %v", method, ref, status, body)
			}
		}
	}
	if status, body = c.Exchange("PATCH", base+"/no-such-segment", ten.Token, map[string]any{"name": "x"}, true); status != http.StatusNotFound {
		t.Errorf("PATCH unknown segment: %d %v", status, body)
	}
	readOnly := b.Token(t, ten.ID, auth.ScopeSegmentsRead)
	if status, body = c.Exchange("POST", base, readOnly, map[string]any{"name": "n", "systemPrompt": "p"}, true); status != http.StatusForbidden {
		t.Errorf("POST with segments:read: %d %v", status, body)
	}
	if status, body = c.Exchange("GET", base, b.Token(t, ten.ID, auth.ScopeCorpusRead), nil, true); status != http.StatusForbidden {
		t.Errorf("GET with corpus:read: %d %v", status, body)
	}
	if status, body = c.Exchange("PUT", base+"/"+id, ten.Token, map[string]any{"systemPrompt": strings.Repeat("x", 1<<20)}, false); status != http.StatusRequestEntityTooLarge {
		t.Errorf("PUT large body: %d %v", status, body)
	}
	free := b.NewTenant(t, "free") // one segment: its default
	status, body = c.Exchange("POST", "/tenants/"+free.Slug+"/segments", free.Token, map[string]any{"name": "n", "systemPrompt": "p"}, true)
	if got, _ := body.(map[string]any); status != http.StatusTooManyRequests || got["code"] != "LIMIT_REACHED" || webtest.ErrorDetails(body)["limit"] != float64(1) || webtest.ErrorDetails(body)["current"] != float64(1) {
		t.Errorf("POST over the limit: %d %v", status, body)
	}
}
