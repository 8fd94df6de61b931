package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime/multipart"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/agent"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/handlers"
)

// openAPIDoc is the embedded document, parsed and validated once per test
// binary: that takes half a second of CPU under the race detector, and some
// thirty tests read the document (none changes it; kin-openapi's validation
// caches are safe for concurrent use).
var openAPIDoc = sync.OnceValues(func() (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPI)
	if err != nil {
		return nil, fmt.Errorf("loading openapi.json: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("openapi.json is not a valid OpenAPI document: %w", err)
	}
	return doc, nil
})

// loadOpenAPI returns the embedded document, parsed and validated; tests
// must not change it.
func loadOpenAPI(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openAPIDoc()
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// schemaProps collects the properties of s and of its allOf members.
func schemaProps(s *openapi3.Schema) map[string]*openapi3.SchemaRef {
	out := map[string]*openapi3.SchemaRef{}
	for _, sub := range s.AllOf {
		for k, v := range schemaProps(sub.Value) {
			out[k] = v
		}
	}
	for k, v := range s.Properties {
		out[k] = v
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func TestOpenAPIDocument(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi = %q, want 3.1.0", doc.OpenAPI)
	}
	if doc.Info.Version != "2.1.0" || doc.Info.Title != "Parley" {
		t.Errorf("info = %q %q, want Parley 2.1.0", doc.Info.Title, doc.Info.Version)
	}

	// The security schemes this build serves: ak_ tokens as Bearer, legacy
	// keys in X-API-Key. No OAuth until the OAuth server exists.
	schemes := doc.Components.SecuritySchemes
	if s := schemes["bearerAuth"]; s == nil || s.Value.Type != "http" || s.Value.Scheme != "bearer" {
		t.Errorf("bearerAuth is not an http bearer scheme")
	}
	if s := schemes["legacyApiKey"]; s == nil || s.Value.Type != "apiKey" || s.Value.In != "header" || s.Value.Name != "X-API-Key" {
		t.Errorf("legacyApiKey is not an apiKey in header X-API-Key")
	}
	if got := sortedKeys(schemes); !slices.Equal(got, []string{"bearerAuth", "legacyApiKey"}) {
		t.Errorf("security schemes = %v, want bearerAuth and legacyApiKey", got)
	}
	if strings.Contains(strings.ToLower(string(OpenAPI)), "oauth") {
		t.Errorf("the document mentions OAuth, which this build does not serve")
	}
	scope := doc.Components.Schemas["Scope"].Value
	var enum []string
	for _, v := range scope.Enum {
		enum = append(enum, v.(string))
	}
	if got, want := slices.Sorted(slices.Values(enum)), slices.Sorted(slices.Values(auth.RESTScopes)); !slices.Equal(got, want) {
		t.Errorf("Scope enum = %v, want %v", got, want)
	}
	for _, s := range auth.RESTScopes {
		if !strings.Contains(scope.Description, "- `"+s+"`: ") {
			t.Errorf("Scope does not describe %s", s)
		}
	}

	// Each management operation names one REST scope, the same in every
	// scheme, and documents 401, 403 (naming that scope) and 404.
	wantScope := map[string]string{
		"GET /tenants/{slug}":       auth.ScopeSettingsRead,
		"PUT /tenants/{slug}":       auth.ScopeSettingsWrite,
		"GET /tenants/{slug}/stats": auth.ScopeSettingsRead,

		"GET /tenants/{slug}/segments":         auth.ScopeSegmentsRead,
		"POST /tenants/{slug}/segments":        auth.ScopeSegmentsWrite,
		"GET /tenants/{slug}/segments/{id}":    auth.ScopeSegmentsRead,
		"PUT /tenants/{slug}/segments/{id}":    auth.ScopeSegmentsWrite,
		"PATCH /tenants/{slug}/segments/{id}":  auth.ScopeSegmentsWrite,
		"DELETE /tenants/{slug}/segments/{id}": auth.ScopeSegmentsWrite,

		"GET /tenants/{slug}/corpus":         auth.ScopeCorpusRead,
		"POST /tenants/{slug}/corpus":        auth.ScopeCorpusWrite,
		"POST /tenants/{slug}/corpus/bulk":   auth.ScopeCorpusWrite,
		"POST /tenants/{slug}/corpus/import": auth.ScopeCorpusWrite,
		"GET /tenants/{slug}/corpus/{id}":    auth.ScopeCorpusRead,
		"PUT /tenants/{slug}/corpus/{id}":    auth.ScopeCorpusWrite,
		"PATCH /tenants/{slug}/corpus/{id}":  auth.ScopeCorpusWrite,
		"DELETE /tenants/{slug}/corpus/{id}": auth.ScopeCorpusWrite,
		"POST /tenants/{slug}/corpus/sync":   auth.ScopeCorpusWrite,

		"GET /tenants/{slug}/tools":         auth.ScopeToolsRead,
		"POST /tenants/{slug}/tools":        auth.ScopeToolsWrite,
		"GET /tenants/{slug}/tools/{id}":    auth.ScopeToolsRead,
		"PATCH /tenants/{slug}/tools/{id}":  auth.ScopeToolsWrite,
		"DELETE /tenants/{slug}/tools/{id}": auth.ScopeToolsWrite,

		"GET /tenants/{slug}/products":         auth.ScopeToolsRead,
		"POST /tenants/{slug}/products":        auth.ScopeToolsWrite,
		"POST /tenants/{slug}/products/bulk":   auth.ScopeToolsWrite,
		"GET /tenants/{slug}/products/{id}":    auth.ScopeToolsRead,
		"PUT /tenants/{slug}/products/{id}":    auth.ScopeToolsWrite,
		"PATCH /tenants/{slug}/products/{id}":  auth.ScopeToolsWrite,
		"DELETE /tenants/{slug}/products/{id}": auth.ScopeToolsWrite,

		"GET /tenants/{slug}/visitors":                             auth.ScopeVisitorsRead,
		"POST /tenants/{slug}/visitors":                            auth.ScopeVisitorsWrite,
		"GET /tenants/{slug}/visitors/{visitorId}":                 auth.ScopeVisitorsRead,
		"PATCH /tenants/{slug}/visitors/{visitorId}":               auth.ScopeVisitorsWrite,
		"DELETE /tenants/{slug}/visitors/{visitorId}":              auth.ScopeVisitorsWrite,
		"GET /tenants/{slug}/visitors/{visitorId}/memory":          auth.ScopeVisitorsRead,
		"POST /tenants/{slug}/visitors/{visitorId}/memory":         auth.ScopeVisitorsWrite,
		"GET /tenants/{slug}/visitors/{visitorId}/memory/{key}":    auth.ScopeVisitorsRead,
		"DELETE /tenants/{slug}/visitors/{visitorId}/memory/{key}": auth.ScopeVisitorsWrite,

		"GET /tenants/{slug}/mcp-tools":    auth.ScopeSettingsRead,
		"PUT /tenants/{slug}/mcp-tools":    auth.ScopeSettingsWrite,
		"DELETE /tenants/{slug}/mcp-tools": auth.ScopeSettingsWrite,

		"GET /tenants/{slug}/submissions":         auth.ScopeConversationsRead,
		"PUT /tenants/{slug}/submissions/{id}":    auth.ScopeConversationsWrite,
		"DELETE /tenants/{slug}/submissions/{id}": auth.ScopeConversationsWrite,

		"GET /tenants/{slug}/webhooks":                                         auth.ScopeSettingsRead,
		"POST /tenants/{slug}/webhooks":                                        auth.ScopeSettingsWrite,
		"GET /tenants/{slug}/webhooks/{id}":                                    auth.ScopeSettingsRead,
		"PATCH /tenants/{slug}/webhooks/{id}":                                  auth.ScopeSettingsWrite,
		"DELETE /tenants/{slug}/webhooks/{id}":                                 auth.ScopeSettingsWrite,
		"GET /tenants/{slug}/webhooks/{id}/deliveries":                         auth.ScopeSettingsRead,
		"POST /tenants/{slug}/webhooks/{id}/deliveries/{deliveryId}/redeliver": auth.ScopeSettingsWrite,
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			key := method + " " + path
			if !strings.HasPrefix(path, "/tenants/") {
				if op.Security == nil || len(*op.Security) != 0 {
					t.Errorf("%s: a public operation must have security []", key)
				}
				continue
			}
			scope := operationScope(op)
			if !slices.Contains(auth.RESTScopes, scope) {
				t.Errorf("%s: bearerAuth requires %q, not one REST scope", key, scope)
				continue
			}
			if want, ok := wantScope[key]; ok && scope != want {
				t.Errorf("%s: requires %s, want %s", key, scope, want)
			}
			found := map[string]bool{}
			for _, req := range *op.Security {
				for name, scopes := range req {
					found[name] = slices.Equal(scopes, []string{scope})
				}
			}
			if len(*op.Security) != 2 {
				t.Errorf("%s: security %v, want bearerAuth and legacyApiKey", key, *op.Security)
			}
			for _, name := range []string{"bearerAuth", "legacyApiKey"} {
				if !found[name] {
					t.Errorf("%s: security %s does not require exactly [%s]", key, name, scope)
				}
			}
			for _, status := range []int{401, 403, 404} {
				if r := op.Responses.Status(status); r == nil || r.Value == nil {
					t.Errorf("%s: no %d response", key, status)
				}
			}
			if r := op.Responses.Status(403); r != nil && r.Value != nil {
				for _, ex := range r.Value.Content.Get("application/json").Examples {
					body := ex.Value.Value.(map[string]any)
					if body["error"] != "Missing scope: "+scope || body["details"].(map[string]any)["requiredScope"] != scope {
						t.Errorf("%s: 403 example %v does not name %s", key, body, scope)
					}
				}
			}
		}
	}
	if doc.Paths.Value("/tenants/{slug}").Put.Responses.Status(413) == nil {
		t.Errorf("PUT /tenants/{slug}: no 413 response")
	}
	// Every operation of the table is documented; each write with a body documents 413.
	for key := range wantScope {
		method, path, _ := strings.Cut(key, " ")
		item := doc.Paths.Value(path)
		if item == nil || item.GetOperation(method) == nil {
			t.Errorf("%s is not documented", key)
			continue
		}
		if op := item.GetOperation(method); op.RequestBody != nil && op.Responses.Status(413) == nil {
			t.Errorf("%s: no 413 response", key)
		}
	}
}

// operationScope returns the scope an operation requires with bearerAuth ("" if none or several).
func operationScope(op *openapi3.Operation) string {
	if op.Security == nil {
		return ""
	}
	for _, req := range *op.Security {
		if scopes, ok := req["bearerAuth"]; ok && len(scopes) == 1 {
			return scopes[0]
		}
	}
	return ""
}

// TestOpenAPIRoutes checks that the document and the route table list the same operations.
func TestOpenAPIRoutes(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	b := setup(t)

	routes := map[string]bool{}
	for _, r := range b.srv.Echo.Routes() {
		switch {
		case r.Method == echo.RouteNotFound || r.Method == "echo_route_any" || strings.HasSuffix(r.Path, "/*"):
			continue // Echo's own catch-all routes, added by groups with middleware
		case r.Path == "/" || r.Path == "/admin" || strings.HasPrefix(r.Path, "/admin/") || strings.HasPrefix(r.Path, "/static"):
			continue // the HTML dashboard and its assets are not part of the API
		}
		parts := strings.Split(r.Path, "/")
		for i, p := range parts {
			if strings.HasPrefix(p, ":") {
				parts[i] = "{" + p[1:] + "}"
			}
		}
		routes[r.Method+" "+strings.Join(parts, "/")] = true
	}
	documented := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented[method+" "+path] = true
		}
	}
	for _, r := range sortedKeys(routes) {
		if !documented[r] {
			t.Errorf("route %s is not in openapi.json", r)
		}
	}
	for _, d := range sortedKeys(documented) {
		if !routes[d] {
			t.Errorf("openapi.json documents %s, which is not a route", d)
		}
	}
	if len(routes) < 6 {
		t.Errorf("only %d routes found: %v", len(routes), sortedKeys(routes))
	}
}

// TestOpenAPITenantUpdateMatchesPatch checks TenantUpdate against the fields
// the handler decodes, and against the writable fields of Tenant.
func TestOpenAPITenantUpdateMatchesPatch(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	update := doc.Components.Schemas["TenantUpdate"].Value
	tenant := doc.Components.Schemas["Tenant"].Value

	var decoded []string
	pt := reflect.TypeFor[db.TenantPatch]()
	for i := 0; i < pt.NumField(); i++ {
		if name, _, _ := strings.Cut(pt.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			decoded = append(decoded, name)
		}
	}
	sort.Strings(decoded)
	if got := sortedKeys(update.Properties); !slices.Equal(got, decoded) {
		t.Errorf("TenantUpdate properties = %v\nfields PUT decodes = %v", got, decoded)
	}
	if len(update.Required) != 0 {
		t.Errorf("TenantUpdate requires %v; every field is optional", update.Required)
	}
	for name, p := range update.Properties {
		tp, inTenant := tenant.Properties[name]
		switch {
		case p.Value.WriteOnly:
			if inTenant {
				t.Errorf("write-only %s appears in Tenant", name)
			}
		case !inTenant:
			t.Errorf("writable %s is not in Tenant", name)
		case tp.Value.ReadOnly:
			t.Errorf("writable %s is read-only in Tenant", name)
		}
	}
	for name, p := range tenant.Properties {
		if _, ok := update.Properties[name]; !ok && !p.Value.ReadOnly {
			t.Errorf("Tenant.%s is neither writable nor readOnly", name)
		}
	}
	if !update.Properties["captchaSecretKey"].Value.WriteOnly {
		t.Errorf("captchaSecretKey is not writeOnly")
	}
}

// openAPIChecker validates live exchanges against the document.
type openAPIChecker struct {
	t      *testing.T
	router routers.Router
	b      *bundle
}

// exchange sends a request, validates the request (when wantValidRequest) and
// the response against the document, and returns the status and decoded body.
func (c *openAPIChecker) exchange(method, path, token string, body any, wantValidRequest bool) (int, any) {
	c.t.Helper()
	var raw []byte
	contentType := ""
	if body != nil {
		raw, _ = json.Marshal(body)
		contentType = "application/json"
	}
	return c.exchangeRaw(method, path, token, contentType, raw, wantValidRequest)
}

// exchangeRaw is exchange with a body already encoded as contentType (none when "").
func (c *openAPIChecker) exchangeRaw(method, path, token, contentType string, raw []byte, wantValidRequest bool) (int, any) {
	t := c.t
	t.Helper()
	newReq := func() *http.Request {
		req, _ := http.NewRequest(method, c.b.ts.URL+path, bytes.NewReader(raw))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		return req
	}
	req := newReq()
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		t.Fatalf("%s %s: not in the document: %v", method, path, err)
	}
	reqInput := &openapi3filter.RequestValidationInput{
		Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
	}
	err = openapi3filter.ValidateRequest(context.Background(), reqInput)
	if wantValidRequest && err != nil {
		t.Errorf("%s %s: request does not validate: %v", method, path, err)
	}
	if !wantValidRequest && err == nil {
		t.Errorf("%s %s: invalid request body %s validates against the document", method, path, raw)
	}

	resp, err := c.b.ts.Client().Do(newReq())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	respBody, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	reqInput.Request = newReq()
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: reqInput,
		Status:                 resp.StatusCode,
		Header:                 resp.Header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	out.SetBodyBytes(respBody)
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		t.Errorf("%s %s: %d response %s does not match the document: %v", method, path, resp.StatusCode, respBody, err)
	}
	var decoded any
	if err := json.Unmarshal(respBody, &decoded); err != nil {
		t.Fatalf("%s %s: bad JSON %q", method, path, respBody)
	}
	return resp.StatusCode, decoded
}

