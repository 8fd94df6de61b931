package public_test

import (
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/parley/parley/web/webtest"
)

func TestContextDiscovery(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)

	t.Run("Fields", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "scale")
		base := "/tenants/" + ten.Slug
		b.MustDo(t, 200, "PUT", base, ten.Token, map[string]any{
			"description": "We sell things", "botName": "Ada", "botTitle": "Sales assistant", "botLore": "private lore",
			"visitorContextUrl": "https://hooks.example.com/private-context", "captchaEnabled": true,
			"captchaSiteKey": "site-key-x", "captchaSecretKey": "captcha-secret-x",
		})
		b.MustDo(t, 200, "PUT", base+"/mcp-tools", ten.Token, map[string]any{
			"mcpToolsUrl": "https://tools.example.com/private-mcp", "mcpToolsApiKey": "mcp-key-x"})
		if _, err := b.DB.Pool().Exec(t.Context(), `UPDATE tenants SET widget_key = 'wk-private-x' WHERE id = $1`, ten.ID); err != nil {
			t.Fatal(err)
		}

		// Segments: the default first, then by name; an inactive one is left out.
		b.MustDo(t, 201, "POST", base+"/segments", ten.Token, map[string]any{"slug": "zeta", "name": "Zeta", "systemPrompt": "p"})
		b.MustDo(t, 201, "POST", base+"/segments", ten.Token, map[string]any{"slug": "alpha", "name": "Alpha", "systemPrompt": "p"})
		b.MustDo(t, 201, "POST", base+"/segments", ten.Token, map[string]any{"slug": "archive", "name": "Archive", "systemPrompt": "p"})
		b.MustDo(t, 200, "PATCH", base+"/segments/archive", ten.Token, map[string]any{"isActive": false})

		// Tools: active ones count once per type; an inactive tool, one tied
		// to an inactive segment, or one chat does not offer (BOOK_MEETING
		// without a calendar, RECOMMEND_PRODUCT without a product), does not.
		form := map[string]any{"fields": []any{map[string]any{"name": "email", "label": "Email", "type": "email", "required": true}}}
		for _, tool := range []map[string]any{
			{"name": "Form", "description": "d", "type": "SUBMIT_FORM", "config": form, "segmentId": "alpha"},
			{"name": "Remember", "description": "d", "type": "REMEMBER_FACT"},
			{"name": "Remember too", "description": "d", "type": "REMEMBER_FACT", "segmentId": "zeta"},
			{"name": "Quote", "description": "d", "type": "GENERATE_QUOTE", "segmentId": "archive", "config": map[string]any{
				"currency": "EUR", "items": []any{map[string]any{"name": "Widget", "unitPrice": 1, "currency": "EUR"}}}},
			{"name": "Meet", "description": "d", "type": "BOOK_MEETING"},
			{"name": "Products", "description": "d", "type": "RECOMMEND_PRODUCT"},
		} {
			b.MustDo(t, 201, "POST", base+"/tools", ten.Token, tool)
		}

		// Another tenant's segments and tools never appear.
		other := b.NewTenant(t, "scale")
		b.MustDo(t, 201, "POST", "/tenants/"+other.Slug+"/segments", other.Token, map[string]any{"slug": "other-seg", "name": "Other", "systemPrompt": "p"})
		b.MustDo(t, 201, "POST", "/tenants/"+other.Slug+"/tools", other.Token, map[string]any{"name": "Human", "description": "d", "type": "ESCALATE_TO_HUMAN"})
		b.MustDo(t, 201, "POST", "/tenants/"+other.Slug+"/tools", other.Token, map[string]any{"name": "Meet", "description": "d", "type": "BOOK_MEETING"})

		resp, raw, got := b.GetContext(t, ten.Slug)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET context: %d %s", resp.StatusCode, raw)
		}
		want := map[string]any{
			"tenant":       map[string]any{"name": ten.Name, "description": "We sell things", "botName": "Ada", "botTitle": "Sales assistant"},
			"capabilities": []any{"chat", "mcp_tools", "submit_form", "remember_fact"},
			"segments":     []any{"default", "alpha", "zeta"},
			"endpoints":    map[string]any{"chat": b.Srv.Config.BaseURL + "/chat/" + ten.Slug, "mcp": b.Srv.Config.BaseURL + "/mcp"},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("GET context:\n got %v\nwant %v", got, want)
		}
		for _, h := range [][2]string{
			{"Cache-Control", "public, max-age=60"},
			{"Access-Control-Allow-Origin", "*"},
			{"Content-Type", "application/json"},
		} {
			if v := resp.Header.Get(h[0]); v != h[1] {
				t.Errorf("%s = %q, want %q", h[0], v, h[1])
			}
		}
		for _, private := range []string{ten.ID, ten.Token, other.Slug, "other-seg", "archive", "escalate", "book_meeting", "generate_quote",
			"recommend_product", "scale", "private", "site-key-x", "captcha-secret-x", "mcp-key-x", "tools.example.com",
			"Limit", "id\"", "voice"} {
			if strings.Contains(strings.ToLower(raw), strings.ToLower(private)) {
				t.Errorf("GET context leaks %q: %s", private, raw)
			}
		}

		// The other tenant sees only its own.
		_, _, got = b.GetContext(t, other.Slug)
		if caps := got["capabilities"]; !reflect.DeepEqual(caps, []any{"chat", "escalate_to_human"}) {
			t.Errorf("other tenant's capabilities = %v", caps)
		}
		if segs := got["segments"]; !reflect.DeepEqual(segs, []any{"default", "other-seg"}) {
			t.Errorf("other tenant's segments = %v", segs)
		}

		// A change shows on the next request (the cache is the client's).
		b.MustDo(t, 200, "PATCH", base+"/segments/archive", ten.Token, map[string]any{"isActive": true})
		if _, _, got = b.GetContext(t, ten.Slug); !slices.Contains(got["capabilities"].([]any), any("generate_quote")) ||
			!reflect.DeepEqual(got["segments"], []any{"default", "alpha", "archive", "zeta"}) {
			t.Errorf("after activating archive: %v", got)
		}
		b.MustDo(t, 201, "POST", base+"/products", ten.Token, map[string]any{"name": "Lamp"})
		if _, _, got = b.GetContext(t, ten.Slug); !slices.Contains(got["capabilities"].([]any), any("recommend_product")) {
			t.Errorf("after adding a product: %v", got["capabilities"])
		}
	})

	// Voice is listed once calls are answered: a plan with voice, voice
	// enabled and the orchestrator's secret set.
	t.Run("Voice", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			name, plan      string
			enabled, secret bool
			want            bool
		}{
			{"set up", "scale", true, true, true},
			{"no secret", "scale", true, false, false},
			{"disabled", "scale", false, true, false},
			{"plan without voice", "builder", true, true, false},
		} {
			ten := b.NewTenant(t, tc.plan)
			var secret []byte
			if tc.secret {
				secret = []byte("sealed secret")
			}
			if _, err := b.DB.Pool().Exec(t.Context(), `UPDATE tenants SET voice_enabled = $2, voice_secret = $3 WHERE id = $1`, ten.ID, tc.enabled, secret); err != nil {
				t.Fatal(err)
			}
			_, raw, got := b.GetContext(t, ten.Slug)
			if has := slices.Contains(got["capabilities"].([]any), any("voice")); has != tc.want {
				t.Errorf("%s: capabilities %v, voice listed %v, want %v", tc.name, got["capabilities"], has, tc.want)
			}
			if strings.Contains(raw, "sealed secret") {
				t.Errorf("%s: the secret leaks: %s", tc.name, raw)
			}
		}
	})

	t.Run("UnsetFieldsAreNull", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "starter")
		_, raw, got := b.GetContext(t, ten.Slug)
		tenant, _ := got["tenant"].(map[string]any)
		for _, k := range []string{"description", "botName", "botTitle"} {
			if v, ok := tenant[k]; !ok || v != nil {
				t.Errorf("tenant.%s = %v (present %v), want null: %s", k, v, ok, raw)
			}
		}
	})

	t.Run("CapabilitiesPerPlan", func(t *testing.T) {
		t.Parallel()
		mcpURL := "https://tools.example.com/mcp"
		for _, tc := range []struct {
			plan    string
			withMCP bool
			want    []any
		}{
			// Without the widget no conversation can run, hence no tool either.
			{"free", false, []any{}},
			{"free", true, []any{}},
			{"starter", false, []any{"remember_fact"}},
			{"starter", true, []any{"remember_fact"}}, // a URL left from a higher plan does not count
			{"builder", false, []any{"remember_fact"}},
			{"builder", true, []any{"mcp_tools", "remember_fact"}},
			{"scale", false, []any{"remember_fact"}}, // no phone line can be set up: no voice
			{"scale", true, []any{"mcp_tools", "remember_fact"}},
		} {
			ten := b.NewTenant(t, tc.plan)
			b.MustDo(t, 201, "POST", "/tenants/"+ten.Slug+"/tools", ten.Token, map[string]any{"name": "Remember", "description": "d", "type": "REMEMBER_FACT"})
			if tc.withMCP {
				if _, err := b.DB.Pool().Exec(t.Context(), `UPDATE tenants SET mcp_tools_url = $2 WHERE id = $1`, ten.ID, mcpURL); err != nil {
					t.Fatal(err)
				}
			}
			want := tc.want
			if tc.plan != "free" {
				want = append([]any{"chat"}, want...)
			}
			resp, raw, got := b.GetContext(t, ten.Slug)
			if resp.StatusCode != http.StatusOK || !reflect.DeepEqual(got["capabilities"], want) {
				t.Errorf("%s (MCP URL %v): %d %s, want capabilities %v", tc.plan, tc.withMCP, resp.StatusCode, raw, want)
			}
			if !reflect.DeepEqual(got["segments"], []any{"default"}) {
				t.Errorf("%s: segments %v", tc.plan, got["segments"])
			}
		}
	})

	t.Run("UnknownSlug", func(t *testing.T) {
		t.Parallel()
		for _, slug := range []string{"no-such-tenant", "UPPER", strings.Repeat("x", 200)} {
			resp, raw, got := b.GetContext(t, slug)
			if resp.StatusCode != http.StatusNotFound || !reflect.DeepEqual(got, map[string]any{"error": "Tenant not found"}) {
				t.Errorf("GET /context/%s: %d %s", slug, resp.StatusCode, raw)
			}
			if v := resp.Header.Get("Access-Control-Allow-Origin"); v != "*" {
				t.Errorf("404 Access-Control-Allow-Origin = %q", v)
			}
			if v := resp.Header.Get("Cache-Control"); v != "no-store" {
				t.Errorf("404 Cache-Control = %q", v)
			}
		}
	})

	t.Run("NoCredentialsNeeded", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "starter")
		// Credentials, even bad ones, are ignored.
		for _, token := range []string{"", "ak_invalid", ten.Token} {
			if status, got := b.Do(t, "GET", "/context/"+ten.Slug+"/", token, nil); status != http.StatusOK || got["tenant"] == nil {
				t.Errorf("GET context with token %q: %d %v", token, status, got)
			}
		}
	})
}
