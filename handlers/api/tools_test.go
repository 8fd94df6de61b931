package api_test

import (
	"bytes"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/web/webtest"
)

func TestTools(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)

	form := map[string]any{"fields": []any{
		map[string]any{"name": "email", "label": "Email", "type": "email", "required": true},
		map[string]any{"name": "full_name", "label": "Name", "type": "text", "required": false},
	}}
	quote := map[string]any{"currency": "EUR", "items": []any{
		map[string]any{"name": "Website", "unitPrice": 1500, "options": []any{map[string]any{"name": "Hosting", "unitPrice": 9.99}}},
		map[string]any{"name": "Logo", "unitPrice": 300.5},
	}}

	t.Run("CreatePerTypeAndDefaults", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "scale")
		path := "/tenants/" + ten.Slug + "/tools"
		cases := []struct {
			typ    string
			config any
			check  func(cfg map[string]any) bool
		}{
			{"SUBMIT_FORM", form, func(c map[string]any) bool { return len(c["fields"].([]any)) == 2 }},
			{"GENERATE_QUOTE", quote, func(c map[string]any) bool {
				it := c["items"].([]any)[1].(map[string]any)
				return it["currency"] == "EUR" && c["validityDays"] == float64(30)
			}},
			{"BOOK_MEETING", nil, func(c map[string]any) bool {
				return c["durationMinutes"] == float64(30) && c["bookingWindowDays"] == float64(30)
			}},
			{"ESCALATE_TO_HUMAN", map[string]any{"handoffMessage": "A human will answer."}, func(c map[string]any) bool { return c["handoffMessage"] != nil }},
			{"REMEMBER_FACT", map[string]any{"allowedKeys": []string{"company", "budget"}}, func(c map[string]any) bool { return len(c["allowedKeys"].([]any)) == 2 }},
			{"RECOMMEND_PRODUCT", map[string]any{}, func(c map[string]any) bool { return c["maxResults"] == float64(3) }},
		}
		for i, tc := range cases {
			body := map[string]any{"name": "Tool " + tc.typ, "description": "Use it.", "type": tc.typ, "position": i}
			if tc.config != nil {
				body["config"] = tc.config
			}
			st, tool := b.Do(t, "POST", path, ten.Token, body)
			if st != 201 || tool["type"] != tc.typ || tool["isActive"] != true || tool["segment"] != nil {
				t.Fatalf("%s: %d %v", tc.typ, st, tool)
			}
			if !tc.check(tool["config"].(map[string]any)) {
				t.Errorf("%s config = %v", tc.typ, tool["config"])
			}
		}
		resp := b.Raw(t, "GET", path, ten.Token, nil)
		var list []map[string]any
		webtest.DecodeJSON(t, resp, &list)
		if len(list) != 6 || list[0]["type"] != "SUBMIT_FORM" || list[5]["type"] != "RECOMMEND_PRODUCT" {
			t.Errorf("list order: %v", list)
		}
	})

	t.Run("Validation", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "scale")
		path := "/tenants/" + ten.Slug + "/tools"
		base := func(typ string, config any, extra map[string]any) map[string]any {
			m := map[string]any{"name": "n", "description": "d", "type": typ}
			if config != nil {
				m["config"] = config
			}
			for k, v := range extra {
				m[k] = v
			}
			return m
		}
		cases := []struct {
			name, field, contains string
			body                  map[string]any
		}{
			{"Synthetic", "type", "allowed types", base("EXPLORE_CORPUS", nil, nil)},
			{"MCPProxy", "type", "SUBMIT_FORM", base("MCP_PROXY", nil, nil)},
			{"UnknownType", "type", "one of", base("SEND_SMS", nil, nil)},
			{"MissingType", "type", "required", map[string]any{"name": "n", "description": "d"}},
			{"MissingName", "name", "required", map[string]any{"description": "d", "type": "BOOK_MEETING"}},
			{"MissingDescription", "description", "required", map[string]any{"name": "n", "type": "BOOK_MEETING"}},
			{"Name101", "name", "100", base("BOOK_MEETING", nil, map[string]any{"name": strings.Repeat("n", 101)})},
			{"Description1001", "description", "1000", base("BOOK_MEETING", nil, map[string]any{"description": strings.Repeat("d", 1001)})},
			{"FormNoFields", "config", "at least one field", base("SUBMIT_FORM", map[string]any{"fields": []any{}}, nil)},
			{"FormDuplicate", "config", "twice", base("SUBMIT_FORM", map[string]any{"fields": []any{
				map[string]any{"name": "a", "label": "A", "type": "text"}, map[string]any{"name": "a", "label": "A", "type": "text"}}}, nil)},
			{"FormBadType", "config", "type", base("SUBMIT_FORM", map[string]any{"fields": []any{map[string]any{"name": "a", "label": "A", "type": "date"}}}, nil)},
			{"UnknownConfigKey", "config", "unknown key", base("BOOK_MEETING", map[string]any{"colour": "red"}, nil)},
			{"ConfigKeyWrongCase", "config", "unknown key", base("RECOMMEND_PRODUCT", map[string]any{"MaxResults": 5}, nil)},
			{"ConfigNotObject", "config", "object", base("BOOK_MEETING", []int{1}, nil)},
			{"QuoteNoItems", "config", "1 to 200", base("GENERATE_QUOTE", map[string]any{"currency": "EUR", "items": []any{}}, nil)},
			{"QuoteBadCurrency", "config", "ISO 4217", base("GENERATE_QUOTE", map[string]any{"currency": "euro", "items": []any{map[string]any{"name": "x", "unitPrice": 1}}}, nil)},
			{"QuoteNegativePrice", "config", "unitPrice", base("GENERATE_QUOTE", map[string]any{"currency": "EUR", "items": []any{map[string]any{"name": "x", "unitPrice": -1}}}, nil)},
			{"QuoteThreeDecimals", "config", "two decimals", base("GENERATE_QUOTE", map[string]any{"currency": "EUR", "items": []any{map[string]any{"name": "x", "unitPrice": 1.005}}}, nil)},
			{"QuoteMixedCurrency", "config", "differs", base("GENERATE_QUOTE", map[string]any{"currency": "EUR", "items": []any{map[string]any{"name": "x", "unitPrice": 1, "currency": "USD"}}}, nil)},
			{"MeetingDuration4", "config", "durationMinutes", base("BOOK_MEETING", map[string]any{"durationMinutes": 4}, nil)},
			{"MeetingDuration481", "config", "durationMinutes", base("BOOK_MEETING", map[string]any{"durationMinutes": 481}, nil)},
			{"MeetingWindow366", "config", "bookingWindowDays", base("BOOK_MEETING", map[string]any{"bookingWindowDays": 366}, nil)},
			{"RememberBadKey", "config", "snake_case", base("REMEMBER_FACT", map[string]any{"allowedKeys": []string{"Bad Key"}}, nil)},
			{"RecommendMax11", "config", "maxResults", base("RECOMMEND_PRODUCT", map[string]any{"maxResults": 11}, nil)},
			{"WebhookOnForm", "webhookUrl", "ESCALATE_TO_HUMAN", base("SUBMIT_FORM", form, map[string]any{"webhookUrl": "https://hooks.example.com/x"})},
			{"WebhookHTTP", "webhookUrl", "https", base("ESCALATE_TO_HUMAN", nil, map[string]any{"webhookUrl": "http://hooks.example.com/x"})},
			{"WebhookLoopback", "webhookUrl", "refused", base("ESCALATE_TO_HUMAN", nil, map[string]any{"webhookUrl": "https://127.0.0.1/hook"})},
			{"WebhookPrivate", "webhookUrl", "refused", base("ESCALATE_TO_HUMAN", nil, map[string]any{"webhookUrl": "https://10.1.2.3/hook"})},
			{"WebhookMetadata", "webhookUrl", "refused", base("ESCALATE_TO_HUMAN", nil, map[string]any{"webhookUrl": "https://169.254.169.254/latest"})},
			{"UnknownSegment", "segmentId", "no segment", base("BOOK_MEETING", nil, map[string]any{"segmentId": "nope"})},
			{"PositionString", "position", "number", base("BOOK_MEETING", nil, map[string]any{"position": "1"})},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				st, body := b.Do(t, "POST", path, ten.Token, tc.body)
				if st != 400 {
					t.Fatalf("want 400, got %d %v", st, body)
				}
				msg, _ := body["details"].(map[string]any)[tc.field].(string)
				if !strings.Contains(msg, tc.contains) {
					t.Errorf("details[%s] = %q, want it to mention %q (%v)", tc.field, msg, tc.contains, body)
				}
			})
		}
		if st, _ := b.Do(t, "POST", path, ten.Token, base("BOOK_MEETING", nil, map[string]any{"name": strings.Repeat("n", 100)})); st != 201 {
			t.Errorf("name of 100: %d", st)
		}
	})

	t.Run("EscalationSecretNeverReturned", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "scale")
		path := "/tenants/" + ten.Slug + "/tools"
		secret := "whsec-very-secret-value"
		st, tool := b.Do(t, "POST", path, ten.Token, map[string]any{"name": "Human", "description": "Escalate", "type": "ESCALATE_TO_HUMAN",
			"webhookUrl": "https://hooks.example.com/escalate", "webhookSecret": secret})
		if st != 201 || tool["hasWebhookSecret"] != true || tool["webhookUrl"] != "https://hooks.example.com/escalate" {
			t.Fatalf("create: %d %v", st, tool)
		}
		for _, p := range []string{path, path + "/" + tool["id"].(string)} {
			raw := b.RawBody(t, "GET", p, ten.Token)
			if strings.Contains(raw, secret) || strings.Contains(raw, "webhookSecret\"") {
				t.Errorf("%s leaks the secret: %s", p, raw)
			}
		}
		var sealed []byte
		if err := b.DB.Pool().QueryRow(t.Context(), `SELECT webhook_secret FROM tools WHERE id = $1`, tool["id"]).Scan(&sealed); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(sealed, []byte(secret)) {
			t.Error("secret stored in clear")
		}
		if opened, err := b.Box.Open(sealed); err != nil || string(opened) != secret {
			t.Errorf("sealed secret does not open: %v", err)
		}
		st, upd := b.Do(t, "PATCH", path+"/"+tool["id"].(string), ten.Token, map[string]any{"webhookSecret": nil})
		if st != 200 || upd["hasWebhookSecret"] != false {
			t.Errorf("clear secret: %d %v", st, upd)
		}
	})

	t.Run("PatchGetDeleteAndSegment", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "scale")
		other := b.NewTenant(t, "scale")
		path := "/tenants/" + ten.Slug + "/tools"
		b.Do(t, "POST", "/tenants/"+ten.Slug+"/segments", ten.Token, map[string]any{"name": "Pros", "systemPrompt": "p"})
		_, tool := b.Do(t, "POST", path, ten.Token, map[string]any{"name": "Form", "description": "d", "type": "SUBMIT_FORM", "config": form, "segmentId": "pros"})
		id := tool["id"].(string)
		if tool["segment"] != "pros" {
			t.Errorf("segment = %v", tool["segment"])
		}
		st, upd := b.Do(t, "PATCH", path+"/"+id, ten.Token, map[string]any{"isActive": false, "position": 2.5, "segmentId": nil})
		if st != 200 || upd["isActive"] != false || upd["position"] != 2.5 || upd["segment"] != nil || upd["name"] != "Form" || len(upd["config"].(map[string]any)["fields"].([]any)) != 2 {
			t.Errorf("patch: %d %v", st, upd)
		}
		st, body := b.Do(t, "PATCH", path+"/"+id, ten.Token, map[string]any{"type": "GENERATE_QUOTE"})
		if st != 400 || !strings.Contains(body["details"].(map[string]any)["config"].(string), "unknown key") {
			t.Errorf("type change without a fitting config: %d %v", st, body)
		}
		st, upd = b.Do(t, "PATCH", path+"/"+id, ten.Token, map[string]any{"type": "GENERATE_QUOTE", "config": quote})
		if st != 200 || upd["type"] != "GENERATE_QUOTE" {
			t.Errorf("type change with config: %d %v", st, upd)
		}
		if st, _ := b.Do(t, "PATCH", path+"/"+id, ten.Token, map[string]any{"type": "COLLECT_PAYMENT"}); st != 400 {
			t.Errorf("to a synthetic type: %d", st)
		}
		b.Do(t, "POST", path, ten.Token, map[string]any{"name": "Other", "description": "d", "type": "BOOK_MEETING"})
		if st, body := b.Do(t, "PATCH", path+"/"+id, ten.Token, map[string]any{"name": "other"}); st != 409 {
			t.Errorf("duplicate name (case-insensitive): %d %v", st, body)
		}
		if st, _ := b.Do(t, "GET", "/tenants/"+other.Slug+"/tools/"+id, other.Token, nil); st != 404 {
			t.Errorf("other tenant reads tool: %d", st)
		}
		if st, _ := b.Do(t, "PATCH", "/tenants/"+other.Slug+"/tools/"+id, other.Token, map[string]any{"name": "x"}); st != 404 {
			t.Errorf("other tenant patches tool: %d", st)
		}
		if st, _ := b.Do(t, "DELETE", "/tenants/"+other.Slug+"/tools/"+id, other.Token, nil); st != 404 {
			t.Errorf("other tenant deletes tool: %d", st)
		}
		st, del := b.Do(t, "DELETE", path+"/"+id, ten.Token, nil)
		if st != 200 || del["deleted"] != true || del["id"] != id {
			t.Errorf("delete: %d %v", st, del)
		}
		if st, _ := b.Do(t, "GET", path+"/"+id, ten.Token, nil); st != 404 {
			t.Errorf("after delete: %d", st)
		}
	})

	t.Run("SegmentDeletionCountsTools", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "scale")
		b.Do(t, "POST", "/tenants/"+ten.Slug+"/segments", ten.Token, map[string]any{"name": "Pros", "systemPrompt": "p"})
		_, tool := b.Do(t, "POST", "/tenants/"+ten.Slug+"/tools", ten.Token, map[string]any{"name": "Meet", "description": "d", "type": "BOOK_MEETING", "segmentId": "pros"})
		st, body := b.Do(t, "DELETE", "/tenants/"+ten.Slug+"/segments/pros", ten.Token, nil)
		if st != 409 || body["details"].(map[string]any)["tools"] != float64(1) {
			t.Fatalf("delete segment with a tool: %d %v", st, body)
		}
		st, body = b.Do(t, "DELETE", "/tenants/"+ten.Slug+"/segments/pros?cascade=true", ten.Token, nil)
		if st != 200 || body["toolsDeleted"] != float64(1) {
			t.Errorf("cascade: %d %v", st, body)
		}
		if st, _ := b.Do(t, "GET", "/tenants/"+ten.Slug+"/tools/"+tool["id"].(string), ten.Token, nil); st != 404 {
			t.Errorf("tool survived its segment: %d", st)
		}
	})
}