// sameKeys checks that an object has exactly the properties its schema
// declares: a field added to the code but not to the document (or the
// reverse) fails here even though the schemas stay open to additions.
func sameKeys(t *testing.T, where string, schema *openapi3.Schema, value any) {
	t.Helper()
	obj, ok := value.(map[string]any)
	if !ok {
		t.Errorf("%s: %T is not an object", where, value)
		return
	}
	props := schemaProps(schema)
	if got, want := sortedKeys(obj), sortedKeys(props); !slices.Equal(got, want) {
		t.Errorf("%s: fields %v\ndocumented %v", where, got, want)
	}
	for name, p := range props {
		if len(schemaProps(p.Value)) > 0 && obj[name] != nil {
			if _, isObj := obj[name].(map[string]any); isObj {
				sameKeys(t, where+"."+name, p.Value, obj[name])
			}
		}
	}
}

// TestOpenAPIResponses validates real requests and responses against the document.
func TestOpenAPIResponses(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	b := setup(t)
	c := &openAPIChecker{t: t, router: router, b: b}
	schema := func(name string) *openapi3.Schema { return doc.Components.Schemas[name].Value }
	ten := b.newTenant(t, "scale")
	base := "/tenants/" + ten.Slug

	status, body := c.exchange("GET", base, ten.Token, nil, true)
	if status != http.StatusOK {
		t.Fatalf("GET tenant: %d %v", status, body)
	}
	sameKeys(t, "GET tenant", schema("TenantEnvelope"), body)

	status, body = c.exchange("GET", base+"/stats", ten.Token, nil, true)
	if status != http.StatusOK {
		t.Fatalf("GET stats: %d %v", status, body)
	}
	sameKeys(t, "GET stats", schema("TenantStats"), body)

	valid := map[string]any{
		"name": "Renamed", "description": "We sell things", "timezone": "Europe/Paris",
		"botName": "Ada", "botTitle": "Assistant", "botLore": "Knows everything.", "botTone": "FRIENDLY",
		"useTutoiement": true, "allowEmojis": true, "primaryColor": "#0F766E", "secondaryColor": "#ffffff",
		"showAiBadge": false, "botAvatar": "https://cdn.example.com/ada.png", "avatarType": "UPLOAD",
		"avatarBackground": "#000000", "teaserText": "Ask me", "autoOpen": true, "autoOpenDelay": 5,
		"bubblePulse": false, "allowedDomains": []string{"example.com", "*.example.org"},
		"contentPolicy": "SFW_STRICT", "visitorAuthMode": "otp", "visitorContextUrl": "https://hooks.example.com/ctx",
		"captchaEnabled": true, "captchaSiteKey": "site-key", "captchaSecretKey": "secret-key",
		"bookingCtaEnabled": true,
		"bookingCtaConfig":  map[string]any{"headline": "Book", "subtitle": "Now", "ctaText": "Go", "officeHours": "9-5"},
		"isOnboarded":       true,
	}
	status, body = c.exchange("PUT", base, ten.Token, valid, true)
	if status != http.StatusOK {
		t.Fatalf("PUT valid: %d %v", status, body)
	}
	sameKeys(t, "PUT tenant", schema("Tenant"), body)
	if got := body.(map[string]any); got["hasCaptchaSecretKey"] != true || got["botName"] != "Ada" {
		t.Errorf("PUT did not apply: %v", got)
	}

	// Clearing nullable fields gives nulls, which the document must allow.
	clear := map[string]any{
		"captchaEnabled": false, "captchaSiteKey": nil, "captchaSecretKey": "", "description": nil, "botName": "",
		"secondaryColor": nil, "botAvatar": "", "visitorAuthMode": nil, "visitorContextUrl": "", "allowedDomains": nil,
		"bookingCtaConfig": nil, "teaserText": nil, "avatarBackground": nil, "botTitle": nil, "botLore": nil,
		"id": "ignored", "unknownField": 1,
	}
	status, body = c.exchange("PUT", base, ten.Token, clear, true)
	if status != http.StatusOK {
		t.Fatalf("PUT clear: %d %v", status, body)
	}
	if got := body.(map[string]any); got["botName"] != nil || got["hasCaptchaSecretKey"] != false {
		t.Errorf("PUT clear did not apply: %v", got)
	}
	c.exchange("GET", base, ten.Token, nil, true)

	invalid := map[string]any{
		"primaryColor": "red", "autoOpenDelay": 1, "botTone": "LOUD", "showAiBadge": "yes",
		"teaserText": strings.Repeat("x", 161), "visitorContextUrl": "ftp://insecure.example.com",
		"allowedDomains": []string{"https://example.com/"}, "name": nil,
	}
	status, body = c.exchange("PUT", base, ten.Token, invalid, false)
	if status != http.StatusBadRequest {
		t.Fatalf("PUT invalid: %d %v", status, body)
	}
	details, _ := body.(map[string]any)["details"].(map[string]any)
	for field := range invalid {
		if _, ok := details[field]; !ok {
			t.Errorf("PUT invalid: no details for %s: %v", field, details)
		}
	}

	// Each invalid field alone is refused by both the server and the document.
	for field, value := range invalid {
		status, body = c.exchange("PUT", base, ten.Token, map[string]any{field: value}, false)
		if status != http.StatusBadRequest {
			t.Errorf("PUT %s=%v: %d %v", field, value, status, body)
		}
	}
	status, _ = c.exchange("PUT", base, ten.Token, map[string]any{"captchaEnabled": true}, true)
	if status != http.StatusBadRequest {
		t.Errorf("captchaEnabled without keys: %d", status)
	}

	// The documented error responses.
	if status, _ = c.exchange("GET", base, "", nil, true); status != http.StatusUnauthorized {
		t.Errorf("no credentials: %d", status)
	}
	if status, _ = c.exchange("GET", base+"/stats", "ak_invalid", nil, true); status != http.StatusUnauthorized {
		t.Errorf("invalid token: %d", status)
	}
	statsOnly := b.token(t, ten.ID, auth.ScopeStatsRead)
	status, body = c.exchange("PUT", base, statsOnly, map[string]any{"botName": "X"}, true)
	if status != http.StatusForbidden || body.(map[string]any)["error"] != "Missing scope: settings:write" {
		t.Errorf("missing scope: %d %v", status, body)
	}
	c.exchange("GET", base+"/stats", statsOnly, nil, true)
	other := b.newTenant(t, "free")
	status, body = c.exchange("GET", "/tenants/"+other.Slug, ten.Token, nil, true)
	if status != http.StatusNotFound || body.(map[string]any)["error"] != "Tenant not found" {
		t.Errorf("other tenant: %d %v", status, body)
	}
	c.exchange("GET", "/tenants/no-such-tenant/stats", ten.Token, nil, true)

	// A body over 1 MiB.
	status, _ = c.exchange("PUT", base, ten.Token, map[string]any{"botLore": strings.Repeat("x", 1<<20)}, false)
	if status != http.StatusRequestEntityTooLarge {
		t.Errorf("large body: %d", status)
	}

	// The free tenant's own view validates too (isActivated false, other limits).
	c.exchange("GET", "/tenants/"+other.Slug, other.Token, nil, true)

	for _, p := range []string{"/healthz", "/readyz"} {
		if status, body = c.exchange("GET", p, "", nil, true); status != http.StatusOK {
			t.Errorf("%s: %d %v", p, status, body)
		}
	}
	c.exchange("GET", "/openapi.json", "", nil, true)
}

// TestOpenAPIContextResponses validates GET /context/{slug} against the document.
func TestOpenAPIContextResponses(t *testing.T) {
	t.Parallel()
	doc, c, schema := openAPIHarness(t, setup(t))
	b := c.b
	discovery := schema("ContextDiscovery")
	obj := func(body any) map[string]any { m, _ := body.(map[string]any); return m }
	count := func(v any) int { a, _ := v.([]any); return len(a) }

	// Every capability the handler can list is in the documented enum, in its order.
	enum := discovery.Properties["capabilities"].Value.Items.Value.Enum
	want := []any{handlers.CapabilityChat, handlers.CapabilityMCPTools, handlers.CapabilityVoice}
	for _, typ := range agent.UserToolTypes {
		want = append(want, strings.ToLower(typ))
	}
	if !slices.Equal(enum, want) {
		t.Errorf("capabilities enum = %v, want %v", enum, want)
	}

	ten := b.newTenant(t, "scale")
	base := "/tenants/" + ten.Slug
	b.do(t, "PUT", base, ten.Token, map[string]any{"description": "We sell things", "botName": "Ada", "botTitle": "Guide"})
	b.do(t, "PUT", base+"/mcp-tools", ten.Token, map[string]any{"mcpToolsUrl": "https://tools.example.com/mcp"})
	b.do(t, "POST", base+"/segments", ten.Token, map[string]any{"name": "Pros", "systemPrompt": "p"})
	b.do(t, "POST", base+"/tools", ten.Token, map[string]any{"name": "Human", "description": "d", "type": "ESCALATE_TO_HUMAN", "segmentId": "pros"})
	status, body := c.exchange("GET", "/context/"+ten.Slug, "", nil, true)
	if got := obj(body); status != http.StatusOK || count(got["capabilities"]) != 3 || count(got["segments"]) != 2 {
		t.Fatalf("GET context: %d %v", status, body)
	}
	sameKeys(t, "GET context", discovery, body)
	documentedKeys(t, "GET context", discovery, body)

	// The nulls of a bare tenant, and an empty capability list.
	free := b.newTenant(t, "free")
	status, body = c.exchange("GET", "/context/"+free.Slug, "", nil, true)
	if got := obj(body); status != http.StatusOK || got["capabilities"] == nil || count(got["capabilities"]) != 0 || obj(got["tenant"])["botName"] != nil {
		t.Errorf("GET context of a free tenant: %d %v", status, body)
	}
	sameKeys(t, "GET free context", discovery, body)

	if status, body = c.exchange("GET", "/context/no-such-tenant", "", nil, true); status != http.StatusNotFound || obj(body)["error"] != "Tenant not found" {
		t.Errorf("GET context of no tenant: %d %v", status, body)
	}
	if op := doc.Paths.Value("/context/{slug}").Get; op.Security == nil || len(*op.Security) != 0 {
		t.Errorf("GET /context/{slug} is not documented as public")
	}
}

func TestOpenAPIServed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	resp, err := b.ts.Client().Get(b.ts.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != echo.MIMEApplicationJSON {
		t.Errorf("Content-Type %q, want %q", ct, echo.MIMEApplicationJSON)
	}
	if !bytes.Equal(got, OpenAPI) {
		t.Errorf("served document differs from the embedded one (%d vs %d bytes)", len(got), len(OpenAPI))
	}
	var doc map[string]any
	if err := json.Unmarshal(got, &doc); err != nil {
		t.Fatalf("served document is not JSON: %v", err)
	}
}

// TestOpenAPIScopes checks, for every documented management operation, that
// the server enforces exactly the scope the document names: a token with every
// other scope gets 403 naming it, a token with only that scope gets past the check.
func TestOpenAPIScopes(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	b := setup(t)
	ten := b.newTenant(t, "scale")
	for path, item := range doc.Paths.Map() {
		if !strings.HasPrefix(path, "/tenants/") {
			continue
		}
		for method, op := range item.Operations() {
			scope := operationScope(op)
			if scope == "" {
				t.Errorf("%s %s: no scope", method, path)
				continue
			}
			// Other path parameters get a well-formed id that names nothing:
			// the scope check runs before the handler looks anything up.
			url := strings.Replace(path, "{slug}", ten.Slug, 1)
			for strings.Contains(url, "{") {
				i, j := strings.Index(url, "{"), strings.Index(url, "}")
				url = url[:i] + "00000000-0000-0000-0000-000000000000" + url[j+1:]
			}
			var body any
			if method != http.MethodGet && method != http.MethodDelete {
				body = "{}"
			}
			others := slices.DeleteFunc(slices.Clone(auth.RESTScopes), func(s string) bool { return s == scope })
			status, got := b.do(t, method, url, b.token(t, ten.ID, others...), body)
			if status != http.StatusForbidden || got["error"] != "Missing scope: "+scope {
				t.Errorf("%s %s with every scope but %s: %d %v", method, path, scope, status, got)
			}
			status, got = b.do(t, method, url, b.token(t, ten.ID, scope), body)
			if status == http.StatusForbidden || status == http.StatusUnauthorized {
				t.Errorf("%s %s with only %s: %d %v", method, path, scope, status, got)
			}
		}
	}
}

// objectShape collects the properties and required members of an object
// schema, through allOf and the object members of anyOf/oneOf (a nullable
// object is documented as anyOf [object, null]).
func objectShape(s *openapi3.Schema) (map[string]*openapi3.SchemaRef, []string) {
	props := map[string]*openapi3.SchemaRef{}
	var required []string
	add := func(sub *openapi3.Schema) {
		p, r := objectShape(sub)
		for k, v := range p {
			props[k] = v
		}
		required = append(required, r...)
	}
	for _, sub := range s.AllOf {
		add(sub.Value)
	}
	for _, sub := range append(slices.Clone(s.AnyOf), s.OneOf...) {
		if p, _ := objectShape(sub.Value); len(p) > 0 {
			add(sub.Value)
		}
	}
	for k, v := range s.Properties {
		props[k] = v
	}
	return props, append(required, s.Required...)
}

// shape is one documented form of an object: its properties and required members.
type shape struct {
	props    map[string]*openapi3.SchemaRef
	required []string
}

// fits reports whether every member of v is documented and every required member present.
func (s shape) fits(v map[string]any) bool {
	for k := range v {
		if _, ok := s.props[k]; !ok {
			return false
		}
	}
	for _, k := range s.required {
		if _, ok := v[k]; !ok {
			return false
		}
	}
	return true
}

// objectShapes is objectShape for unions: a schema whose anyOf/oneOf has
// several object members (such as a tool's config, one object per tool type)
// has one shape per member, each with the schema's own and allOf members;
// any other schema has the one shape objectShape gives.
func objectShapes(s *openapi3.Schema) []shape {
	var members []*openapi3.Schema
	for _, sub := range append(slices.Clone(s.AnyOf), s.OneOf...) {
		if p, _ := objectShape(sub.Value); len(p) > 0 {
			members = append(members, sub.Value)
		}
	}
	if len(members) < 2 {
		p, r := objectShape(s)
		return []shape{{p, r}}
	}
	var shapes []shape
	for _, m := range members {
		sh := shape{props: map[string]*openapi3.SchemaRef{}}
		for _, sub := range append(slices.Clone(s.AllOf), &openapi3.SchemaRef{Value: m}) {
			p, r := objectShape(sub.Value)
			maps.Copy(sh.props, p)
			sh.required = append(sh.required, r...)
		}
		maps.Copy(sh.props, s.Properties)
		sh.required = append(sh.required, s.Required...)
		shapes = append(shapes, sh)
	}
	return shapes
}

// itemsSchema returns the items of an array schema, or of its array member of anyOf.
func itemsSchema(s *openapi3.Schema) *openapi3.Schema {
	if s.Items != nil {
		return s.Items.Value
	}
	for _, sub := range append(slices.Clone(s.AnyOf), s.OneOf...) {
		if sub.Value.Items != nil {
			return sub.Value.Items.Value
		}
	}
	return nil
}

