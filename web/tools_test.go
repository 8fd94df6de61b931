package web

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
)

func TestTools(t *testing.T) {
	t.Parallel()
	b := setup(t)

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
		ten := b.newTenant(t, "scale")
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
			st, tool := b.do(t, "POST", path, ten.Token, body)
			if st != 201 || tool["type"] != tc.typ || tool["isActive"] != true || tool["segment"] != nil {
				t.Fatalf("%s: %d %v", tc.typ, st, tool)
			}
			if !tc.check(tool["config"].(map[string]any)) {
				t.Errorf("%s config = %v", tc.typ, tool["config"])
			}
		}
		resp := b.raw(t, "GET", path, ten.Token, nil)
		var list []map[string]any
		decodeJSON(t, resp, &list)
		if len(list) != 6 || list[0]["type"] != "SUBMIT_FORM" || list[5]["type"] != "RECOMMEND_PRODUCT" {
			t.Errorf("list order: %v", list)
		}
	})

	t.Run("Validation", func(t *testing.T) {
		t.Parallel()
		ten := b.newTenant(t, "scale")
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
				st, body := b.do(t, "POST", path, ten.Token, tc.body)
				if st != 400 {
					t.Fatalf("want 400, got %d %v", st, body)
				}
				msg, _ := body["details"].(map[string]any)[tc.field].(string)
				if !strings.Contains(msg, tc.contains) {
					t.Errorf("details[%s] = %q, want it to mention %q (%v)", tc.field, msg, tc.contains, body)
				}
			})
		}
		if st, _ := b.do(t, "POST", path, ten.Token, base("BOOK_MEETING", nil, map[string]any{"name": strings.Repeat("n", 100)})); st != 201 {
			t.Errorf("name of 100: %d", st)
		}
	})

	t.Run("EscalationSecretNeverReturned", func(t *testing.T) {
		t.Parallel()
		ten := b.newTenant(t, "scale")
		path := "/tenants/" + ten.Slug + "/tools"
		secret := "whsec-very-secret-value"
		st, tool := b.do(t, "POST", path, ten.Token, map[string]any{"name": "Human", "description": "Escalate", "type": "ESCALATE_TO_HUMAN",
			"webhookUrl": "https://hooks.example.com/escalate", "webhookSecret": secret})
		if st != 201 || tool["hasWebhookSecret"] != true || tool["webhookUrl"] != "https://hooks.example.com/escalate" {
			t.Fatalf("create: %d %v", st, tool)
		}
		for _, p := range []string{path, path + "/" + tool["id"].(string)} {
			raw := b.rawBody(t, "GET", p, ten.Token)
			if strings.Contains(raw, secret) || strings.Contains(raw, "webhookSecret\"") {
				t.Errorf("%s leaks the secret: %s", p, raw)
			}
		}
		var sealed []byte
		if err := b.db.Pool().QueryRow(t.Context(), `SELECT webhook_secret FROM tools WHERE id = $1`, tool["id"]).Scan(&sealed); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(sealed, []byte(secret)) {
			t.Error("secret stored in clear")
		}
		if opened, err := b.box.Open(sealed); err != nil || string(opened) != secret {
			t.Errorf("sealed secret does not open: %v", err)
		}
		st, upd := b.do(t, "PATCH", path+"/"+tool["id"].(string), ten.Token, map[string]any{"webhookSecret": nil})
		if st != 200 || upd["hasWebhookSecret"] != false {
			t.Errorf("clear secret: %d %v", st, upd)
		}
	})

	t.Run("PatchGetDeleteAndSegment", func(t *testing.T) {
		t.Parallel()
		ten := b.newTenant(t, "scale")
		other := b.newTenant(t, "scale")
		path := "/tenants/" + ten.Slug + "/tools"
		b.do(t, "POST", "/tenants/"+ten.Slug+"/segments", ten.Token, map[string]any{"name": "Pros", "systemPrompt": "p"})
		_, tool := b.do(t, "POST", path, ten.Token, map[string]any{"name": "Form", "description": "d", "type": "SUBMIT_FORM", "config": form, "segmentId": "pros"})
		id := tool["id"].(string)
		if tool["segment"] != "pros" {
			t.Errorf("segment = %v", tool["segment"])
		}
		st, upd := b.do(t, "PATCH", path+"/"+id, ten.Token, map[string]any{"isActive": false, "position": 2.5, "segmentId": nil})
		if st != 200 || upd["isActive"] != false || upd["position"] != 2.5 || upd["segment"] != nil || upd["name"] != "Form" || len(upd["config"].(map[string]any)["fields"].([]any)) != 2 {
			t.Errorf("patch: %d %v", st, upd)
		}
		st, body := b.do(t, "PATCH", path+"/"+id, ten.Token, map[string]any{"type": "GENERATE_QUOTE"})
		if st != 400 || !strings.Contains(body["details"].(map[string]any)["config"].(string), "unknown key") {
			t.Errorf("type change without a fitting config: %d %v", st, body)
		}
		st, upd = b.do(t, "PATCH", path+"/"+id, ten.Token, map[string]any{"type": "GENERATE_QUOTE", "config": quote})
		if st != 200 || upd["type"] != "GENERATE_QUOTE" {
			t.Errorf("type change with config: %d %v", st, upd)
		}
		if st, _ := b.do(t, "PATCH", path+"/"+id, ten.Token, map[string]any{"type": "COLLECT_PAYMENT"}); st != 400 {
			t.Errorf("to a synthetic type: %d", st)
		}
		b.do(t, "POST", path, ten.Token, map[string]any{"name": "Other", "description": "d", "type": "BOOK_MEETING"})
		if st, body := b.do(t, "PATCH", path+"/"+id, ten.Token, map[string]any{"name": "other"}); st != 409 {
			t.Errorf("duplicate name (case-insensitive): %d %v", st, body)
		}
		if st, _ := b.do(t, "GET", "/tenants/"+other.Slug+"/tools/"+id, other.Token, nil); st != 404 {
			t.Errorf("other tenant reads tool: %d", st)
		}
		if st, _ := b.do(t, "PATCH", "/tenants/"+other.Slug+"/tools/"+id, other.Token, map[string]any{"name": "x"}); st != 404 {
			t.Errorf("other tenant patches tool: %d", st)
		}
		if st, _ := b.do(t, "DELETE", "/tenants/"+other.Slug+"/tools/"+id, other.Token, nil); st != 404 {
			t.Errorf("other tenant deletes tool: %d", st)
		}
		st, del := b.do(t, "DELETE", path+"/"+id, ten.Token, nil)
		if st != 200 || del["deleted"] != true || del["id"] != id {
			t.Errorf("delete: %d %v", st, del)
		}
		if st, _ := b.do(t, "GET", path+"/"+id, ten.Token, nil); st != 404 {
			t.Errorf("after delete: %d", st)
		}
	})

	t.Run("SegmentDeletionCountsTools", func(t *testing.T) {
		t.Parallel()
		ten := b.newTenant(t, "scale")
		b.do(t, "POST", "/tenants/"+ten.Slug+"/segments", ten.Token, map[string]any{"name": "Pros", "systemPrompt": "p"})
		_, tool := b.do(t, "POST", "/tenants/"+ten.Slug+"/tools", ten.Token, map[string]any{"name": "Meet", "description": "d", "type": "BOOK_MEETING", "segmentId": "pros"})
		st, body := b.do(t, "DELETE", "/tenants/"+ten.Slug+"/segments/pros", ten.Token, nil)
		if st != 409 || body["details"].(map[string]any)["tools"] != float64(1) {
			t.Fatalf("delete segment with a tool: %d %v", st, body)
		}
		st, body = b.do(t, "DELETE", "/tenants/"+ten.Slug+"/segments/pros?cascade=true", ten.Token, nil)
		if st != 200 || body["toolsDeleted"] != float64(1) {
			t.Errorf("cascade: %d %v", st, body)
		}
		if st, _ := b.do(t, "GET", "/tenants/"+ten.Slug+"/tools/"+tool["id"].(string), ten.Token, nil); st != 404 {
			t.Errorf("tool survived its segment: %d", st)
		}
	})
}

// raw sends a request and returns the response unread.
func (b *bundle) raw(t *testing.T, method, path, token string, body *strings.Reader) *http.Response {
	t.Helper()
	var req *http.Request
	if body != nil {
		req, _ = http.NewRequest(method, b.ts.URL+path, body)
		req.Header.Set("Content-Type", "application/json")
	} else {
		req, _ = http.NewRequest(method, b.ts.URL+path, nil)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := b.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// rawBody returns the response body as text.
func (b *bundle) rawBody(t *testing.T, method, path, token string) string {
	t.Helper()
	resp := b.raw(t, method, path, token, nil)
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	return buf.String()
}