// TestToolLifecycle walks tools through every operation: one of each type
// with its normalised config, partial updates and type changes, invalid
// bodies, unique names, delete, 404, 403 and 413; each request is also
// checked to be valid, or refused, by openapi.json.
func TestToolLifecycle(t *testing.T) {
	t.Parallel()
	c := &webtest.OpenAPIChecker{T: t, B: webtest.Setup(t)}
	b := c.B
	ten := b.NewTenant(t, "scale")
	base := "/tenants/" + ten.Slug + "/tools"
	if status, body := c.Exchange("POST", "/tenants/"+ten.Slug+"/segments", ten.Token, map[string]any{"name": "Pros", "systemPrompt": "p"}, true); status != http.StatusCreated {
		t.Fatalf("POST segment: %d %v", status, body)
	}
	tool := func(body any) map[string]any { m, _ := body.(map[string]any); return m }
	config := func(body any) map[string]any { m, _ := tool(body)["config"].(map[string]any); return m }

	status, body := c.Exchange("GET", base, ten.Token, nil, true)
	if list, ok := body.([]any); status != http.StatusOK || !ok || len(list) != 0 {
		t.Fatalf("GET tools of a new tenant: %d %v", status, body)
	}

	// One tool of each type: the config comes back normalised, with its defaults.
	form := map[string]any{"fields": []any{
		map[string]any{"name": "email", "label": "Email", "type": "email", "required": true},
		map[string]any{"name": "note", "label": "Note", "type": "textarea"},
	}, "confirmationMessage": "Thanks"}
	quote := map[string]any{"currency": "EUR", "taxRate": 20, "items": []any{
		map[string]any{"name": " Website ", "description": "Five pages", "unitPrice": 1500, "unit": "site",
			"options": []any{map[string]any{"name": "Hosting", "unitPrice": 119.88}}},
		map[string]any{"name": "Logo", "unitPrice": 300.5, "currency": "EUR"},
	}}
	creates := []struct {
		typ   string
		extra map[string]any
		check func(cfg map[string]any) bool
	}{
		{parley.ToolSubmitForm, map[string]any{"config": form, "segmentId": "pros", "position": 2}, func(cfg map[string]any) bool {
			f := cfg["fields"].([]any)
			return len(f) == 2 && f[1].(map[string]any)["required"] == false && cfg["confirmationMessage"] == "Thanks"
		}},
		{parley.ToolGenerateQuote, map[string]any{"config": quote, "position": 1.5}, func(cfg map[string]any) bool {
			items := cfg["items"].([]any)
			return items[0].(map[string]any)["name"] == "Website" && items[1].(map[string]any)["currency"] == "EUR" &&
				cfg["validityDays"] == float64(30) && cfg["taxRate"] == float64(20)
		}},
		{parley.ToolBookMeeting, map[string]any{}, func(cfg map[string]any) bool {
			return cfg["durationMinutes"] == float64(30) && cfg["bufferMinutes"] == float64(0) &&
				cfg["bookingWindowDays"] == float64(30) && cfg["minNoticeHours"] == float64(2)
		}},
		{parley.ToolEscalateToHuman, map[string]any{"config": map[string]any{"handoffMessage": "A human will answer."},
			"webhookUrl": "https://hooks.example.com/escalate", "webhookSecret": "s3cret"}, func(cfg map[string]any) bool {
			return cfg["handoffMessage"] == "A human will answer."
		}},
		{parley.ToolRememberFact, map[string]any{"config": nil, "isActive": false}, func(cfg map[string]any) bool {
			keys, ok := cfg["allowedKeys"].([]any)
			return ok && len(keys) == 0
		}},
		{parley.ToolRecommendProduct, map[string]any{"config": map[string]any{"maxResults": 5}, "position": -1}, func(cfg map[string]any) bool {
			return cfg["maxResults"] == float64(5)
		}},
	}
	ids := map[string]string{}
	for _, tc := range creates {
		req := map[string]any{"name": "Tool " + tc.typ, "description": " Use it. ", "type": tc.typ}
		maps.Copy(req, tc.extra)
		status, body := c.Exchange("POST", base, ten.Token, req, true)
		if status != http.StatusCreated || tool(body)["type"] != tc.typ || tool(body)["description"] != "Use it." {
			t.Fatalf("POST %s tool: %d %v", tc.typ, status, body)
		}
		if !tc.check(config(body)) {
			t.Errorf("POST %s: config %v", tc.typ, config(body))
		}
		ids[tc.typ] = tool(body)["id"].(string)
	}
	status, body = c.Exchange("GET", base+"/"+ids[parley.ToolSubmitForm], ten.Token, nil, true)
	if got := tool(body); status != http.StatusOK || got["segment"] != "pros" || got["segmentId"] == nil || got["hasWebhookSecret"] != false {
		t.Errorf("GET form tool: %d %v", status, body)
	}
	status, body = c.Exchange("GET", base+"/"+ids[parley.ToolEscalateToHuman], ten.Token, nil, true)
	if got := tool(body); status != http.StatusOK || got["hasWebhookSecret"] != true || got["webhookUrl"] != "https://hooks.example.com/escalate" || got["segment"] != nil {
		t.Errorf("GET escalation tool: %d %v", status, body)
	}

	// The list: lowest position first, ties oldest first.
	status, body = c.Exchange("GET", base, ten.Token, nil, true)
	list, _ := body.([]any)
	if status != http.StatusOK || len(list) != 6 || tool(list[0])["type"] != parley.ToolRecommendProduct ||
		tool(list[1])["type"] != parley.ToolBookMeeting || tool(list[5])["type"] != parley.ToolSubmitForm {
		t.Fatalf("GET tools: %d %v", status, body)
	}

	// PATCH: only the members sent change; read-only members are ignored.
	formID := ids[parley.ToolSubmitForm]
	status, body = c.Exchange("PATCH", base+"/"+formID, ten.Token, map[string]any{"name": "Callback", "segmentId": nil, "position": 3, "id": "ignored", "segment": "ignored", "hasWebhookSecret": true}, true)
	if got := tool(body); status != http.StatusOK || got["name"] != "Callback" || got["segment"] != nil || got["segmentId"] != nil || got["id"] != formID || len(config(body)["fields"].([]any)) != 2 {
		t.Errorf("PATCH tool: %d %v", status, body)
	}
	// Changing the type away from escalation drops the webhook.
	status, body = c.Exchange("PATCH", base+"/"+ids[parley.ToolEscalateToHuman], ten.Token, map[string]any{"type": parley.ToolRecommendProduct, "config": map[string]any{}}, true)
	if got := tool(body); status != http.StatusOK || got["webhookUrl"] != nil || got["hasWebhookSecret"] != false || config(body)["maxResults"] != float64(3) {
		t.Errorf("PATCH type: %d %v", status, body)
	}
	// A new type without a config validates the stored one, which does not fit.
	if status, body = c.Exchange("PATCH", base+"/"+formID, ten.Token, map[string]any{"type": parley.ToolBookMeeting}, true); status != http.StatusBadRequest || !strings.Contains(fmt.Sprint(webtest.ErrorDetails(body)["config"]), "unknown key") {
		t.Errorf("PATCH type with a config that does not fit: %d %v", status, body)
	}
	if status, body = c.Exchange("PATCH", base+"/"+ids[parley.ToolBookMeeting], ten.Token, map[string]any{"webhookSecret": "x"}, true); status != http.StatusBadRequest || webtest.ErrorDetails(body)["webhookSecret"] == nil {
		t.Errorf("PATCH webhookSecret of a meeting tool: %d %v", status, body)
	}
	if status, body = c.Exchange("PATCH", base+"/"+ids[parley.ToolBookMeeting], ten.Token, map[string]any{"webhookSecret": "", "webhookUrl": nil, "config": map[string]any{"bufferMinutes": 15}}, true); status != http.StatusOK || config(body)["bufferMinutes"] != float64(15) || config(body)["durationMinutes"] != float64(30) {
		t.Errorf("PATCH clearing an absent webhook: %d %v", status, body)
	}

	// Invalid bodies: refused by the server and by the document, field by field.
	valid := func(typ string, extra map[string]any) map[string]any {
		m := map[string]any{"name": "n", "description": "d", "type": typ}
		maps.Copy(m, extra)
		return m
	}
	field := func(name string, fields ...map[string]any) map[string]any {
		return map[string]any{"config": map[string]any{"fields": fields}}
	}
	quoteWith := func(items ...any) map[string]any {
		return map[string]any{"config": map[string]any{"currency": "EUR", "items": items}}
	}
	for _, tc := range []struct {
		what, field string
		req         map[string]any
		docRefuses  bool
	}{
		{"synthetic", "type", valid("EXPLORE_CORPUS", nil), true},
		{"unknownType", "type", valid("FOO", nil), true},
		{"nullType", "type", valid("", map[string]any{"type": nil}), true},
		{"noName", "name", map[string]any{"description": "d", "type": parley.ToolBookMeeting}, true},
		{"blankName", "name", valid(parley.ToolBookMeeting, map[string]any{"name": " "}), true},
		{"longName", "name", valid(parley.ToolBookMeeting, map[string]any{"name": strings.Repeat("n", 101)}), true},
		{"noDescription", "description", map[string]any{"name": "n", "type": parley.ToolBookMeeting}, true},
		{"longDescription", "description", valid(parley.ToolBookMeeting, map[string]any{"description": strings.Repeat("d", 1001)}), true},
		{"unknownKey", "config", valid(parley.ToolBookMeeting, map[string]any{"config": map[string]any{"color": "red"}}), true},
		{"duration", "config", valid(parley.ToolBookMeeting, map[string]any{"config": map[string]any{"durationMinutes": 4}}), true},
		{"notObject", "config", valid(parley.ToolRecommendProduct, map[string]any{"config": "three"}), true},
		{"maxResults", "config", valid(parley.ToolRecommendProduct, map[string]any{"config": map[string]any{"maxResults": 11}}), true},
		{"handoff", "config", valid(parley.ToolEscalateToHuman, map[string]any{"config": map[string]any{"handoffMessage": strings.Repeat("h", 501)}}), true},
		{"allowedKeys", "config", valid(parley.ToolRememberFact, map[string]any{"config": map[string]any{"allowedKeys": []string{"Company"}}}), true},
		{"formNoConfig", "config", valid(parley.ToolSubmitForm, nil), true},
		{"formNoFields", "config", valid(parley.ToolSubmitForm, map[string]any{"config": map[string]any{"fields": []any{}}}), true},
		{"formFieldKey", "config", valid(parley.ToolSubmitForm, field("f", map[string]any{"name": "a", "label": "A", "type": "text", "placeholder": "x"})), true},
		{"formFieldType", "config", valid(parley.ToolSubmitForm, field("f", map[string]any{"name": "a", "label": "A", "type": "number"})), true},
		{"quoteCurrency", "config", valid(parley.ToolGenerateQuote, map[string]any{"config": map[string]any{"currency": "eur", "items": []any{map[string]any{"name": "x"}}}}), true},
		{"quoteNoItems", "config", valid(parley.ToolGenerateQuote, quoteWith()), true},
		{"quoteItemKey", "config", valid(parley.ToolGenerateQuote, quoteWith(map[string]any{"name": "x", "price": 1})), true},
		{"quoteCents", "config", valid(parley.ToolGenerateQuote, quoteWith(map[string]any{"name": "x", "unitPrice": 1.234})), false},
		{"quoteTwice", "config", valid(parley.ToolGenerateQuote, quoteWith(map[string]any{"name": "Logo"}, map[string]any{"name": " logo"})), false},
		{"quoteItemCurrency", "config", valid(parley.ToolGenerateQuote, quoteWith(map[string]any{"name": "x", "currency": "USD"})), false},
		{"webhookOnForm", "webhookUrl", valid(parley.ToolSubmitForm, map[string]any{"config": form, "webhookUrl": "https://hooks.example.com/x"}), true},
		{"webhookHTTP", "webhookUrl", valid(parley.ToolEscalateToHuman, map[string]any{"webhookUrl": "http://hooks.example.com/x"}), true},
		{"webhookLoopback", "webhookUrl", valid(parley.ToolEscalateToHuman, map[string]any{"webhookUrl": "https://127.0.0.1/hook"}), false},
		{"secretOnMeeting", "webhookSecret", valid(parley.ToolBookMeeting, map[string]any{"webhookSecret": "s"}), true},
		{"longSecret", "webhookSecret", valid(parley.ToolEscalateToHuman, map[string]any{"webhookSecret": strings.Repeat("s", 256)}), true},
		{"position", "position", valid(parley.ToolBookMeeting, map[string]any{"position": 1e10}), true},
		{"positionType", "position", valid(parley.ToolBookMeeting, map[string]any{"position": "first"}), true},
		{"isActive", "isActive", valid(parley.ToolBookMeeting, map[string]any{"isActive": nil}), true},
		{"segment", "segmentId", valid(parley.ToolBookMeeting, map[string]any{"segmentId": "nope"}), false},
	} {
		status, body := c.Exchange("POST", base, ten.Token, tc.req, !tc.docRefuses)
		if status != http.StatusBadRequest || webtest.ErrorDetails(body)[tc.field] == nil {
			t.Errorf("POST %s: %d %v", tc.what, status, body)
		}
	}
	status, body = c.Exchange("POST", base, ten.Token, valid("COLLECT_PAYMENT", nil), false)
	if msg := fmt.Sprint(webtest.ErrorDetails(body)["type"]); status != http.StatusBadRequest || !strings.Contains(msg, "allowed types: "+strings.Join(parley.UserToolTypes, ", ")) {
		t.Errorf("POST a synthetic type: %d %v", status, body)
	}
	status, body = c.Exchange("POST", base, ten.Token, valid(parley.ToolEscalateToHuman, map[string]any{"webhookUrl": "https://10.1.2.3/hook"}), true)
	if msg := fmt.Sprint(webtest.ErrorDetails(body)["webhookUrl"]); status != http.StatusBadRequest || !strings.HasPrefix(msg, "refused: ") {
		t.Errorf("POST a private webhook: %d %v", status, body)
	}
	if status, body = c.Exchange("POST", base, ten.Token, "not an object", false); status != http.StatusBadRequest {
		t.Errorf("POST a string: %d %v", status, body)
	}

	// Names are unique per tenant, case-insensitively.
	if status, body = c.Exchange("POST", base, ten.Token, valid(parley.ToolBookMeeting, map[string]any{"name": "CALLBACK"}), true); status != http.StatusConflict || webtest.ErrorDetails(body)["name"] == nil {
		t.Errorf("POST a taken name: %d %v", status, body)
	}
	if status, body = c.Exchange("PATCH", base+"/"+ids[parley.ToolBookMeeting], ten.Token, map[string]any{"name": "callback"}, true); status != http.StatusConflict || webtest.ErrorDetails(body)["name"] == nil {
		t.Errorf("PATCH a taken name: %d %v", status, body)
	}

	// Delete, 404, 403, 413.
	status, body = c.Exchange("DELETE", base+"/"+formID, ten.Token, nil, true)
	if got := tool(body); status != http.StatusOK || got["deleted"] != true || got["id"] != formID {
		t.Errorf("DELETE tool: %d %v", status, body)
	}
	for _, method := range []string{"GET", "PATCH", "DELETE"} {
		var req any
		if method == "PATCH" {
			req = map[string]any{"position": 1}
		}
		for _, id := range []string{formID, "not-a-uuid"} {
			status, body = c.Exchange(method, base+"/"+id, ten.Token, req, true) // uuid is a format, not checked
			if status != http.StatusNotFound || tool(body)["error"] != "Tool not found" {
				t.Errorf("%s tool %s: %d %v", method, id, status, body)
			}
		}
	}
	other := b.NewTenant(t, "scale")
	if status, body = c.Exchange("GET", "/tenants/"+other.Slug+"/tools/"+ids[parley.ToolBookMeeting], other.Token, nil, true); status != http.StatusNotFound {
		t.Errorf("GET another tenant's tool: %d %v", status, body)
	}
	readOnly := b.Token(t, ten.ID, auth.ScopeToolsRead)
	if status, body = c.Exchange("POST", base, readOnly, valid(parley.ToolBookMeeting, nil), true); status != http.StatusForbidden || tool(body)["error"] != "Missing scope: tools:write" {
		t.Errorf("POST with tools:read: %d %v", status, body)
	}
	if status, body = c.Exchange("GET", base, b.Token(t, ten.ID, auth.ScopeVisitorsRead), nil, true); status != http.StatusForbidden {
		t.Errorf("GET with visitors:read: %d %v", status, body)
	}
	if status, body = c.Exchange("POST", base, ten.Token, valid(parley.ToolBookMeeting, map[string]any{"description": strings.Repeat("d", 1<<20)}), false); status != http.StatusRequestEntityTooLarge {
		t.Errorf("POST large body: %d %v", status, body)
	}
}