// documentedKeys is sameKeys for schemas with optional members, applied to
// every nested object and array item: each field present is documented, each
// required member is present. An object documented as a union of object
// shapes must fit one of them, and is checked against the first it fits.
func documentedKeys(t testing.TB, where string, schema *openapi3.Schema, value any) {
	t.Helper()
	switch v := value.(type) {
	case map[string]any:
		shapes := objectShapes(schema)
		props, required := shapes[0].props, shapes[0].required
		if len(shapes) > 1 {
			i := slices.IndexFunc(shapes, func(s shape) bool { return s.fits(v) })
			if i < 0 {
				t.Errorf("%s: %v fits none of the %d documented alternatives", where, v, len(shapes))
				return
			}
			props, required = shapes[i].props, shapes[i].required
		}
		if ap := schema.AdditionalProperties; len(props) == 0 || (ap.Has != nil && *ap.Has) || ap.Schema != nil {
			return // a free-form object, or one open to members it does not list
		}
		for _, k := range sortedKeys(v) {
			p, ok := props[k]
			if !ok {
				t.Errorf("%s: field %s is not documented", where, k)
				continue
			}
			if v[k] != nil {
				documentedKeys(t, where+"."+k, p.Value, v[k])
			}
		}
		for _, k := range required {
			if _, ok := v[k]; !ok {
				t.Errorf("%s: required field %s is missing from %v", where, k, v)
			}
		}
	case []any:
		if items := itemsSchema(schema); items != nil {
			for i, x := range v {
				documentedKeys(t, fmt.Sprintf("%s[%d]", where, i), items, x)
			}
		}
	}
}

// responseSchema is the JSON schema of an operation's response.
func responseSchema(t *testing.T, doc *openapi3.T, method, path string, status int) *openapi3.Schema {
	t.Helper()
	r := doc.Paths.Value(path).GetOperation(method).Responses.Status(status)
	if r == nil {
		t.Fatalf("%s %s: no %d response", method, path, status)
	}
	return r.Value.Content.Get("application/json").Schema.Value
}

// multipartFile encodes content as a multipart/form-data body with one file part.
func multipartFile(part, filename, content string) (string, []byte) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile(part, filename)
	_, _ = io.WriteString(fw, content)
	_ = mw.Close()
	return mw.FormDataContentType(), buf.Bytes()
}

func errorDetails(body any) map[string]any {
	m, _ := body.(map[string]any)
	d, _ := m["details"].(map[string]any)
	return d
}

// TestOpenAPISegmentWriteMatchesDecoder checks the segment write schemas
// against the fields the handler decodes, and against Segment.
func TestOpenAPISegmentWriteMatchesDecoder(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	var decoded []string
	wt := reflect.TypeFor[db.SegmentWrite]()
	for i := 0; i < wt.NumField(); i++ {
		if name, _, _ := strings.Cut(wt.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			decoded = append(decoded, name)
		}
	}
	sort.Strings(decoded)
	segment := doc.Components.Schemas["Segment"].Value
	for _, name := range []string{"SegmentCreate", "SegmentUpdate"} {
		props := schemaProps(doc.Components.Schemas[name].Value)
		if got := sortedKeys(props); !slices.Equal(got, decoded) {
			t.Errorf("%s properties = %v\nfields the handler decodes = %v", name, got, decoded)
		}
		for p := range props {
			if sp, ok := segment.Properties[p]; !ok || sp.Value.ReadOnly {
				t.Errorf("%s: writable %s is not a writable member of Segment", name, p)
			}
		}
	}
	for name, p := range segment.Properties {
		if !p.Value.ReadOnly && !slices.Contains(decoded, name) {
			t.Errorf("Segment.%s is neither writable nor readOnly", name)
		}
	}
	if req := doc.Components.Schemas["SegmentCreate"].Value.Required; !slices.Equal(req, []string{"name", "systemPrompt"}) {
		t.Errorf("SegmentCreate requires %v", req)
	}
}

