package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/labstack/echo/v4"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
)

// loadOpenAPI parses and validates the embedded document.
func loadOpenAPI(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPI)
	if err != nil {
		t.Fatalf("loading openapi.json: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi.json is not a valid OpenAPI document: %v", err)
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

	// The security schemes, and every REST scope in the OAuth flow.
	schemes := doc.Components.SecuritySchemes
	if s := schemes["bearerAuth"]; s == nil || s.Value.Type != "http" || s.Value.Scheme != "bearer" {
		t.Errorf("bearerAuth is not an http bearer scheme")
	}
	if s := schemes["legacyApiKey"]; s == nil || s.Value.Type != "apiKey" || s.Value.In != "header" || s.Value.Name != "X-API-Key" {
		t.Errorf("legacyApiKey is not an apiKey in header X-API-Key")
	}
	oauth := schemes["oauth2"]
	if oauth == nil || oauth.Value.Flows == nil || oauth.Value.Flows.AuthorizationCode == nil {
		t.Fatalf("oauth2 has no authorizationCode flow")
	}
	flow := oauth.Value.Flows.AuthorizationCode
	if flow.AuthorizationURL != "/oauth/authorize" || flow.TokenURL != "/oauth/token" || flow.RefreshURL != "/oauth/token" {
		t.Errorf("oauth2 URLs = %q %q %q", flow.AuthorizationURL, flow.TokenURL, flow.RefreshURL)
	}
	if got, want := sortedKeys(flow.Scopes), slices.Sorted(slices.Values(auth.RESTScopes)); !slices.Equal(got, want) {
		t.Errorf("oauth2 scopes = %v, want %v", got, want)
	}
	for scope, desc := range flow.Scopes {
		if strings.TrimSpace(desc) == "" || strings.Contains(desc, "\n") {
			t.Errorf("scope %s: description %q is not one line", scope, desc)
		}
	}
	scopeEnum := doc.Components.Schemas["Scope"].Value.Enum
	if len(scopeEnum) != len(auth.RESTScopes) {
		t.Errorf("Scope enum has %d values, want %d", len(scopeEnum), len(auth.RESTScopes))
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
			for _, name := range []string{"bearerAuth", "oauth2", "legacyApiKey"} {
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

	resp, err := http.DefaultClient.Do(newReq())
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
		"teaserText": strings.Repeat("x", 161), "visitorContextUrl": "http://insecure.example.com",
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

func TestOpenAPIServed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	resp, err := http.Get(b.ts.URL + "/openapi.json")
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
// required member is present.
func documentedKeys(t *testing.T, where string, schema *openapi3.Schema, value any) {
	t.Helper()
	switch v := value.(type) {
	case map[string]any:
		props, required := objectShape(schema)
		if len(props) == 0 {
			return // a free-form object
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
	documentedKeys(t, "GET corpus", listSchema, body)
	sameKeys(t, "GET corpus", listSchema, body)
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