// TestOpenAPISegmentResponses validates real segment requests and responses against the document.
func TestOpenAPISegmentResponses(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	b := setup(t)
	c := &openAPIChecker{t: t, router: router, b: b}
	schema := func(name string) *openapi3.Schema { return doc.Components.Schemas[name].Value }
	ten := b.newTenant(t, "scale")
	base := "/tenants/" + ten.Slug + "/segments"
	listSchema := responseSchema(t, doc, "GET", "/tenants/{slug}/segments", 200)

	status, body := c.exchange("GET", base, ten.Token, nil, true)
	if status != http.StatusOK {
		t.Fatalf("GET segments: %d %v", status, body)
	}
	documentedKeys(t, "GET segments", listSchema, body)
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
	status, body = c.exchange("POST", base, ten.Token, full, true)
	if status != http.StatusCreated {
		t.Fatalf("POST segment: %d %v", status, body)
	}
	documentedKeys(t, "POST segment", schema("Segment"), body)
	sameKeys(t, "POST segment", schema("Segment"), body)
	created := body.(map[string]any)
	if created["slug"] != "equipe-ventes" || created["systemPrompt"] != "Sell." {
		t.Errorf("POST segment: %v", created)
	}
	id := created["id"].(string)

	// A generated slug that is taken gets a suffix; nullable members come back null.
	status, body = c.exchange("POST", base, ten.Token, map[string]any{"name": "Equipe ventes", "systemPrompt": "p", "slug": "", "welcomeMessage": nil, "formConfig": nil}, true)
	if status != http.StatusCreated || body.(map[string]any)["slug"] != "equipe-ventes-2" || body.(map[string]any)["formConfig"] != nil {
		t.Fatalf("POST generated slug: %d %v", status, body)
	}
	sameKeys(t, "POST minimal segment", schema("Segment"), body)
	secondID := body.(map[string]any)["id"].(string)

	// A taken slug the caller chose is a conflict.
	status, body = c.exchange("POST", base, ten.Token, map[string]any{"name": "X", "slug": "equipe-ventes", "systemPrompt": "p"}, true)
	if status != http.StatusConflict || errorDetails(body)["slug"] == nil {
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
	status, body = c.exchange("POST", base, ten.Token, invalid, false)
	if status != http.StatusBadRequest {
		t.Fatalf("POST invalid segment: %d %v", status, body)
	}
	for field := range invalid {
		if _, ok := errorDetails(body)[field]; !ok {
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
	for _, field := range sortedKeys(invalid) {
		alone[field] = map[string]any{field: invalid[field]}
	}
	for what, fields := range alone {
		req := map[string]any{"name": "n", "systemPrompt": "p"}
		for k, v := range fields.(map[string]any) {
			req[k] = v
		}
		if status, body = c.exchange("POST", base, ten.Token, req, false); status != http.StatusBadRequest {
			t.Errorf("POST %s: %d %v", what, status, body)
		}
	}
	if status, body = c.exchange("POST", base, ten.Token, map[string]any{"name": "n"}, false); status != http.StatusBadRequest || errorDetails(body)["systemPrompt"] == nil {
		t.Errorf("POST without systemPrompt: %d %v", status, body)
	}

	// Read by id and by slug.
	for _, ref := range []string{id, "equipe-ventes"} {
		status, body = c.exchange("GET", base+"/"+ref, ten.Token, nil, true)
		if status != http.StatusOK || body.(map[string]any)["id"] != id {
			t.Errorf("GET segment %s: %d %v", ref, status, body)
		}
		sameKeys(t, "GET segment", schema("Segment"), body)
		documentedKeys(t, "GET segment", schema("Segment"), body)
	}

	// PUT and PATCH are partial updates; clearing gives nulls and [].
	status, body = c.exchange("PUT", base+"/"+id, ten.Token, map[string]any{"welcomeMessage": "", "formConfig": nil, "conversationStarters": nil, "id": "ignored", "unknown": 1}, true)
	if got, _ := body.(map[string]any); status != http.StatusOK || got["welcomeMessage"] != nil || got["formConfig"] != nil || len(got["conversationStarters"].([]any)) != 0 || got["name"] != "Équipe Ventes" {
		t.Errorf("PUT clear: %d %v", status, body)
	}
	status, body = c.exchange("PATCH", base+"/equipe-ventes", ten.Token, map[string]any{"isDefault": true, "name": "Sales", "slug": "sales"}, true)
	if got, _ := body.(map[string]any); status != http.StatusOK || got["isDefault"] != true || got["slug"] != "sales" {
		t.Errorf("PATCH make default: %d %v", status, body)
	}
	documentedKeys(t, "PATCH segment", schema("Segment"), body)
	if status, body = c.exchange("GET", base+"/default", ten.Token, nil, true); status != http.StatusOK || body.(map[string]any)["isDefault"] != false {
		t.Errorf("former default: %d %v", status, body)
	}
	// The default cannot be un-defaulted, deactivated or deleted.
	if status, body = c.exchange("PATCH", base+"/sales", ten.Token, map[string]any{"isDefault": false}, true); status != http.StatusBadRequest || errorDetails(body)["isDefault"] == nil {
		t.Errorf("PATCH isDefault false on the default: %d %v", status, body)
	}
	if status, body = c.exchange("PUT", base+"/"+id, ten.Token, map[string]any{"isActive": false}, true); status != http.StatusBadRequest || errorDetails(body)["isActive"] == nil {
		t.Errorf("PUT isActive false on the default: %d %v", status, body)
	}
	if status, body = c.exchange("DELETE", base+"/"+id, ten.Token, nil, true); status != http.StatusBadRequest {
		t.Errorf("DELETE the default: %d %v", status, body)
	}
	if status, body = c.exchange("PUT", base+"/"+id, ten.Token, map[string]any{"slug": "default"}, true); status != http.StatusConflict {
		t.Errorf("PUT taken slug: %d %v", status, body)
	}
	if status, body = c.exchange("PUT", base+"/"+id, ten.Token, map[string]any{"slug": nil, "name": nil}, false); status != http.StatusBadRequest || len(errorDetails(body)) != 2 {
		t.Errorf("PUT null slug and name: %d %v", status, body)
	}

	// Deleting a segment with corpus entries needs cascade=true.
	status, body = c.exchange("POST", "/tenants/"+ten.Slug+"/corpus", ten.Token, map[string]any{"title": "T", "content": "C", "segmentSlug": "default"}, true)
	if status != http.StatusCreated {
		t.Fatalf("POST corpus in a segment: %d %v", status, body)
	}
	status, body = c.exchange("GET", base, ten.Token, nil, true)
	documentedKeys(t, "GET segments", listSchema, body)
	for _, s := range body.([]any) {
		if s := s.(map[string]any); s["slug"] == "default" && s["corpusCount"] != float64(1) {
			t.Errorf("corpusCount: %v", s)
		}
	}
	status, body = c.exchange("DELETE", base+"/default", ten.Token, nil, true)
	if status != http.StatusConflict || errorDetails(body)["corpusEntries"] != float64(1) || errorDetails(body)["tools"] != float64(0) {
		t.Errorf("DELETE with corpus: %d %v", status, body)
	}
	if status, body = c.exchange("DELETE", base+"/default?cascade=maybe", ten.Token, nil, false); status != http.StatusBadRequest {
		t.Errorf("DELETE cascade=maybe: %d %v", status, body)
	}
	status, body = c.exchange("DELETE", base+"/default?cascade=true", ten.Token, nil, true)
	if got, _ := body.(map[string]any); status != http.StatusOK || got["deleted"] != true || got["id"] != defaultID || got["corpusEntriesDeleted"] != float64(1) || got["toolsDeleted"] != float64(0) {
		t.Errorf("DELETE cascade: %d %v", status, body)
	}
	sameKeys(t, "DELETE segment", schema("SegmentDeletion"), body)
	if status, body = c.exchange("DELETE", base+"/"+secondID, ten.Token, nil, true); status != http.StatusOK || body.(map[string]any)["corpusEntriesDeleted"] != float64(0) {
		t.Errorf("DELETE without corpus: %d %v", status, body)
	}

	// 404, 403, 413, and the plan's limit.
	for _, method := range []string{"GET", "DELETE"} {
		for _, ref := range []string{"no-such-segment", "00000000-0000-0000-0000-000000000000", secondID} {
			if status, body = c.exchange(method, base+"/"+ref, ten.Token, nil, true); status != http.StatusNotFound || body.(map[string]any)["error"] != "Segment not found" {
				t.Errorf("%s unknown segment %s: %d %v", method, ref, status, body)
			}
		}
	}
	if status, body = c.exchange("PATCH", base+"/no-such-segment", ten.Token, map[string]any{"name": "x"}, true); status != http.StatusNotFound {
		t.Errorf("PATCH unknown segment: %d %v", status, body)
	}
	readOnly := b.token(t, ten.ID, auth.ScopeSegmentsRead)
	if status, body = c.exchange("POST", base, readOnly, map[string]any{"name": "n", "systemPrompt": "p"}, true); status != http.StatusForbidden {
		t.Errorf("POST with segments:read: %d %v", status, body)
	}
	if status, body = c.exchange("GET", base, b.token(t, ten.ID, auth.ScopeCorpusRead), nil, true); status != http.StatusForbidden {
		t.Errorf("GET with corpus:read: %d %v", status, body)
	}
	if status, body = c.exchange("PUT", base+"/"+id, ten.Token, map[string]any{"systemPrompt": strings.Repeat("x", 1<<20)}, false); status != http.StatusRequestEntityTooLarge {
		t.Errorf("PUT large body: %d %v", status, body)
	}
	free := b.newTenant(t, "free") // one segment: its default
	status, body = c.exchange("POST", "/tenants/"+free.Slug+"/segments", free.Token, map[string]any{"name": "n", "systemPrompt": "p"}, true)
	if got, _ := body.(map[string]any); status != http.StatusTooManyRequests || got["code"] != "LIMIT_REACHED" || errorDetails(body)["limit"] != float64(1) || errorDetails(body)["current"] != float64(1) {
		t.Errorf("POST over the limit: %d %v", status, body)
	}
	documentedKeys(t, "429", schema("SegmentLimitError"), body)
}

// TestOpenAPICorpusResponses validates real corpus requests and responses against the document.
func TestOpenAPICorpusResponses(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	b := setup(t)
	c := &openAPIChecker{t: t, router: router, b: b}
	schema := func(name string) *openapi3.Schema { return doc.Components.Schemas[name].Value }
	ten := b.newTenant(t, "scale")
	base := "/tenants/" + ten.Slug + "/corpus"
	if status, body := c.exchange("POST", "/tenants/"+ten.Slug+"/segments", ten.Token, map[string]any{"name": "Pros", "systemPrompt": "p"}, true); status != http.StatusCreated {
		t.Fatalf("POST segment: %d %v", status, body)
	}
	entry := func(body any) map[string]any {
		m, _ := body.(map[string]any)
		e, _ := m["corpus"].(map[string]any)
		return e
	}

	// Create: defaults, then every member.
	status, body := c.exchange("POST", base, ten.Token, map[string]any{"title": " Pricing ", "content": "Plans cost 10 EUR."}, true)
	if e := entry(body); status != http.StatusCreated || body.(map[string]any)["created"] != true || e["title"] != "Pricing" || e["priority"] != float64(5) || e["segment"] != nil {
		t.Fatalf("POST corpus: %d %v", status, body)
	}
	documentedKeys(t, "POST corpus", schema("CorpusUpsertResult"), body)
	pricingID := entry(body)["id"].(string)

	full := map[string]any{
		"title": "Opening hours", "content": "Open Monday to Friday.", "summary": "Weekdays.", "priority": 0, "isActive": false,
		"externalId": "faq-hours", "source": "helpdesk", "sourceUrl": "https://help.example.com/hours", "locale": "FR-ca",
		"tags": []string{"hours", "hours", " faq "}, "segmentSlug": "pros",
	}
	status, body = c.exchange("POST", base, ten.Token, full, true)
	e := entry(body)
	if status != http.StatusCreated || e["segment"].(map[string]any)["slug"] != "pros" || len(e["tags"].([]any)) != 2 || e["isActive"] != false {
		t.Fatalf("POST full corpus: %d %v", status, body)
	}
	documentedKeys(t, "POST full corpus", schema("CorpusUpsertResult"), body) // locale is write-only: not returned
	hoursID := e["id"].(string)

	// With a known externalId: an upsert, 200 created:false; unchanged writes nothing.
	full["content"] = "Open Monday to Saturday."
	status, body = c.exchange("POST", base, ten.Token, full, true)
	if e := entry(body); status != http.StatusOK || body.(map[string]any)["created"] != false || e["id"] != hoursID || e["content"] != full["content"] {
		t.Errorf("POST upsert: %d %v", status, body)
	}
	updatedAt := entry(body)["updatedAt"]
	status, body = c.exchange("POST", base, ten.Token, map[string]any{"externalId": "faq-hours", "title": "Opening hours", "content": full["content"]}, true)
	if e := entry(body); status != http.StatusOK || body.(map[string]any)["created"] != false || e["updatedAt"] != updatedAt || e["summary"] != "Weekdays." {
		t.Errorf("POST unchanged upsert: %d %v", status, body)
	}
	status, body = c.exchange("POST", base, ten.Token, map[string]any{"title": "Variant", "content": "c", "segment": "pros"}, true)
	if status != http.StatusCreated || entry(body)["segment"].(map[string]any)["name"] != "Pros" {
		t.Errorf("POST with segment: %d %v", status, body)
	}
	variantID := entry(body)["id"].(string)

	// Invalid bodies.
	invalid := map[string]any{
		"title": " ", "content": "", "summary": strings.Repeat("s", 501), "priority": 101, "isActive": nil,
		"externalId": strings.Repeat("x", 256), "source": strings.Repeat("s", 51), "sourceUrl": "not a url",
		"locale": "english", "tags": strings.Fields(strings.Repeat("tag ", 20) + "a b c d e f g h i j k l m n o p q r s t u"),
	}
	status, body = c.exchange("POST", base, ten.Token, invalid, false)
	if status != http.StatusBadRequest {
		t.Fatalf("POST invalid corpus: %d %v", status, body)
	}
	for field := range invalid {
		if _, ok := errorDetails(body)[field]; !ok {
			t.Errorf("POST invalid corpus: no details for %s: %v", field, body)
		}
	}
	for _, field := range sortedKeys(invalid) {
		req := map[string]any{"title": "t", "content": "c", field: invalid[field]}
		if status, body = c.exchange("POST", base, ten.Token, req, false); status != http.StatusBadRequest {
			t.Errorf("POST %s=%v: %d %v", field, invalid[field], status, body)
		}
	}
	for what, req := range map[string]map[string]any{
		"title256": {"title": strings.Repeat("t", 256), "content": "c"},
		"tag51":    {"title": "t", "content": "c", "tags": []string{strings.Repeat("t", 51)}},
		"priority": {"title": "t", "content": "c", "priority": -1},
		"noTitle":  {"content": "c"},
		"ftp":      {"title": "t", "content": "c", "sourceUrl": "ftp://example.com/x"},
	} {
		if status, body = c.exchange("POST", base, ten.Token, req, false); status != http.StatusBadRequest {
			t.Errorf("POST %s: %d %v", what, status, body)
		}
	}
	if status, body = c.exchange("POST", base, ten.Token, map[string]any{"title": "t", "content": "c", "segmentSlug": "nope"}, true); status != http.StatusBadRequest || errorDetails(body)["segmentSlug"] == nil {
		t.Errorf("POST unknown segment: %d %v", status, body)
	}

	// List, filter, search, paginate.
	listSchema := schema("CorpusList")
	status, body = c.exchange("GET", base, ten.Token, nil, true)
	if status != http.StatusOK || len(body.(map[string]any)["corpus"].([]any)) != 3 {
		t.Fatalf("GET corpus: %d %v", status, body)
	}
	documentedKeys(t, "GET corpus", listSchema, body) // pagination.totalCapped is optional: not sameKeys
	for _, q := range []string{"?segmentSlug=pros&page=2&limit=1", "?segment=pros&page=2&limit=1", "?segmentSlug=&segment=pros&limit=1&page=2"} {
		status, body = c.exchange("GET", base+q, ten.Token, nil, true)
		p, _ := body.(map[string]any)["pagination"].(map[string]any)
		if status != http.StatusOK || p["total"] != float64(2) || p["totalPages"] != float64(2) || p["page"] != float64(2) || len(body.(map[string]any)["corpus"].([]any)) != 1 {
			t.Errorf("GET corpus%s: %d %v", q, status, body)
		}
	}
	status, body = c.exchange("GET", base+"?search=saturdays", ten.Token, nil, true)
	if status != http.StatusOK || body.(map[string]any)["pagination"].(map[string]any)["total"] != float64(1) {
		t.Errorf("GET corpus?search: %d %v", status, body)
	}
	status, body = c.exchange("GET", base+"?page=9", ten.Token, nil, true)
	if status != http.StatusOK || len(body.(map[string]any)["corpus"].([]any)) != 0 {
		t.Errorf("GET corpus past the last page: %d %v", status, body)
	}
	for _, q := range []string{"?limit=101", "?limit=0", "?page=0", "?page=x", "?search=" + strings.Repeat("s", 201)} {
		if status, body = c.exchange("GET", base+q, ten.Token, nil, false); status != http.StatusBadRequest {
			t.Errorf("GET corpus%s: %d %v", q, status, body)
		}
	}
	if status, body = c.exchange("GET", base+"?segmentSlug=nope", ten.Token, nil, true); status != http.StatusBadRequest || errorDetails(body)["segmentSlug"] == nil {
		t.Errorf("GET corpus of an unknown segment: %d %v", status, body)
	}

	// Read, update (PUT and PATCH both partial), conflicts.
	status, body = c.exchange("GET", base+"/"+hoursID, ten.Token, nil, true)
	if status != http.StatusOK || entry(body)["id"] != hoursID {
		t.Errorf("GET entry: %d %v", status, body)
	}
	documentedKeys(t, "GET entry", schema("CorpusEnvelope"), body)
	status, body = c.exchange("PATCH", base+"/"+hoursID, ten.Token, map[string]any{"priority": 9, "segmentSlug": nil, "locale": "", "id": "ignored"}, true)
	if e := entry(body); status != http.StatusOK || e["priority"] != float64(9) || e["segment"] != nil || e["title"] != "Opening hours" {
		t.Errorf("PATCH entry: %d %v", status, body)
	}
	documentedKeys(t, "PATCH entry", schema("CorpusEnvelope"), body)
	status, body = c.exchange("PUT", base+"/"+hoursID, ten.Token, map[string]any{"title": " Hours ", "tags": nil, "summary": "", "sourceUrl": nil, "segment": "pros"}, true)
	if e := entry(body); status != http.StatusOK || e["title"] != "Hours" || len(e["tags"].([]any)) != 0 || e["summary"] != nil || e["sourceUrl"] != nil || e["segment"] == nil {
		t.Errorf("PUT entry: %d %v", status, body)
	}
	documentedKeys(t, "PUT entry", schema("CorpusEnvelope"), body)
	if status, body = c.exchange("PATCH", base+"/"+pricingID, ten.Token, map[string]any{"externalId": "faq-hours"}, true); status != http.StatusConflict || errorDetails(body)["externalId"] == nil {
		t.Errorf("PATCH taken externalId: %d %v", status, body)
	}
	if status, body = c.exchange("PUT", base+"/"+pricingID, ten.Token, map[string]any{"title": nil, "content": " ", "priority": "high"}, false); status != http.StatusBadRequest || len(errorDetails(body)) != 3 {
		t.Errorf("PUT invalid entry: %d %v", status, body)
	}

	// Bulk: created, then skipped/updated/created, then per-item errors.
	bulk := base + "/bulk"
	items := []any{
		map[string]any{"externalId": "b1", "title": "B1", "content": "one"},
		map[string]any{"externalId": "b2", "title": "B2", "content": "two", "segmentSlug": "pros", "priority": 3},
	}
	status, body = c.exchange("POST", bulk, ten.Token, map[string]any{"entries": items}, true)
	if got, _ := body.(map[string]any); status != http.StatusOK || got["created"] != float64(2) {
		t.Fatalf("POST bulk: %d %v", status, body)
	}
	documentedKeys(t, "POST bulk", schema("CorpusBulkResult"), body)
	items[1] = map[string]any{"externalId": "b2", "title": "B2", "content": "two, changed"}
	items = append(items, map[string]any{"externalId": "b3", "title": "B3", "content": "three"})
	status, body = c.exchange("POST", bulk, ten.Token, map[string]any{"entries": items}, true)
	got, _ := body.(map[string]any)
	if status != http.StatusOK || got["created"] != float64(1) || got["updated"] != float64(1) || got["skipped"] != float64(1) || len(got["errors"].([]any)) != 0 {
		t.Errorf("POST bulk again: %d %v", status, body)
	}
	sameKeys(t, "POST bulk", schema("CorpusBulkResult"), body)
	documentedKeys(t, "POST bulk", schema("CorpusBulkResult"), body)
	if r := got["results"].([]any); len(r) != 3 || r[0].(map[string]any)["status"] != "skipped" || r[0].(map[string]any)["reason"] != "unchanged" || r[1].(map[string]any)["status"] != "updated" {
		t.Errorf("POST bulk results: %v", r)
	}
	status, body = c.exchange("POST", bulk, ten.Token, map[string]any{"entries": []any{
		map[string]any{"title": "no id", "content": "c"},
		map[string]any{"externalId": "b4", "title": "", "content": "c"},
		"not an object",
		map[string]any{"externalId": "b5", "title": "ok", "content": "c"},
	}}, false)
	got, _ = body.(map[string]any)
	if status != http.StatusOK || got["created"] != float64(1) || len(got["errors"].([]any)) != 3 {
		t.Errorf("POST bulk with bad items: %d %v", status, body)
	}
	documentedKeys(t, "POST bulk with errors", schema("CorpusBulkResult"), body)
	for _, req := range []any{map[string]any{"entries": []any{}}, map[string]any{"entries": "x"}, map[string]any{}, "not an object"} {
		if status, body = c.exchange("POST", bulk, ten.Token, req, false); status != http.StatusBadRequest {
			t.Errorf("POST bulk %v: %d %v", req, status, body)
		}
	}
	fiftyOne := []any{}
	for i := 0; i < 51; i++ {
		fiftyOne = append(fiftyOne, map[string]any{"externalId": fmt.Sprint(i), "title": "t", "content": "c"})
	}
	if status, body = c.exchange("POST", bulk, ten.Token, map[string]any{"entries": fiftyOne}, false); status != http.StatusBadRequest {
		t.Errorf("POST bulk of 51: %d %v", status, body)
	}

	// CSV import, as multipart/form-data.
	imp := base + "/import"
	csv := "\xef\xbb\xbfTitle,content,segment,priority\n" +
		"Hours,\"Open 9-5, Monday to Friday\",,7\n" +
		"\"Multi\",\"line one\nline two\",pros,\n" +
		",missing title,,\n" +
		"Bad priority,x,,high\n"
	ct, raw := multipartFile("file", "corpus.csv", csv)
	status, body = c.exchangeRaw("POST", imp, ten.Token, ct, raw, true)
	got, _ = body.(map[string]any)
	if status != http.StatusOK || got["imported"] != float64(2) || len(got["errors"].([]any)) != 2 || got["errors"].([]any)[0].(map[string]any)["line"] != float64(5) {
		t.Errorf("POST import: %d %v", status, body)
	}
	sameKeys(t, "POST import", schema("CorpusImportResult"), body)
	documentedKeys(t, "POST import", schema("CorpusImportResult"), body)
	ct, raw = multipartFile("other", "corpus.csv", csv)
	if status, body = c.exchangeRaw("POST", imp, ten.Token, ct, raw, false); status != http.StatusBadRequest || errorDetails(body)["file"] == nil {
		t.Errorf("POST import without a file part: %d %v", status, body)
	}
	if status, body = c.exchange("POST", imp, ten.Token, map[string]any{"file": "title,content"}, false); status != http.StatusBadRequest {
		t.Errorf("POST import as JSON: %d %v", status, body)
	}
	ct, raw = multipartFile("file", "corpus.csv", "name,text\na,b\n")
	if status, body = c.exchangeRaw("POST", imp, ten.Token, ct, raw, true); status != http.StatusBadRequest {
		t.Errorf("POST import with a wrong header: %d %v", status, body)
	}
	ct, raw = multipartFile("file", "corpus.csv", "title,content\n"+strings.Repeat("t,"+strings.Repeat("c", 1000)+"\n", 5300))
	if status, body = c.exchangeRaw("POST", imp, ten.Token, ct, raw, true); status != http.StatusRequestEntityTooLarge {
		t.Errorf("POST import over 5 MiB: %d %v", status, body)
	}

	// Delete, 404, 403, 413.
	status, body = c.exchange("DELETE", base+"/"+variantID, ten.Token, nil, true)
	if got, _ := body.(map[string]any); status != http.StatusOK || got["deleted"] != true || got["id"] != variantID {
		t.Errorf("DELETE entry: %d %v", status, body)
	}
	sameKeys(t, "DELETE entry", schema("CorpusDeletion"), body)
	for _, method := range []string{"GET", "DELETE", "PATCH", "PUT"} {
		var req any
		if method == "PATCH" || method == "PUT" {
			req = map[string]any{"priority": 1}
		}
		status, body = c.exchange(method, base+"/"+variantID, ten.Token, req, true)
		if status != http.StatusNotFound || body.(map[string]any)["error"] != "Corpus entry not found" {
			t.Errorf("%s deleted entry: %d %v", method, status, body)
		}
	}
	other := b.newTenant(t, "scale")
	if status, body = c.exchange("GET", "/tenants/"+other.Slug+"/corpus/"+hoursID, other.Token, nil, true); status != http.StatusNotFound {
		t.Errorf("GET another tenant's entry: %d %v", status, body)
	}
	if status, body = c.exchange("GET", base, other.Token, nil, true); status != http.StatusNotFound || body.(map[string]any)["error"] != "Tenant not found" {
		t.Errorf("GET corpus with another tenant's token: %d %v", status, body)
	}
	readOnly := b.token(t, ten.ID, auth.ScopeCorpusRead)
	if status, body = c.exchange("POST", bulk, readOnly, map[string]any{"entries": items}, true); status != http.StatusForbidden || body.(map[string]any)["error"] != "Missing scope: corpus:write" {
		t.Errorf("POST bulk with corpus:read: %d %v", status, body)
	}
	ct, raw = multipartFile("file", "corpus.csv", csv)
	if status, body = c.exchangeRaw("POST", imp, readOnly, ct, raw, true); status != http.StatusForbidden {
		t.Errorf("POST import with corpus:read: %d %v", status, body)
	}
	if status, body = c.exchange("GET", base+"/"+hoursID, b.token(t, ten.ID, auth.ScopeSegmentsRead), nil, true); status != http.StatusForbidden {
		t.Errorf("GET entry with segments:read: %d %v", status, body)
	}
	if status, body = c.exchange("POST", base, ten.Token, map[string]any{"title": "t", "content": strings.Repeat("c", 1<<20)}, false); status != http.StatusRequestEntityTooLarge {
		t.Errorf("POST large body: %d %v", status, body)
	}

	// The plan's corpus limit: 429 on create, upserts of existing entries still work.
	free := b.newTenant(t, "free") // 50 entries
	fifty := fiftyOne[:50]
	if status, body = c.exchange("POST", "/tenants/"+free.Slug+"/corpus/bulk", free.Token, map[string]any{"entries": fifty}, true); status != http.StatusOK || body.(map[string]any)["created"] != float64(50) {
		t.Fatalf("fill the free corpus: %d %v", status, body)
	}
	status, body = c.exchange("POST", "/tenants/"+free.Slug+"/corpus", free.Token, map[string]any{"title": "one more", "content": "c"}, true)
	if status != http.StatusTooManyRequests || errorDetails(body)["limit"] != float64(50) {
		t.Errorf("POST over the corpus limit: %d %v", status, body)
	}
	documentedKeys(t, "429", schema("CorpusLimitError"), body)
	status, body = c.exchange("POST", "/tenants/"+free.Slug+"/corpus/bulk", free.Token, map[string]any{"entries": []any{map[string]any{"externalId": "new", "title": "t", "content": "c"}}}, true)
	if got, _ := body.(map[string]any); status != http.StatusOK || len(got["errors"].([]any)) != 1 {
		t.Errorf("POST bulk over the corpus limit: %d %v", status, body)
	}
	if status, body = c.exchange("POST", "/tenants/"+free.Slug+"/corpus", free.Token, map[string]any{"externalId": "0", "title": "t", "content": "changed"}, true); status != http.StatusOK {
		t.Errorf("POST upsert at the corpus limit: %d %v", status, body)
	}
}

// openAPIHarness loads the document and returns it with a checker on b and a schema lookup.
func openAPIHarness(t *testing.T, b *bundle) (*openapi3.T, *openAPIChecker, func(string) *openapi3.Schema) {
	t.Helper()
	doc := loadOpenAPI(t)
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return doc, &openAPIChecker{t: t, router: router, b: b}, func(name string) *openapi3.Schema {
		s := doc.Components.Schemas[name]
		if s == nil {
			t.Fatalf("no schema %s", name)
		}
		return s.Value
	}
}

// jsonNames lists the JSON member names of a struct type, sorted.
func jsonNames(st reflect.Type) []string {
	var names []string
	for i := 0; i < st.NumField(); i++ {
		if name, _, _ := strings.Cut(st.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// toolConfigSchemas maps each user tool type to its config schema (read form; the write form adds "Input").
var toolConfigSchemas = map[string]string{
	agent.ToolSubmitForm:       "SubmitFormToolConfig",
	agent.ToolGenerateQuote:    "GenerateQuoteToolConfig",
	agent.ToolBookMeeting:      "BookMeetingToolConfig",
	agent.ToolEscalateToHuman:  "EscalateToHumanToolConfig",
	agent.ToolRememberFact:     "RememberFactToolConfig",
	agent.ToolRecommendProduct: "RecommendProductToolConfig",
}

// TestOpenAPIToolConfigMatchesAgent checks the tool types and the per-type
// config schemas against the agent package: the members the decoder knows
// (it refuses any other), the defaults it fills in, and the normalised
// configs it stores, which must fit the read schemas.
func TestOpenAPIToolConfigMatchesAgent(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	schema := func(name string) *openapi3.Schema {
		s := doc.Components.Schemas[name]
		if s == nil {
			t.Fatalf("no schema %s", name)
		}
		return s.Value
	}
	toolType := schema("ToolType")
	var enum []string
	for _, v := range toolType.Enum {
		enum = append(enum, v.(string))
	}
	if !slices.Equal(enum, agent.UserToolTypes) {
		t.Errorf("ToolType enum = %v, want %v", enum, agent.UserToolTypes)
	}
	for _, typ := range agent.SyntheticToolTypes {
		if !strings.Contains(toolType.Description, "`"+typ+"`") {
			t.Errorf("ToolType does not name the synthetic type %s", typ)
		}
	}

	// Members: each schema lists exactly the struct's JSON members, and every
	// schema of a config refuses other members, as the decoder does.
	structs := map[string]reflect.Type{
		"SubmitFormToolConfig":       reflect.TypeFor[agent.SubmitFormConfig](),
		"GenerateQuoteToolConfig":    reflect.TypeFor[agent.QuoteConfig](),
		"QuoteItem":                  reflect.TypeFor[agent.QuoteItem](),
		"QuoteOption":                reflect.TypeFor[agent.QuoteOption](),
		"BookMeetingToolConfig":      reflect.TypeFor[agent.MeetingConfig](),
		"EscalateToHumanToolConfig":  reflect.TypeFor[agent.EscalateConfig](),
		"RememberFactToolConfig":     reflect.TypeFor[agent.RememberConfig](),
		"RecommendProductToolConfig": reflect.TypeFor[agent.RecommendConfig](),
		"ToolFormField":              reflect.TypeFor[parley.FormField](),
	}
	for name, st := range structs {
		for _, n := range []string{name, name + "Input"} {
			if n == "ToolFormField" {
				n = "FormField" // the read form is the segment form's field
			}
			s := schema(n)
			if got, want := sortedKeys(s.Properties), jsonNames(st); !slices.Equal(got, want) {
				t.Errorf("%s properties = %v, %s decodes %v", n, got, st, want)
			}
			if n != "FormField" && (s.AdditionalProperties.Has == nil || *s.AdditionalProperties.Has) {
				t.Errorf("%s does not refuse unknown members", n)
			}
		}
	}

	// Tool binds each type to its read config, ToolWrite to its write config.
	for _, name := range []string{"Tool", "ToolWrite"} {
		bound := map[string]string{}
		for _, sub := range schema(name).AllOf {
			s := sub.Value
			if s.If == nil || s.Then == nil || s.Then.Value.Properties["config"] == nil {
				continue
			}
			cfg := s.Then.Value.Properties["config"]
			if cfg.Ref == "" && len(cfg.Value.AnyOf) > 0 {
				cfg = cfg.Value.AnyOf[0]
			}
			typ, _ := s.If.Value.Properties["type"].Value.Const.(string)
			bound[typ] = strings.TrimPrefix(cfg.Ref, "#/components/schemas/")
		}
		for typ, cfg := range toolConfigSchemas {
			if name == "ToolWrite" {
				cfg += "Input"
			}
			if bound[typ] != cfg {
				t.Errorf("%s binds %s to config %q, want %s", name, typ, bound[typ], cfg)
			}
		}
	}

	// Defaults: the smallest config of each type, normalised by the agent
	// package, carries the documented defaults and fits the read schema.
	minimal := map[string]string{
		agent.ToolSubmitForm:    `{"fields": [{"name": "email", "label": "Email", "type": "email"}]}`,
		agent.ToolGenerateQuote: `{"currency": "EUR", "items": [{"name": "Website", "options": [{"name": "Hosting"}]}]}`,
	}
	for typ, name := range toolConfigSchemas {
		norm, problems := agent.ValidateToolConfig(typ, json.RawMessage(minimal[typ]))
		if len(problems) > 0 {
			t.Fatalf("%s: %v", typ, problems)
		}
		var got map[string]any
		if err := json.Unmarshal(norm, &got); err != nil {
			t.Fatal(err)
		}
		if err := schema(name).VisitJSON(got, openapi3.EnableJSONSchema2020()); err != nil {
			t.Errorf("%s: normalised config %s does not fit %s: %v", typ, norm, name, err)
		}
		documentedKeys(t, typ+" config", schema(name), got)
		input := schema(name + "Input")
		for prop, p := range input.Properties {
			if p.Value.Default != nil && !reflect.DeepEqual(got[prop], p.Value.Default) {
				t.Errorf("%s.%s: documented default %v, the agent fills in %v", name+"Input", prop, p.Value.Default, got[prop])
			}
		}
		if typ == agent.ToolGenerateQuote {
			item := got["items"].([]any)[0].(map[string]any)
			for _, s := range []string{"QuoteItemInput", "QuoteOptionInput"} {
				v := item
				if s == "QuoteOptionInput" {
					v = item["options"].([]any)[0].(map[string]any)
				}
				for prop, p := range schema(s).Properties {
					if p.Value.Default != nil && !reflect.DeepEqual(v[prop], p.Value.Default) {
						t.Errorf("%s.%s: documented default %v, the agent fills in %v", s, prop, p.Value.Default, v[prop])
					}
				}
			}
		}
	}
}

// TestOpenAPIToolResponses validates real tool requests and responses against the document.
func TestOpenAPIToolResponses(t *testing.T) {
	t.Parallel()
	doc, c, schema := openAPIHarness(t, setup(t))
	b := c.b
	ten := b.newTenant(t, "scale")
	base := "/tenants/" + ten.Slug + "/tools"
	toolSchema := schema("Tool")
	listSchema := responseSchema(t, doc, "GET", "/tenants/{slug}/tools", 200)
	if status, body := c.exchange("POST", "/tenants/"+ten.Slug+"/segments", ten.Token, map[string]any{"name": "Pros", "systemPrompt": "p"}, true); status != http.StatusCreated {
		t.Fatalf("POST segment: %d %v", status, body)
	}
	tool := func(body any) map[string]any { m, _ := body.(map[string]any); return m }
	config := func(body any) map[string]any { m, _ := tool(body)["config"].(map[string]any); return m }

	status, body := c.exchange("GET", base, ten.Token, nil, true)
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
		{agent.ToolSubmitForm, map[string]any{"config": form, "segmentId": "pros", "position": 2}, func(cfg map[string]any) bool {
			f := cfg["fields"].([]any)
			return len(f) == 2 && f[1].(map[string]any)["required"] == false && cfg["confirmationMessage"] == "Thanks"
		}},
		{agent.ToolGenerateQuote, map[string]any{"config": quote, "position": 1.5}, func(cfg map[string]any) bool {
			items := cfg["items"].([]any)
			return items[0].(map[string]any)["name"] == "Website" && items[1].(map[string]any)["currency"] == "EUR" &&
				cfg["validityDays"] == float64(30) && cfg["taxRate"] == float64(20)
		}},
		{agent.ToolBookMeeting, map[string]any{}, func(cfg map[string]any) bool {
			return cfg["durationMinutes"] == float64(30) && cfg["bufferMinutes"] == float64(0) &&
				cfg["bookingWindowDays"] == float64(30) && cfg["minNoticeHours"] == float64(2)
		}},
		{agent.ToolEscalateToHuman, map[string]any{"config": map[string]any{"handoffMessage": "A human will answer."},
			"webhookUrl": "https://hooks.example.com/escalate", "webhookSecret": "s3cret"}, func(cfg map[string]any) bool {
			return cfg["handoffMessage"] == "A human will answer."
		}},
		{agent.ToolRememberFact, map[string]any{"config": nil, "isActive": false}, func(cfg map[string]any) bool {
			keys, ok := cfg["allowedKeys"].([]any)
			return ok && len(keys) == 0
		}},
		{agent.ToolRecommendProduct, map[string]any{"config": map[string]any{"maxResults": 5}, "position": -1}, func(cfg map[string]any) bool {
			return cfg["maxResults"] == float64(5)
		}},
	}
	ids := map[string]string{}
	for _, tc := range creates {
		req := map[string]any{"name": "Tool " + tc.typ, "description": " Use it. ", "type": tc.typ}
		maps.Copy(req, tc.extra)
		status, body := c.exchange("POST", base, ten.Token, req, true)
		if status != http.StatusCreated || tool(body)["type"] != tc.typ || tool(body)["description"] != "Use it." {
			t.Fatalf("POST %s tool: %d %v", tc.typ, status, body)
		}
		documentedKeys(t, "POST "+tc.typ, toolSchema, body)
		sameKeys(t, "POST "+tc.typ, toolSchema, body)
		if !tc.check(config(body)) {
			t.Errorf("POST %s: config %v", tc.typ, config(body))
		}
		ids[tc.typ] = tool(body)["id"].(string)
	}
	status, body = c.exchange("GET", base+"/"+ids[agent.ToolSubmitForm], ten.Token, nil, true)
	if got := tool(body); status != http.StatusOK || got["segment"] != "pros" || got["segmentId"] == nil || got["hasWebhookSecret"] != false {
		t.Errorf("GET form tool: %d %v", status, body)
	}
	documentedKeys(t, "GET tool", toolSchema, body)
	status, body = c.exchange("GET", base+"/"+ids[agent.ToolEscalateToHuman], ten.Token, nil, true)
	if got := tool(body); status != http.StatusOK || got["hasWebhookSecret"] != true || got["webhookUrl"] != "https://hooks.example.com/escalate" || got["segment"] != nil {
		t.Errorf("GET escalation tool: %d %v", status, body)
	}
	sameKeys(t, "GET tool", toolSchema, body)

	// The list: lowest position first, ties oldest first.
	status, body = c.exchange("GET", base, ten.Token, nil, true)
	list, _ := body.([]any)
	if status != http.StatusOK || len(list) != 6 || tool(list[0])["type"] != agent.ToolRecommendProduct ||
		tool(list[1])["type"] != agent.ToolBookMeeting || tool(list[5])["type"] != agent.ToolSubmitForm {
		t.Fatalf("GET tools: %d %v", status, body)
	}
	documentedKeys(t, "GET tools", listSchema, body)

	// PATCH: only the members sent change; read-only members are ignored.
	formID := ids[agent.ToolSubmitForm]
	status, body = c.exchange("PATCH", base+"/"+formID, ten.Token, map[string]any{"name": "Callback", "segmentId": nil, "position": 3, "id": "ignored", "segment": "ignored", "hasWebhookSecret": true}, true)
	if got := tool(body); status != http.StatusOK || got["name"] != "Callback" || got["segment"] != nil || got["segmentId"] != nil || got["id"] != formID || len(config(body)["fields"].([]any)) != 2 {
		t.Errorf("PATCH tool: %d %v", status, body)
	}
	documentedKeys(t, "PATCH tool", toolSchema, body)
	// Changing the type away from escalation drops the webhook.
	status, body = c.exchange("PATCH", base+"/"+ids[agent.ToolEscalateToHuman], ten.Token, map[string]any{"type": agent.ToolRecommendProduct, "config": map[string]any{}}, true)
	if got := tool(body); status != http.StatusOK || got["webhookUrl"] != nil || got["hasWebhookSecret"] != false || config(body)["maxResults"] != float64(3) {
		t.Errorf("PATCH type: %d %v", status, body)
	}
	sameKeys(t, "PATCH type", toolSchema, body)
	// A new type without a config validates the stored one, which does not fit.
	if status, body = c.exchange("PATCH", base+"/"+formID, ten.Token, map[string]any{"type": agent.ToolBookMeeting}, true); status != http.StatusBadRequest || !strings.Contains(fmt.Sprint(errorDetails(body)["config"]), "unknown key") {
		t.Errorf("PATCH type with a config that does not fit: %d %v", status, body)
	}
	if status, body = c.exchange("PATCH", base+"/"+ids[agent.ToolBookMeeting], ten.Token, map[string]any{"webhookSecret": "x"}, true); status != http.StatusBadRequest || errorDetails(body)["webhookSecret"] == nil {
		t.Errorf("PATCH webhookSecret of a meeting tool: %d %v", status, body)
	}
	if status, body = c.exchange("PATCH", base+"/"+ids[agent.ToolBookMeeting], ten.Token, map[string]any{"webhookSecret": "", "webhookUrl": nil, "config": map[string]any{"bufferMinutes": 15}}, true); status != http.StatusOK || config(body)["bufferMinutes"] != float64(15) || config(body)["durationMinutes"] != float64(30) {
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
		{"noName", "name", map[string]any{"description": "d", "type": agent.ToolBookMeeting}, true},
		{"blankName", "name", valid(agent.ToolBookMeeting, map[string]any{"name": " "}), true},
		{"longName", "name", valid(agent.ToolBookMeeting, map[string]any{"name": strings.Repeat("n", 101)}), true},
		{"noDescription", "description", map[string]any{"name": "n", "type": agent.ToolBookMeeting}, true},
		{"longDescription", "description", valid(agent.ToolBookMeeting, map[string]any{"description": strings.Repeat("d", 1001)}), true},
		{"unknownKey", "config", valid(agent.ToolBookMeeting, map[string]any{"config": map[string]any{"color": "red"}}), true},
		{"duration", "config", valid(agent.ToolBookMeeting, map[string]any{"config": map[string]any{"durationMinutes": 4}}), true},
		{"notObject", "config", valid(agent.ToolRecommendProduct, map[string]any{"config": "three"}), true},
		{"maxResults", "config", valid(agent.ToolRecommendProduct, map[string]any{"config": map[string]any{"maxResults": 11}}), true},
		{"handoff", "config", valid(agent.ToolEscalateToHuman, map[string]any{"config": map[string]any{"handoffMessage": strings.Repeat("h", 501)}}), true},
		{"allowedKeys", "config", valid(agent.ToolRememberFact, map[string]any{"config": map[string]any{"allowedKeys": []string{"Company"}}}), true},
		{"formNoConfig", "config", valid(agent.ToolSubmitForm, nil), true},
		{"formNoFields", "config", valid(agent.ToolSubmitForm, map[string]any{"config": map[string]any{"fields": []any{}}}), true},
		{"formFieldKey", "config", valid(agent.ToolSubmitForm, field("f", map[string]any{"name": "a", "label": "A", "type": "text", "placeholder": "x"})), true},
		{"formFieldType", "config", valid(agent.ToolSubmitForm, field("f", map[string]any{"name": "a", "label": "A", "type": "number"})), true},
		{"quoteCurrency", "config", valid(agent.ToolGenerateQuote, map[string]any{"config": map[string]any{"currency": "eur", "items": []any{map[string]any{"name": "x"}}}}), true},
		{"quoteNoItems", "config", valid(agent.ToolGenerateQuote, quoteWith()), true},
		{"quoteItemKey", "config", valid(agent.ToolGenerateQuote, quoteWith(map[string]any{"name": "x", "price": 1})), true},
		{"quoteCents", "config", valid(agent.ToolGenerateQuote, quoteWith(map[string]any{"name": "x", "unitPrice": 1.234})), false},
		{"quoteTwice", "config", valid(agent.ToolGenerateQuote, quoteWith(map[string]any{"name": "Logo"}, map[string]any{"name": " logo"})), false},
		{"quoteItemCurrency", "config", valid(agent.ToolGenerateQuote, quoteWith(map[string]any{"name": "x", "currency": "USD"})), false},
		{"webhookOnForm", "webhookUrl", valid(agent.ToolSubmitForm, map[string]any{"config": form, "webhookUrl": "https://hooks.example.com/x"}), true},
		{"webhookHTTP", "webhookUrl", valid(agent.ToolEscalateToHuman, map[string]any{"webhookUrl": "http://hooks.example.com/x"}), true},
		{"webhookLoopback", "webhookUrl", valid(agent.ToolEscalateToHuman, map[string]any{"webhookUrl": "https://127.0.0.1/hook"}), false},
		{"secretOnMeeting", "webhookSecret", valid(agent.ToolBookMeeting, map[string]any{"webhookSecret": "s"}), true},
		{"longSecret", "webhookSecret", valid(agent.ToolEscalateToHuman, map[string]any{"webhookSecret": strings.Repeat("s", 256)}), true},
		{"position", "position", valid(agent.ToolBookMeeting, map[string]any{"position": 1e10}), true},
		{"positionType", "position", valid(agent.ToolBookMeeting, map[string]any{"position": "first"}), true},
		{"isActive", "isActive", valid(agent.ToolBookMeeting, map[string]any{"isActive": nil}), true},
		{"segment", "segmentId", valid(agent.ToolBookMeeting, map[string]any{"segmentId": "nope"}), false},
	} {
		status, body := c.exchange("POST", base, ten.Token, tc.req, !tc.docRefuses)
		if status != http.StatusBadRequest || errorDetails(body)[tc.field] == nil {
			t.Errorf("POST %s: %d %v", tc.what, status, body)
		}
	}
	status, body = c.exchange("POST", base, ten.Token, valid("COLLECT_PAYMENT", nil), false)
	if msg := fmt.Sprint(errorDetails(body)["type"]); status != http.StatusBadRequest || !strings.Contains(msg, "allowed types: "+strings.Join(agent.UserToolTypes, ", ")) {
		t.Errorf("POST a synthetic type: %d %v", status, body)
	}
	status, body = c.exchange("POST", base, ten.Token, valid(agent.ToolEscalateToHuman, map[string]any{"webhookUrl": "https://10.1.2.3/hook"}), true)
	if msg := fmt.Sprint(errorDetails(body)["webhookUrl"]); status != http.StatusBadRequest || !strings.HasPrefix(msg, "refused: ") {
		t.Errorf("POST a private webhook: %d %v", status, body)
	}
	if status, body = c.exchange("POST", base, ten.Token, "not an object", false); status != http.StatusBadRequest {
		t.Errorf("POST a string: %d %v", status, body)
	}

	// Names are unique per tenant, case-insensitively.
	if status, body = c.exchange("POST", base, ten.Token, valid(agent.ToolBookMeeting, map[string]any{"name": "CALLBACK"}), true); status != http.StatusConflict || errorDetails(body)["name"] == nil {
		t.Errorf("POST a taken name: %d %v", status, body)
	}
	if status, body = c.exchange("PATCH", base+"/"+ids[agent.ToolBookMeeting], ten.Token, map[string]any{"name": "callback"}, true); status != http.StatusConflict || errorDetails(body)["name"] == nil {
		t.Errorf("PATCH a taken name: %d %v", status, body)
	}

	// Delete, 404, 403, 413.
	status, body = c.exchange("DELETE", base+"/"+formID, ten.Token, nil, true)
	if got := tool(body); status != http.StatusOK || got["deleted"] != true || got["id"] != formID {
		t.Errorf("DELETE tool: %d %v", status, body)
	}
	sameKeys(t, "DELETE tool", schema("ToolDeletion"), body)
	for _, method := range []string{"GET", "PATCH", "DELETE"} {
		var req any
		if method == "PATCH" {
			req = map[string]any{"position": 1}
		}
		for _, id := range []string{formID, "not-a-uuid"} {
			status, body = c.exchange(method, base+"/"+id, ten.Token, req, true) // uuid is a format, not checked
			if status != http.StatusNotFound || tool(body)["error"] != "Tool not found" {
				t.Errorf("%s tool %s: %d %v", method, id, status, body)
			}
		}
	}
	other := b.newTenant(t, "scale")
	if status, body = c.exchange("GET", "/tenants/"+other.Slug+"/tools/"+ids[agent.ToolBookMeeting], other.Token, nil, true); status != http.StatusNotFound {
		t.Errorf("GET another tenant's tool: %d %v", status, body)
	}
	readOnly := b.token(t, ten.ID, auth.ScopeToolsRead)
	if status, body = c.exchange("POST", base, readOnly, valid(agent.ToolBookMeeting, nil), true); status != http.StatusForbidden || tool(body)["error"] != "Missing scope: tools:write" {
		t.Errorf("POST with tools:read: %d %v", status, body)
	}
	if status, body = c.exchange("GET", base, b.token(t, ten.ID, auth.ScopeVisitorsRead), nil, true); status != http.StatusForbidden {
		t.Errorf("GET with visitors:read: %d %v", status, body)
	}
	if status, body = c.exchange("POST", base, ten.Token, valid(agent.ToolBookMeeting, map[string]any{"description": strings.Repeat("d", 1<<20)}), false); status != http.StatusRequestEntityTooLarge {
		t.Errorf("POST large body: %d %v", status, body)
	}
}

// TestOpenAPIProductResponses validates real product requests and responses against the document.
func TestOpenAPIProductResponses(t *testing.T) {
	t.Parallel()
	_, c, schema := openAPIHarness(t, setup(t))
	b := c.b
	ten := b.newTenant(t, "scale")
	base := "/tenants/" + ten.Slug + "/products"
	productSchema, listSchema := schema("Product"), schema("ProductList")
	obj := func(body any) map[string]any { m, _ := body.(map[string]any); return m }
	pagination := func(body any) map[string]any { m, _ := obj(body)["pagination"].(map[string]any); return m }
	products := func(body any) []any { l, _ := obj(body)["products"].([]any); return l }

	status, body := c.exchange("GET", base, ten.Token, nil, true)
	if p := pagination(body); status != http.StatusOK || len(products(body)) != 0 || p["total"] != float64(0) || p["pages"] != float64(0) || p["limit"] != float64(20) {
		t.Fatalf("GET products of a new tenant: %d %v", status, body)
	}
	sameKeys(t, "GET products", listSchema, body)

	// Create: defaults, then every member; the answer is the product itself.
	status, body = c.exchange("POST", base, ten.Token, map[string]any{"name": " Mug "}, true)
	if p := obj(body); status != http.StatusCreated || p["name"] != "Mug" || p["price"] != nil || p["isActive"] != true || len(p["tags"].([]any)) != 0 {
		t.Fatalf("POST product: %d %v", status, body)
	}
	sameKeys(t, "POST product", productSchema, body)
	documentedKeys(t, "POST product", productSchema, body)
	mugID := obj(body)["id"].(string)
	full := map[string]any{
		"externalId": "sku-1", "name": "Trail shoes", "description": "Grippy soles for muddy trails.", "price": 129.9,
		"currency": "eur", "url": "https://shop.example.com/p/1", "imageUrl": "http://cdn.example.com/1.jpg",
		"tags": []string{"running", " running ", "shoes", ""}, "isActive": true,
	}
	status, body = c.exchange("POST", base, ten.Token, full, true)
	if p := obj(body); status != http.StatusCreated || p["currency"] != "EUR" || p["price"] != 129.9 || len(p["tags"].([]any)) != 2 || p["externalId"] != "sku-1" {
		t.Fatalf("POST full product: %d %v", status, body)
	}
	sameKeys(t, "POST full product", productSchema, body)
	shoesID := obj(body)["id"].(string)

	// A known externalId: an upsert, 200, only the members sent change; name is not required.
	status, body = c.exchange("POST", base, ten.Token, map[string]any{"externalId": "sku-1", "price": 99.5}, true)
	if p := obj(body); status != http.StatusOK || p["id"] != shoesID || p["name"] != "Trail shoes" || p["price"] != 99.5 {
		t.Errorf("POST upsert: %d %v", status, body)
	}
	documentedKeys(t, "POST upsert", productSchema, body)
	if status, body = c.exchange("POST", base, ten.Token, map[string]any{"externalId": "sku-new", "price": 1, "currency": "EUR"}, true); status != http.StatusBadRequest || errorDetails(body)["name"] == nil {
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
		status, body = c.exchange("POST", base, ten.Token, req, false)
		if status != http.StatusBadRequest {
			t.Errorf("POST %s: %d %v", what, status, body)
		}
	}
	for what, req := range map[string]map[string]any{
		"cents":      {"name": "n", "price": 1.234, "currency": "EUR"},
		"noCurrency": {"name": "n", "price": 5},
	} {
		if status, body = c.exchange("POST", base, ten.Token, req, true); status != http.StatusBadRequest {
			t.Errorf("POST %s: %d %v", what, status, body)
		}
	}
	if status, body = c.exchange("PATCH", base+"/"+shoesID, ten.Token, map[string]any{"currency": nil}, true); status != http.StatusBadRequest || errorDetails(body)["currency"] != "is required with a price" {
		t.Errorf("PATCH clearing the currency of a priced product: %d %v", status, body)
	}

	// Update (PUT and PATCH both partial), clear, conflict.
	status, body = c.exchange("PUT", base+"/"+shoesID, ten.Token, map[string]any{"description": "", "tags": nil, "url": nil, "price": nil, "currency": "", "id": "ignored"}, true)
	if p := obj(body); status != http.StatusOK || p["description"] != nil || len(p["tags"].([]any)) != 0 || p["url"] != nil || p["price"] != nil || p["currency"] != nil || p["name"] != "Trail shoes" {
		t.Errorf("PUT clear: %d %v", status, body)
	}
	sameKeys(t, "PUT product", productSchema, body)
	status, body = c.exchange("PATCH", base+"/"+mugID, ten.Token, map[string]any{"price": 12, "currency": "usd", "tags": []string{"kitchen"}}, true)
	if p := obj(body); status != http.StatusOK || p["price"] != float64(12) || p["currency"] != "USD" || p["name"] != "Mug" {
		t.Errorf("PATCH product: %d %v", status, body)
	}
	documentedKeys(t, "PATCH product", productSchema, body)
	if status, body = c.exchange("PATCH", base+"/"+mugID, ten.Token, map[string]any{"externalId": "sku-1"}, true); status != http.StatusConflict || errorDetails(body)["externalId"] == nil {
		t.Errorf("PATCH a taken externalId: %d %v", status, body)
	}

	// List: filter, search, paginate, by name.
	if status, body = c.exchange("POST", base, ten.Token, map[string]any{"name": "Old mug", "isActive": false}, true); status != http.StatusCreated {
		t.Fatalf("POST inactive product: %d %v", status, body)
	}
	status, body = c.exchange("GET", base+"?isActive=true", ten.Token, nil, true)
	if status != http.StatusOK || pagination(body)["total"] != float64(2) || obj(products(body)[0])["name"] != "Mug" {
		t.Errorf("GET active products: %d %v", status, body)
	}
	documentedKeys(t, "GET products", listSchema, body)
	for q, want := range map[string]string{"?search=muddy": "", "?search=kitchen": "Mug", "?search=shoe": "Trail shoes"} {
		status, body = c.exchange("GET", base+q, ten.Token, nil, true)
		if status != http.StatusOK || (want != "" && (len(products(body)) != 1 || obj(products(body)[0])["name"] != want)) {
			t.Errorf("GET products%s: %d %v", q, status, body)
		}
	}
	status, body = c.exchange("GET", base+"?page=2&limit=1", ten.Token, nil, true)
	if p := pagination(body); status != http.StatusOK || len(products(body)) != 1 || p["page"] != float64(2) || p["limit"] != float64(1) || p["total"] != float64(3) || p["pages"] != float64(3) {
		t.Errorf("GET page 2: %d %v", status, body)
	}
	sameKeys(t, "GET page 2", listSchema, body)
	if status, body = c.exchange("GET", base+"?page=9", ten.Token, nil, true); status != http.StatusOK || len(products(body)) != 0 {
		t.Errorf("GET past the last page: %d %v", status, body)
	}
	for _, q := range []string{"?limit=101", "?limit=0", "?page=0", "?page=1000001", "?page=x", "?isActive=false", "?isActive=maybe"} {
		if status, body = c.exchange("GET", base+q, ten.Token, nil, false); status != http.StatusBadRequest {
			t.Errorf("GET products%s: %d %v", q, status, body)
		}
	}

	// Bulk: created, then updated/created with per-item errors.
	bulk := base + "/bulk"
	bulkSchema := schema("ProductBulkResult")
	status, body = c.exchange("POST", bulk, ten.Token, map[string]any{"products": []any{
		map[string]any{"externalId": "b1", "name": "B1", "price": 1, "currency": "USD"},
		map[string]any{"externalId": "b2", "name": "B2"},
	}}, true)
	if got := obj(body); status != http.StatusOK || got["created"] != float64(2) || got["updated"] != float64(0) || len(got["errors"].([]any)) != 0 {
		t.Fatalf("POST bulk: %d %v", status, body)
	}
	sameKeys(t, "POST bulk", bulkSchema, body)
	status, body = c.exchange("POST", bulk, ten.Token, map[string]any{"products": []any{
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
	documentedKeys(t, "POST bulk with errors", bulkSchema, body)
	if e := got["errors"].([]any); obj(e[0])["externalId"] != "" || obj(e[1])["externalId"] != "b3" || obj(e[3])["externalId"] != "b4" {
		t.Errorf("POST bulk errors: %v", e)
	}
	hundredOne := []any{}
	for i := 0; i < 101; i++ {
		hundredOne = append(hundredOne, map[string]any{"externalId": fmt.Sprint(i), "name": "p"})
	}
	for _, req := range []any{map[string]any{"products": []any{}}, map[string]any{"products": "x"}, map[string]any{}, map[string]any{"products": hundredOne}, "not an object"} {
		if status, body = c.exchange("POST", bulk, ten.Token, req, false); status != http.StatusBadRequest {
			t.Errorf("POST bulk %.60v: %d %v", req, status, body)
		}
	}

	// Read, delete, 404, 403, 413.
	status, body = c.exchange("GET", base+"/"+mugID, ten.Token, nil, true)
	if status != http.StatusOK || obj(body)["id"] != mugID {
		t.Errorf("GET product: %d %v", status, body)
	}
	sameKeys(t, "GET product", productSchema, body)
	status, body = c.exchange("DELETE", base+"/"+mugID, ten.Token, nil, true)
	if got := obj(body); status != http.StatusOK || got["deleted"] != true || got["id"] != mugID {
		t.Errorf("DELETE product: %d %v", status, body)
	}
	sameKeys(t, "DELETE product", schema("ProductDeletion"), body)
	for _, method := range []string{"GET", "PUT", "PATCH", "DELETE"} {
		var req any
		if method == "PUT" || method == "PATCH" {
			req = map[string]any{"name": "x"}
		}
		for _, id := range []string{mugID, "not-a-uuid"} {
			if status, body = c.exchange(method, base+"/"+id, ten.Token, req, true); status != http.StatusNotFound || obj(body)["error"] != "Product not found" {
				t.Errorf("%s product %s: %d %v", method, id, status, body)
			}
		}
	}
	if status, body = c.exchange("GET", base, b.token(t, ten.ID, auth.ScopeVisitorsRead), nil, true); status != http.StatusForbidden || obj(body)["error"] != "Missing scope: tools:read" {
		t.Errorf("GET products with visitors:read: %d %v", status, body)
	}
	if status, body = c.exchange("POST", bulk, b.token(t, ten.ID, auth.ScopeToolsRead), map[string]any{"products": []any{map[string]any{"externalId": "x", "name": "x"}}}, true); status != http.StatusForbidden {
		t.Errorf("POST bulk with tools:read: %d %v", status, body)
	}
	if status, body = c.exchange("POST", base, ten.Token, map[string]any{"name": "n", "description": strings.Repeat("d", 1<<20)}, false); status != http.StatusRequestEntityTooLarge {
		t.Errorf("POST large body: %d %v", status, body)
	}
}

// TestOpenAPIVisitorResponses validates real visitor and memory requests and responses against the document.
func TestOpenAPIVisitorResponses(t *testing.T) {
	t.Parallel()
	doc, c, schema := openAPIHarness(t, setup(t))
	b := c.b
	ten := b.newTenant(t, "scale")
	base := "/tenants/" + ten.Slug + "/visitors"
	detailSchema, listSchema, factSchema := schema("VisitorDetail"), schema("VisitorList"), schema("MemoryFact")
	obj := func(body any) map[string]any { m, _ := body.(map[string]any); return m }
	visitors := func(body any) []any { l, _ := obj(body)["visitors"].([]any); return l }

	status, body := c.exchange("GET", base, ten.Token, nil, true)
	if got := obj(body); status != http.StatusOK || len(visitors(body)) != 0 || got["total"] != float64(0) || got["limit"] != float64(50) || got["offset"] != float64(0) {
		t.Fatalf("GET visitors of a new tenant: %d %v", status, body)
	}
	sameKeys(t, "GET visitors", listSchema, body)

	// Create: text trimmed, email lower-cased, counts present.
	status, body = c.exchange("POST", base, ten.Token, map[string]any{
		"email": " Ada@Example.COM ", "displayName": " Ada ", "phone": "+33 1 23 45 67 89", "authProvider": "email",
		"externalId": "crm-1", "metadata": map[string]any{"plan": "pro"},
	}, true)
	if v := obj(body); status != http.StatusCreated || v["email"] != "ada@example.com" || v["displayName"] != "Ada" || v["memoryCount"] != float64(0) || v["conversationCount"] != float64(0) {
		t.Fatalf("POST visitor: %d %v", status, body)
	}
	sameKeys(t, "POST visitor", detailSchema, body)
	documentedKeys(t, "POST visitor", detailSchema, body)
	adaID := obj(body)["id"].(string)
	status, body = c.exchange("POST", base, ten.Token, map[string]any{"externalId": "crm-2", "email": ""}, true)
	if v := obj(body); status != http.StatusCreated || v["email"] != nil || len(v["metadata"].(map[string]any)) != 0 {
		t.Fatalf("POST visitor by externalId: %d %v", status, body)
	}
	sameKeys(t, "POST visitor by externalId", detailSchema, body)
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
		if status, body = c.exchange("POST", base, ten.Token, req, false); status != http.StatusBadRequest {
			t.Errorf("POST %s: %d %v", what, status, body)
		}
	}
	if status, body = c.exchange("POST", base, ten.Token, map[string]any{}, false); errorDetails(body)["email"] != "email or externalId is required" {
		t.Errorf("POST without email or externalId: %d %v", status, body)
	}
	if status, body = c.exchange("POST", base, ten.Token, map[string]any{"externalId": "x", "metadata": map[string]any{"k": strings.Repeat("v", 17000)}}, true); status != http.StatusBadRequest || errorDetails(body)["metadata"] == nil {
		t.Errorf("POST metadata over 16 KiB: %d %v", status, body)
	}
	// Duplicates: email case-insensitively, externalId exactly.
	if status, body = c.exchange("POST", base, ten.Token, map[string]any{"email": "ADA@example.com"}, true); status != http.StatusConflict || errorDetails(body)["email"] == nil {
		t.Errorf("POST a taken email: %d %v", status, body)
	}
	if status, body = c.exchange("POST", base, ten.Token, map[string]any{"externalId": "crm-2"}, true); status != http.StatusConflict || errorDetails(body)["externalId"] == nil {
		t.Errorf("POST a taken externalId: %d %v", status, body)
	}

	// List: search, paginate, newest first.
	status, body = c.exchange("GET", base+"?search=ADA", ten.Token, nil, true)
	if status != http.StatusOK || obj(body)["total"] != float64(1) || obj(visitors(body)[0])["id"] != adaID {
		t.Errorf("GET visitors?search: %d %v", status, body)
	}
	documentedKeys(t, "GET visitors", listSchema, body)
	status, body = c.exchange("GET", base+"?search=crm&limit=1&offset=1", ten.Token, nil, true)
	if got := obj(body); status != http.StatusOK || got["total"] != float64(2) || got["limit"] != float64(1) || got["offset"] != float64(1) || len(visitors(body)) != 1 || obj(visitors(body)[0])["id"] != adaID {
		t.Errorf("GET visitors page 2: %d %v", status, body)
	}
	sameKeys(t, "GET visitors page 2", listSchema, body)
	for _, q := range []string{"?limit=0", "?limit=201", "?offset=-1", "?offset=x", "?search=" + strings.Repeat("s", 201)} {
		if status, body = c.exchange("GET", base+q, ten.Token, nil, false); status != http.StatusBadRequest {
			t.Errorf("GET visitors%s: %d %v", q, status, body)
		}
	}

	// Read and update.
	status, body = c.exchange("GET", base+"/"+adaID, ten.Token, nil, true)
	if status != http.StatusOK || obj(body)["externalId"] != "crm-1" {
		t.Errorf("GET visitor: %d %v", status, body)
	}
	sameKeys(t, "GET visitor", detailSchema, body)
	status, body = c.exchange("PATCH", base+"/"+adaID, ten.Token, map[string]any{"displayName": nil, "phone": "", "metadata": nil, "id": "ignored", "memoryCount": 9}, true)
	if v := obj(body); status != http.StatusOK || v["displayName"] != nil || v["phone"] != nil || len(v["metadata"].(map[string]any)) != 0 || v["email"] != "ada@example.com" || v["memoryCount"] != float64(0) {
		t.Errorf("PATCH visitor: %d %v", status, body)
	}
	documentedKeys(t, "PATCH visitor", detailSchema, body)
	if status, body = c.exchange("PATCH", base+"/"+bobID, ten.Token, map[string]any{"externalId": nil}, true); status != http.StatusBadRequest || errorDetails(body)["email"] == nil {
		t.Errorf("PATCH clearing the only identifier: %d %v", status, body)
	}
	if status, body = c.exchange("PATCH", base+"/"+bobID, ten.Token, map[string]any{"email": "Ada@example.com"}, true); status != http.StatusConflict {
		t.Errorf("PATCH a taken email: %d %v", status, body)
	}
	if status, body = c.exchange("PATCH", base+"/"+bobID, ten.Token, map[string]any{"phone": "12"}, false); status != http.StatusBadRequest || errorDetails(body)["phone"] == nil {
		t.Errorf("PATCH a short phone: %d %v", status, body)
	}

	// Memory: upsert by key, values as text, bare array by key.
	mem := base + "/" + adaID + "/memory"
	memListSchema := responseSchema(t, doc, "GET", "/tenants/{slug}/visitors/{visitorId}/memory", 200)
	status, body = c.exchange("GET", mem, ten.Token, nil, true)
	if l, ok := body.([]any); status != http.StatusOK || !ok || len(l) != 0 {
		t.Fatalf("GET memory of a new visitor: %d %v", status, body)
	}
	for _, tc := range []struct {
		key   string
		value any
		want  string
	}{{"company", "Acme", "Acme"}, {"team_size", 12, "12"}, {"vip", true, "true"}, {"plan.tier-2", 1.5, "1.5"}, {"company", " Acme Ltd ", " Acme Ltd "}} {
		status, body = c.exchange("POST", mem, ten.Token, map[string]any{"key": tc.key, "value": tc.value}, true)
		if f := obj(body); status != http.StatusOK || f["key"] != tc.key || f["value"] != tc.want {
			t.Errorf("POST memory %s=%v: %d %v", tc.key, tc.value, status, body)
		}
		sameKeys(t, "POST memory", factSchema, body)
	}
	status, body = c.exchange("GET", mem, ten.Token, nil, true)
	if l, _ := body.([]any); status != http.StatusOK || len(l) != 4 || obj(l[0])["key"] != "company" || obj(l[1])["key"] != "plan.tier-2" {
		t.Errorf("GET memory: %d %v", status, body)
	}
	documentedKeys(t, "GET memory", memListSchema, body)
	if status, body = c.exchange("GET", base+"/"+adaID, ten.Token, nil, true); obj(body)["memoryCount"] != float64(4) {
		t.Errorf("memoryCount: %d %v", status, body)
	}
	status, body = c.exchange("GET", mem+"/company", ten.Token, nil, true)
	if status != http.StatusOK || obj(body)["value"] != " Acme Ltd " {
		t.Errorf("GET memory fact: %d %v", status, body)
	}
	sameKeys(t, "GET memory fact", factSchema, body)
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
		if status, body = c.exchange("POST", mem, ten.Token, req, false); status != http.StatusBadRequest {
			t.Errorf("POST memory %s: %d %v", what, status, body)
		}
	}
	status, body = c.exchange("DELETE", mem+"/vip", ten.Token, nil, true)
	if got := obj(body); status != http.StatusOK || got["deleted"] != true || got["key"] != "vip" {
		t.Errorf("DELETE memory fact: %d %v", status, body)
	}
	sameKeys(t, "DELETE memory fact", schema("MemoryFactDeletion"), body)
	for _, method := range []string{"GET", "DELETE"} {
		if status, body = c.exchange(method, mem+"/vip", ten.Token, nil, true); status != http.StatusNotFound || obj(body)["error"] != "Memory fact not found" {
			t.Errorf("%s a deleted fact: %d %v", method, status, body)
		}
	}

	// At most 100 facts per visitor; updating one of them still works.
	bobMem := base + "/" + bobID + "/memory"
	for i := 0; i < 100; i++ {
		if status, got := b.do(t, "POST", bobMem, ten.Token, map[string]any{"key": fmt.Sprintf("k%d", i), "value": "v"}); status != http.StatusOK {
			t.Fatalf("POST fact %d: %d %v", i, status, got)
		}
	}
	if status, body = c.exchange("POST", bobMem, ten.Token, map[string]any{"key": "one_more", "value": "v"}, true); status != http.StatusConflict {
		t.Errorf("POST the 101st fact: %d %v", status, body)
	}
	if status, body = c.exchange("POST", bobMem, ten.Token, map[string]any{"key": "k7", "value": "w"}, true); status != http.StatusOK {
		t.Errorf("POST an update at the limit: %d %v", status, body)
	}

	// Delete (with the memory), 404, 403, 413.
	status, body = c.exchange("DELETE", base+"/"+adaID, ten.Token, nil, true)
	if got := obj(body); status != http.StatusOK || got["deleted"] != true || got["id"] != adaID {
		t.Errorf("DELETE visitor: %d %v", status, body)
	}
	sameKeys(t, "DELETE visitor", schema("VisitorDeletion"), body)
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
		if status, body = c.exchange(tc.method, tc.path, ten.Token, req, true); status != http.StatusNotFound || obj(body)["error"] != "Visitor not found" {
			t.Errorf("%s %s of a deleted visitor: %d %v", tc.method, tc.path, status, body)
		}
	}
	other := b.newTenant(t, "scale")
	if status, body = c.exchange("GET", "/tenants/"+other.Slug+"/visitors/"+bobID, other.Token, nil, true); status != http.StatusNotFound {
		t.Errorf("GET another tenant's visitor: %d %v", status, body)
	}
	if status, body = c.exchange("POST", bobMem, b.token(t, ten.ID, auth.ScopeVisitorsRead), map[string]any{"key": "k", "value": "v"}, true); status != http.StatusForbidden || obj(body)["error"] != "Missing scope: visitors:write" {
		t.Errorf("POST memory with visitors:read: %d %v", status, body)
	}
	if status, body = c.exchange("GET", base, b.token(t, ten.ID, auth.ScopeToolsRead), nil, true); status != http.StatusForbidden {
		t.Errorf("GET visitors with tools:read: %d %v", status, body)
	}
	if status, body = c.exchange("POST", base, ten.Token, map[string]any{"externalId": "x", "displayName": strings.Repeat("d", 1<<20)}, false); status != http.StatusRequestEntityTooLarge {
		t.Errorf("POST large body: %d %v", status, body)
	}
}

// TestOpenAPIMCPSettingsResponses validates real MCP tools requests and responses against the document.
func TestOpenAPIMCPSettingsResponses(t *testing.T) {
	t.Parallel()
	_, c, schema := openAPIHarness(t, setup(t))
	b := c.b
	settings := schema("MCPToolsSettings")
	obj := func(body any) map[string]any { m, _ := body.(map[string]any); return m }
	builder := b.newTenant(t, "builder")
	path := "/tenants/" + builder.Slug + "/mcp-tools"

	status, body := c.exchange("GET", path, builder.Token, nil, true)
	if got := obj(body); status != http.StatusOK || got["mcpToolsUrl"] != nil || got["mcpToolsMaxTools"] != float64(10) || got["hasApiKey"] != false || got["plan"] != "builder" {
		t.Fatalf("GET mcp-tools: %d %v", status, body)
	}
	sameKeys(t, "GET mcp-tools", settings, body)

	// Save; an absent key or number keeps the stored one, null or "" removes the key.
	status, body = c.exchange("PUT", path, builder.Token, map[string]any{"mcpToolsUrl": "https://tools.example.com/mcp", "mcpToolsApiKey": "sk-1", "mcpToolsMaxTools": 5}, true)
	if got := obj(body); status != http.StatusOK || got["mcpToolsUrl"] != "https://tools.example.com/mcp" || got["hasApiKey"] != true || got["mcpToolsMaxTools"] != float64(5) {
		t.Fatalf("PUT mcp-tools: %d %v", status, body)
	}
	sameKeys(t, "PUT mcp-tools", settings, body)
	status, body = c.exchange("PUT", path, builder.Token, map[string]any{"mcpToolsUrl": "https://tools.example.com/v2", "plan": "scale"}, true)
	if got := obj(body); status != http.StatusOK || got["hasApiKey"] != true || got["mcpToolsMaxTools"] != float64(5) || got["plan"] != "builder" {
		t.Errorf("PUT keeping the key: %d %v", status, body)
	}
	status, body = c.exchange("PUT", path, builder.Token, map[string]any{"mcpToolsUrl": "https://tools.example.com/v2", "mcpToolsApiKey": nil, "mcpToolsMaxTools": nil}, true)
	if got := obj(body); status != http.StatusOK || got["hasApiKey"] != false || got["mcpToolsMaxTools"] != float64(5) {
		t.Errorf("PUT removing the key: %d %v", status, body)
	}
	documentedKeys(t, "PUT mcp-tools", settings, body)

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
		if status, body = c.exchange("PUT", path, builder.Token, req, false); status != http.StatusBadRequest {
			t.Errorf("PUT %s: %d %v", what, status, body)
		}
	}
	status, body = c.exchange("PUT", path, builder.Token, map[string]any{"mcpToolsUrl": "https://192.168.1.10/mcp"}, true)
	if msg := fmt.Sprint(errorDetails(body)["mcpToolsUrl"]); status != http.StatusBadRequest || !strings.HasPrefix(msg, "refused: ") {
		t.Errorf("PUT a private address: %d %v", status, body)
	}

	// Delete: back to the empty configuration.
	status, body = c.exchange("DELETE", path, builder.Token, nil, true)
	if got := obj(body); status != http.StatusOK || got["deleted"] != true || got["mcpToolsUrl"] != nil || got["mcpToolsMaxTools"] != float64(10) || got["hasApiKey"] != false {
		t.Errorf("DELETE mcp-tools: %d %v", status, body)
	}
	sameKeys(t, "DELETE mcp-tools", schema("MCPToolsDeletion"), body)
	if status, body = c.exchange("GET", path, builder.Token, nil, true); obj(body)["mcpToolsUrl"] != nil || obj(body)["mcpToolsMaxTools"] != float64(10) {
		t.Errorf("GET after DELETE: %d %v", status, body)
	}

	// Plans without MCP tools: readable, deletable, not savable (402 whatever the body).
	for _, plan := range []string{"free", "starter"} {
		ten := b.newTenant(t, plan)
		p := "/tenants/" + ten.Slug + "/mcp-tools"
		if status, body = c.exchange("GET", p, ten.Token, nil, true); status != http.StatusOK || obj(body)["plan"] != plan {
			t.Errorf("GET mcp-tools on %s: %d %v", plan, status, body)
		}
		status, body = c.exchange("PUT", p, ten.Token, map[string]any{"mcpToolsUrl": "https://tools.example.com/mcp"}, true)
		if got := obj(body); status != http.StatusPaymentRequired || got["code"] != "PLAN_REQUIRED" || errorDetails(body)["plan"] != plan || errorDetails(body)["requiredPlan"] != "builder" {
			t.Errorf("PUT mcp-tools on %s: %d %v", plan, status, body)
		}
		documentedKeys(t, "402", schema("PlanRequiredError"), body)
		if status, body = c.exchange("PUT", p, ten.Token, "not an object", false); status != http.StatusPaymentRequired {
			t.Errorf("PUT a string on %s: %d %v", plan, status, body)
		}
		if status, body = c.exchange("DELETE", p, ten.Token, nil, true); status != http.StatusOK {
			t.Errorf("DELETE mcp-tools on %s: %d %v", plan, status, body)
		}
	}

	// 403, 404, 413.
	if status, body = c.exchange("PUT", path, b.token(t, builder.ID, auth.ScopeSettingsRead), map[string]any{"mcpToolsUrl": "https://tools.example.com/mcp"}, true); status != http.StatusForbidden || obj(body)["error"] != "Missing scope: settings:write" {
		t.Errorf("PUT with settings:read: %d %v", status, body)
	}
	if status, body = c.exchange("GET", path, b.token(t, builder.ID, auth.ScopeToolsRead), nil, true); status != http.StatusForbidden {
		t.Errorf("GET with tools:read: %d %v", status, body)
	}
	if status, body = c.exchange("GET", "/tenants/no-such-tenant/mcp-tools", builder.Token, nil, true); status != http.StatusNotFound {
		t.Errorf("GET mcp-tools of no tenant: %d %v", status, body)
	}
	if status, body = c.exchange("PUT", path, builder.Token, map[string]any{"mcpToolsUrl": "https://tools.example.com/mcp", "mcpToolsApiKey": strings.Repeat("k", 1<<20)}, false); status != http.StatusRequestEntityTooLarge {
		t.Errorf("PUT large body: %d %v", status, body)
	}
}

// TestOpenAPICorpusSyncResponses validates corpus sync requests refused
// before any fetch against the document: the test server has no SSRF allow
// list, so every local address is refused.
func TestOpenAPICorpusSyncResponses(t *testing.T) {
	t.Parallel()
	_, c, _ := openAPIHarness(t, setup(t))
	b := c.b
	ten := b.newTenant(t, "scale")
	path := "/tenants/" + ten.Slug + "/corpus/sync"
	ok := "https://help.example.com/faq"
	tags := strings.Fields("a b c d e f g h i j k l m n o p q r s t u")
	for what, req := range map[string]any{
		"noURL":      map[string]any{"title": "t"},
		"nullURL":    map[string]any{"url": nil},
		"emptyURL":   map[string]any{"url": " "},
		"urlType":    map[string]any{"url": 5},
		"ftp":        map[string]any{"url": "ftp://example.com/x"},
		"relative":   map[string]any{"url": "example.com/faq"},
		"userinfo":   map[string]any{"url": "https://user:pw@example.com/faq"},
		"longURL":    map[string]any{"url": "https://example.com/" + strings.Repeat("p", 490)},
		"blankTitle": map[string]any{"url": ok, "title": " "},
		"longTitle":  map[string]any{"url": ok, "title": strings.Repeat("t", 256)},
		"priority":   map[string]any{"url": ok, "priority": 101},
		"locale":     map[string]any{"url": ok, "locale": "english"},
		"isActive":   map[string]any{"url": ok, "isActive": nil},
		"tags":       map[string]any{"url": ok, "tags": tags},
		"summary":    map[string]any{"url": ok, "summary": strings.Repeat("s", 501)},
		"string":     ok,
	} {
		if status, body := c.exchange("POST", path, ten.Token, req, false); status != http.StatusBadRequest {
			t.Errorf("POST sync %s: %d %v", what, status, body)
		}
	}
	if status, body := c.exchange("POST", path, ten.Token, map[string]any{"url": ok, "segmentSlug": "nope"}, true); status != http.StatusBadRequest || errorDetails(body)["segmentSlug"] == nil {
		t.Errorf("POST sync to an unknown segment: %d %v", status, body)
	}
	if status, body := c.exchange("POST", path, ten.Token, map[string]any{"url": "https://user@example.com/"}, false); errorDetails(body)["url"] != "must not contain a user name or password" {
		t.Errorf("POST sync with a user name: %d %v", status, body)
	}
	for _, u := range []string{"http://127.0.0.1:1/faq", "http://localhost:1/faq", "https://[::1]/faq"} {
		status, body := c.exchange("POST", path, ten.Token, map[string]any{"url": u}, true)
		if msg := fmt.Sprint(errorDetails(body)["url"]); status != http.StatusBadRequest || !strings.HasPrefix(msg, "refused: ") || body.(map[string]any)["error"] != msg {
			t.Errorf("POST sync of %s: %d %v", u, status, body)
		}
	}
	if status, body := c.exchange("POST", path, b.token(t, ten.ID, auth.ScopeCorpusRead), map[string]any{"url": ok}, true); status != http.StatusForbidden {
		t.Errorf("POST sync with corpus:read: %d %v", status, body)
	}
	if status, body := c.exchange("POST", path, ten.Token, map[string]any{"url": ok, "summary": strings.Repeat("s", 1<<20)}, false); status != http.StatusRequestEntityTooLarge {
		t.Errorf("POST sync large body: %d %v", status, body)
	}
}

// TestOpenAPICorpusSyncFetchResponses validates corpus syncs that fetch
// pages (from a local site, allowed by PARLEY_SSRF_ALLOW) against the document.
func TestOpenAPICorpusSyncFetchResponses(t *testing.T) {
	t.Parallel()
	_, c, schema := openAPIHarness(t, setupSync(t))
	b := c.b
	site := newTestSite(t)
	ten := b.newTenant(t, "scale")
	path := "/tenants/" + ten.Slug + "/corpus/sync"
	result := schema("CorpusSyncResult")
	entry := func(body any) map[string]any {
		m, _ := body.(map[string]any)
		e, _ := m["corpus"].(map[string]any)
		return e
	}
	if status, body := c.exchange("POST", "/tenants/"+ten.Slug+"/segments", ten.Token, map[string]any{"name": "Pros", "systemPrompt": "p"}, true); status != http.StatusCreated {
		t.Fatalf("POST segment: %d %v", status, body)
	}

	// Create, then refresh the entry of the same URL.
	page := site.set("/shipping", sitePage{contentType: "text/html; charset=utf-8", body: article("Shipping", "Orders ship within two working days.")})
	status, body := c.exchange("POST", path, ten.Token, map[string]any{"url": page, "segmentSlug": "pros", "tags": []string{"shipping"}, "priority": 6}, true)
	e := entry(body)
	if status != http.StatusCreated || body.(map[string]any)["created"] != true || e["source"] != "url" || e["sourceUrl"] != page || e["title"] != "Shipping" || e["priority"] != float64(6) {
		t.Fatalf("POST sync: %d %v", status, body)
	}
	if s, _ := e["sync"].(map[string]any); s["syncedAt"] == nil || s["lastError"] != nil {
		t.Errorf("POST sync: sync %v", e["sync"])
	}
	sameKeys(t, "POST sync", result, body)
	documentedKeys(t, "POST sync", result, body)
	id := e["id"].(string)
	status, body = c.exchange("POST", path, ten.Token, map[string]any{"url": page, "title": "Delivery"}, true)
	if e := entry(body); status != http.StatusOK || body.(map[string]any)["created"] != false || e["id"] != id || e["title"] != "Delivery" || e["segment"] == nil {
		t.Errorf("POST sync again: %d %v", status, body)
	}
	documentedKeys(t, "POST sync again", result, body)

	// A failed refresh keeps the content and records the error on the entry.
	site.set("/shipping", sitePage{status: http.StatusInternalServerError, contentType: "text/plain", body: "down"})
	if status, body = c.exchange("POST", path, ten.Token, map[string]any{"url": page}, true); status != http.StatusUnprocessableEntity {
		t.Errorf("POST sync of a failing page: %d %v", status, body)
	}
	status, body = c.exchange("GET", "/tenants/"+ten.Slug+"/corpus/"+id, ten.Token, nil, true)
	if s, _ := entry(body)["sync"].(map[string]any); status != http.StatusOK || s["lastError"] == nil || s["lastErrorAt"] == nil || s["syncedAt"] == nil {
		t.Errorf("GET entry after a failed refresh: %d %v", status, body)
	}
	documentedKeys(t, "GET synced entry", schema("CorpusEnvelope"), body)
	status, body = c.exchange("GET", "/tenants/"+ten.Slug+"/corpus", ten.Token, nil, true)
	documentedKeys(t, "GET corpus with a synced entry", schema("CorpusList"), body)

	// Pages that cannot become entries, and remote failures.
	for _, tc := range []struct {
		what   string
		page   sitePage
		status int
	}{
		{"image", sitePage{contentType: "image/png", body: "\x89PNG\r\n\x1a\n" + strings.Repeat("\x00", 64)}, http.StatusUnprocessableEntity},
		{"empty", sitePage{contentType: "text/plain", body: "   \n  "}, http.StatusUnprocessableEntity},
		{"long", sitePage{contentType: "text/plain", body: strings.Repeat("word ", 12000)}, http.StatusUnprocessableEntity},
		{"big", sitePage{contentType: "text/plain", body: strings.Repeat("x", 10<<20+1)}, http.StatusRequestEntityTooLarge},
		{"missing", sitePage{status: http.StatusNotFound, contentType: "text/html", body: "gone"}, http.StatusUnprocessableEntity},
		{"loop", sitePage{status: http.StatusFound, body: "/loop"}, http.StatusUnprocessableEntity},
	} {
		u := site.set("/"+tc.what, tc.page)
		status, body := c.exchange("POST", path, ten.Token, map[string]any{"url": u}, true)
		if m, _ := body.(map[string]any); status != tc.status || m["error"] == "" {
			t.Errorf("POST sync of %s: %d %v", tc.what, status, body)
		}
	}

	// The corpus limit applies when a sync creates an entry, not when it refreshes one.
	free := b.newTenant(t, "free") // 50 entries
	freePath := "/tenants/" + free.Slug + "/corpus/sync"
	faq := site.set("/faq", sitePage{contentType: "text/markdown", body: "# FAQ\n\nAsk us anything."})
	if status, body = c.exchange("POST", freePath, free.Token, map[string]any{"url": faq}, true); status != http.StatusCreated {
		t.Fatalf("POST sync on the free plan: %d %v", status, body)
	}
	var fill []any
	for i := 0; i < 49; i++ {
		fill = append(fill, map[string]any{"externalId": fmt.Sprint(i), "title": "t", "content": "c"})
	}
	if status, got := b.do(t, "POST", "/tenants/"+free.Slug+"/corpus/bulk", free.Token, map[string]any{"entries": fill}); status != http.StatusOK || got["created"] != float64(49) {
		t.Fatalf("fill the free corpus: %d %v", status, got)
	}
	other := site.set("/other", sitePage{contentType: "text/plain", body: "Other page."})
	status, body = c.exchange("POST", freePath, free.Token, map[string]any{"url": other}, true)
	if status != http.StatusTooManyRequests || errorDetails(body)["limit"] != float64(50) {
		t.Errorf("POST sync over the corpus limit: %d %v", status, body)
	}
	documentedKeys(t, "429", schema("CorpusLimitError"), body)
	if site.fetches("/other") != 0 {
		t.Errorf("a sync over the limit fetched the page")
	}
	if status, body = c.exchange("POST", freePath, free.Token, map[string]any{"url": faq}, true); status != http.StatusOK {
		t.Errorf("POST sync refresh at the corpus limit: %d %v", status, body)
	}
}

// TestOpenAPICorpusSearchCapped validates a corpus search matching more than
// 500 entries, whose total is capped, against the document.
func TestOpenAPICorpusSearchCapped(t *testing.T) {
	t.Parallel()
	_, c, schema := openAPIHarness(t, setup(t))
	b := c.b
	ten := b.newTenant(t, "scale")
	if _, err := b.db.Pool().Exec(t.Context(), `INSERT INTO corpus_entries (tenant_id, title, content, priority)
		SELECT $1, 'Entry ' || g, 'common word', g % 100 FROM generate_series(1, 1001) g`, ten.ID); err != nil {
		t.Fatal(err)
	}
	status, body := c.exchange("GET", "/tenants/"+ten.Slug+"/corpus?search=common&limit=5&page=3", ten.Token, nil, true)
	p, _ := body.(map[string]any)["pagination"].(map[string]any)
	if status != http.StatusOK || p["total"] != float64(500) || p["totalCapped"] != true || p["totalPages"] != float64(100) || len(body.(map[string]any)["corpus"].([]any)) != 5 {
		t.Fatalf("GET a capped search: %d %v", status, p)
	}
	documentedKeys(t, "GET a capped search", schema("CorpusList"), body)
	sameKeys(t, "GET a capped search", schema("CorpusList"), body)
}

// TestErrorStructsMatchOpenAPI is handlers' TestResponseStructsMatchOpenAPI
// for the error bodies, which this package writes: every JSON member is a
// property of the schema, every required property a member.
func TestErrorStructsMatchOpenAPI(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	for _, tc := range []struct {
		schema string
		typ    reflect.Type
	}{
		{"Error", reflect.TypeFor[errorBody]()},
		{"ChatLimitError", reflect.TypeFor[limitBody]()},
	} {
		s := doc.Components.Schemas[tc.schema].Value
		props, members := schemaProps(s), jsonNames(tc.typ)
		for _, m := range members {
			if props[m] == nil {
				t.Errorf("%s.%s is not a property of %s", tc.typ, m, tc.schema)
			}
		}
		for _, r := range s.Required {
			if !slices.Contains(members, r) {
				t.Errorf("%s requires %s, which %s does not have", tc.schema, r, tc.typ)
			}
		}
	}
}
