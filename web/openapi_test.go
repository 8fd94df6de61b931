package web_test

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/handlers/public"
	"github.com/parley/parley/web"
	"github.com/parley/parley/web/webtest"
)

func TestOpenAPIDocument(t *testing.T) {
	t.Parallel()
	doc := webtest.LoadOpenAPI(t)
	if err := doc.Validate(t.Context()); err != nil {
		t.Fatalf("openapi.json is not a valid OpenAPI document: %v", err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi = %q, want 3.1.0", doc.OpenAPI)
	}
	if doc.Info.Version != "2.1.0" || doc.Info.Title != "Parley" {
		t.Errorf("info = %q %q, want Parley 2.1.0", doc.Info.Title, doc.Info.Version)
	}

	// The security schemes this build serves: ak_ tokens and OAuth access
	// tokens as Bearer, legacy keys in X-API-Key, and the OAuth flow.
	schemes := doc.Components.SecuritySchemes
	if s := schemes["bearerAuth"]; s == nil || s.Value.Type != "http" || s.Value.Scheme != "bearer" {
		t.Errorf("bearerAuth is not an http bearer scheme")
	}
	if s := schemes["legacyApiKey"]; s == nil || s.Value.Type != "apiKey" || s.Value.In != "header" || s.Value.Name != "X-API-Key" {
		t.Errorf("legacyApiKey is not an apiKey in header X-API-Key")
	}
	if got := webtest.SortedKeys(schemes); !slices.Equal(got, []string{"bearerAuth", "legacyApiKey", "metricsToken", "oauth2", "operatorToken"}) {
		t.Errorf("security schemes = %v, want bearerAuth, legacyApiKey, metricsToken, oauth2 and operatorToken", got)
	}
	for _, name := range []string{"operatorToken", "metricsToken"} {
		if s := schemes[name]; s == nil || s.Value.Type != "http" || s.Value.Scheme != "bearer" {
			t.Errorf("%s is not an http bearer scheme", name)
		}
	}
	if s := schemes["oauth2"]; s == nil || s.Value.Type != "oauth2" || s.Value.Flows == nil || s.Value.Flows.AuthorizationCode == nil {
		t.Errorf("oauth2 is not an OAuth authorization code flow")
	} else {
		f := s.Value.Flows.AuthorizationCode
		if f.AuthorizationURL != "/oauth/authorize" || f.TokenURL != "/oauth/token" || f.RefreshURL != "/oauth/token" {
			t.Errorf("oauth2 flow URLs = %q %q %q", f.AuthorizationURL, f.TokenURL, f.RefreshURL)
		}
		if got := slices.Sorted(maps.Keys(f.Scopes)); !slices.Equal(got, slices.Sorted(slices.Values(auth.OAuthScopes))) {
			t.Errorf("oauth2 scopes = %v, want %v", got, auth.OAuthScopes)
		}
	}
	for _, op := range []string{"GET /.well-known/oauth-authorization-server", "GET /.well-known/oauth-protected-resource",
		"GET /.well-known/oauth-protected-resource/mcp", "GET /.well-known/jwks.json", "POST /oauth/register",
		"GET /oauth/authorize", "POST /oauth/token", "POST /oauth/revoke"} {
		method, path, _ := strings.Cut(op, " ")
		if item := doc.Paths.Value(path); item == nil || item.GetOperation(method) == nil {
			t.Errorf("%s is not documented", op)
		}
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

		"GET /tenants/{slug}/synonyms":         auth.ScopeCorpusRead,
		"POST /tenants/{slug}/synonyms":        auth.ScopeCorpusWrite,
		"GET /tenants/{slug}/synonyms/{id}":    auth.ScopeCorpusRead,
		"PUT /tenants/{slug}/synonyms/{id}":    auth.ScopeCorpusWrite,
		"PATCH /tenants/{slug}/synonyms/{id}":  auth.ScopeCorpusWrite,
		"DELETE /tenants/{slug}/synonyms/{id}": auth.ScopeCorpusWrite,

		"GET /tenants/{slug}/tests":           auth.ScopeCorpusRead,
		"POST /tenants/{slug}/tests":          auth.ScopeCorpusWrite,
		"GET /tenants/{slug}/tests/runs":      auth.ScopeCorpusRead,
		"POST /tenants/{slug}/tests/runs":     auth.ScopeCorpusWrite,
		"GET /tenants/{slug}/tests/runs/{id}": auth.ScopeCorpusRead,
		"GET /tenants/{slug}/tests/{id}":      auth.ScopeCorpusRead,
		"PUT /tenants/{slug}/tests/{id}":      auth.ScopeCorpusWrite,
		"PATCH /tenants/{slug}/tests/{id}":    auth.ScopeCorpusWrite,
		"DELETE /tenants/{slug}/tests/{id}":   auth.ScopeCorpusWrite,

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

		"POST /tenants/{slug}/voice/setup":      auth.ScopeSettingsWrite,
		"PUT /tenants/{slug}/voice/setup":       auth.ScopeSettingsWrite,
		"GET /voice/{slug}/recordings/{callId}": auth.ScopeConversationsRead,

		"GET /tenants/{slug}/mcp-tools":    auth.ScopeSettingsRead,
		"PUT /tenants/{slug}/mcp-tools":    auth.ScopeSettingsWrite,
		"DELETE /tenants/{slug}/mcp-tools": auth.ScopeSettingsWrite,

		"GET /tenants/{slug}/refused-origins": auth.ScopeSettingsRead,

		"GET /tenants/{slug}/integrations/payments":       auth.ScopeSettingsRead,
		"PUT /tenants/{slug}/integrations/payments":       auth.ScopeSettingsWrite,
		"DELETE /tenants/{slug}/integrations/payments":    auth.ScopeSettingsWrite,
		"POST /tenants/{slug}/integrations/payments/test": auth.ScopeSettingsWrite,
		"GET /tenants/{slug}/integrations/calendar":       auth.ScopeSettingsRead,
		"PUT /tenants/{slug}/integrations/calendar":       auth.ScopeSettingsWrite,
		"DELETE /tenants/{slug}/integrations/calendar":    auth.ScopeSettingsWrite,
		"POST /tenants/{slug}/integrations/calendar/test": auth.ScopeSettingsWrite,

		"GET /tenants/{slug}/conversations":              auth.ScopeConversationsRead,
		"GET /tenants/{slug}/conversations/{id}":         auth.ScopeConversationsRead,
		"GET /tenants/{slug}/conversations/export":       auth.ScopeConversationsRead,
		"GET /tenants/{slug}/conversations/stats":        auth.ScopeStatsRead,
		"GET /tenants/{slug}/conversations/stats/export": auth.ScopeStatsRead,

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
			if path == "/mcp" {
				// The MCP server's scopes are per tool, inside the protocol.
				if op.Security == nil || len(*op.Security) != 3 || (*op.Security)[0]["oauth2"] == nil || (*op.Security)[1]["bearerAuth"] == nil ||
					(*op.Security)[2]["legacyApiKey"] == nil {
					t.Errorf("%s: security %v, want oauth2, bearerAuth and legacyApiKey", key, op.Security)
				}
				continue
			}
			// The operator API takes the operator's token, and only it.
			if strings.HasPrefix(path, "/operator/") {
				if op.Security == nil || len(*op.Security) != 1 || (*op.Security)[0]["operatorToken"] == nil {
					t.Errorf("%s: security %v, want operatorToken alone", key, op.Security)
				}
				continue
			}
			// The metrics take the metrics token, and only it.
			if path == "/metrics" {
				if op.Security == nil || len(*op.Security) != 1 || (*op.Security)[0]["metricsToken"] == nil {
					t.Errorf("%s: security %v, want metricsToken alone", key, op.Security)
				}
				continue
			}
			// A call's recording is read with the management API's tokens.
			managed := strings.HasPrefix(path, "/tenants/") || path == "/voice/{slug}/recordings/{callId}"
			if !managed {
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
			if len(*op.Security) != 3 {
				t.Errorf("%s: security %v, want bearerAuth, oauth2 and legacyApiKey", key, *op.Security)
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
	// Every operation of the table is documented; each write with a body
	// documents 413, and with a JSON body 415.
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
		if op := item.GetOperation(method); op.RequestBody != nil && op.RequestBody.Value.Content.Get("application/json") != nil && op.Responses.Status(415) == nil {
			t.Errorf("%s: no 415 response", key)
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
	doc := webtest.LoadOpenAPI(t)
	b := webtest.Setup(t)

	routes := map[string]bool{}
	for _, r := range b.Srv.Echo.Routes() {
		switch {
		case r.Method == echo.RouteNotFound || r.Method == "echo_route_any" || strings.HasSuffix(r.Path, "/*"):
			continue // Echo's own catch-all routes, added by groups with middleware
		case r.Path == "/" || r.Path == "/admin" || strings.HasPrefix(r.Path, "/admin/") || strings.HasPrefix(r.Path, "/static"):
			continue // the HTML dashboard and its assets are not part of the API
		case r.Path == web.DocsPath || slices.Contains(web.DocsAliases, r.Path):
			continue // the reference is a page about the API, not part of it
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
	for _, r := range webtest.SortedKeys(routes) {
		if !documented[r] {
			t.Errorf("route %s is not in openapi.json", r)
		}
	}
	for _, d := range webtest.SortedKeys(documented) {
		if !routes[d] {
			t.Errorf("openapi.json documents %s, which is not a route", d)
		}
	}
	if len(routes) < 6 {
		t.Errorf("only %d routes found: %v", len(routes), webtest.SortedKeys(routes))
	}
}

// TestOpenAPITenantUpdateMatchesPatch checks TenantUpdate against the fields
// the handler decodes, and against the writable fields of Tenant.
func TestOpenAPITenantUpdateMatchesPatch(t *testing.T) {
	t.Parallel()
	doc := webtest.LoadOpenAPI(t)
	update := doc.Components.Schemas["TenantUpdate"].Value
	tenant := doc.Components.Schemas["Tenant"].Value

	var decoded []string
	pt := reflect.TypeFor[parley.TenantInput]()
	for i := 0; i < pt.NumField(); i++ {
		if name, _, _ := strings.Cut(pt.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			decoded = append(decoded, name)
		}
	}
	sort.Strings(decoded)
	if got := webtest.SortedKeys(update.Properties); !slices.Equal(got, decoded) {
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

func TestOpenAPIServed(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	resp, err := b.TS.Client().Get(b.TS.URL + "/openapi.json")
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
	if !bytes.Equal(got, web.OpenAPI) {
		t.Errorf("served document differs from the embedded one (%d vs %d bytes)", len(got), len(web.OpenAPI))
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
	doc := webtest.LoadOpenAPI(t)
	b := webtest.Setup(t)
	ten := b.NewTenant(t, "scale")
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
			status, got := b.Do(t, method, url, b.Token(t, ten.ID, others...), body)
			if status != http.StatusForbidden || got["error"] != "Missing scope: "+scope {
				t.Errorf("%s %s with every scope but %s: %d %v", method, path, scope, status, got)
			}
			status, got = b.Do(t, method, url, b.Token(t, ten.ID, scope), body)
			if status == http.StatusForbidden || status == http.StatusUnauthorized {
				t.Errorf("%s %s with only %s: %d %v", method, path, scope, status, got)
			}
		}
	}
}

// TestOpenAPISegmentWriteMatchesDecoder checks the segment write schemas
// against the fields the handler decodes, and against Segment.
func TestOpenAPISegmentWriteMatchesDecoder(t *testing.T) {
	t.Parallel()
	doc := webtest.LoadOpenAPI(t)
	var decoded []string
	wt := reflect.TypeFor[parley.SegmentInput]()
	for i := 0; i < wt.NumField(); i++ {
		if name, _, _ := strings.Cut(wt.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			decoded = append(decoded, name)
		}
	}
	sort.Strings(decoded)
	segment := doc.Components.Schemas["Segment"].Value
	for _, name := range []string{"SegmentCreate", "SegmentUpdate"} {
		props := webtest.SchemaProps(doc.Components.Schemas[name].Value)
		if got := webtest.SortedKeys(props); !slices.Equal(got, decoded) {
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
	parley.ToolSubmitForm:       "SubmitFormToolConfig",
	parley.ToolGenerateQuote:    "GenerateQuoteToolConfig",
	parley.ToolBookMeeting:      "BookMeetingToolConfig",
	parley.ToolEscalateToHuman:  "EscalateToHumanToolConfig",
	parley.ToolRememberFact:     "RememberFactToolConfig",
	parley.ToolRecommendProduct: "RecommendProductToolConfig",
}

// TestOpenAPIToolConfigMatchesAgent checks the tool types and the per-type
// config schemas against the agent package: the members the decoder knows
// (it refuses any other), the defaults it fills in, and the normalised
// configs it stores, which must fit the read schemas.
func TestOpenAPIToolConfigMatchesAgent(t *testing.T) {
	t.Parallel()
	doc := webtest.LoadOpenAPI(t)
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
	if !slices.Equal(enum, parley.UserToolTypes) {
		t.Errorf("ToolType enum = %v, want %v", enum, parley.UserToolTypes)
	}
	for _, typ := range parley.SyntheticToolTypes {
		if !strings.Contains(toolType.Description, "`"+typ+"`") {
			t.Errorf("ToolType does not name the synthetic type %s", typ)
		}
	}

	// Members: each schema lists exactly the struct's JSON members, and every
	// schema of a config refuses other members, as the decoder does.
	structs := map[string]reflect.Type{
		"SubmitFormToolConfig":       reflect.TypeFor[parley.SubmitFormConfig](),
		"GenerateQuoteToolConfig":    reflect.TypeFor[parley.QuoteConfig](),
		"QuoteItem":                  reflect.TypeFor[parley.QuoteItem](),
		"QuoteOption":                reflect.TypeFor[parley.QuoteOption](),
		"BookMeetingToolConfig":      reflect.TypeFor[parley.MeetingConfig](),
		"EscalateToHumanToolConfig":  reflect.TypeFor[parley.EscalateConfig](),
		"RememberFactToolConfig":     reflect.TypeFor[parley.RememberConfig](),
		"RecommendProductToolConfig": reflect.TypeFor[parley.RecommendConfig](),
		"ToolFormField":              reflect.TypeFor[parley.FormField](),
	}
	for name, st := range structs {
		for _, n := range []string{name, name + "Input"} {
			if n == "ToolFormField" {
				n = "FormField" // the read form is the segment form's field
			}
			s := schema(n)
			if got, want := webtest.SortedKeys(s.Properties), jsonNames(st); !slices.Equal(got, want) {
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
		parley.ToolSubmitForm:    `{"fields": [{"name": "email", "label": "Email", "type": "email"}]}`,
		parley.ToolGenerateQuote: `{"currency": "EUR", "items": [{"name": "Website", "options": [{"name": "Hosting"}]}]}`,
	}
	for typ, name := range toolConfigSchemas {
		norm, problems := parley.ValidateToolConfig(typ, json.RawMessage(minimal[typ]))
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
		webtest.DocumentedKeys(t, typ+" config", schema(name), got)
		input := schema(name + "Input")
		for prop, p := range input.Properties {
			if p.Value.Default != nil && !reflect.DeepEqual(got[prop], p.Value.Default) {
				t.Errorf("%s.%s: documented default %v, the agent fills in %v", name+"Input", prop, p.Value.Default, got[prop])
			}
		}
		if typ == parley.ToolGenerateQuote {
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

// TestOpenAPICapabilities checks the documented capabilities of context
// discovery against the handler's: every one it can list, in its order.
func TestOpenAPICapabilities(t *testing.T) {
	t.Parallel()
	doc := webtest.LoadOpenAPI(t)
	enum := doc.Components.Schemas["ContextDiscovery"].Value.Properties["capabilities"].Value.Items.Value.Enum
	want := []any{public.CapabilityChat, public.CapabilityMCPTools, public.CapabilityVoice}
	for _, typ := range parley.UserToolTypes {
		want = append(want, strings.ToLower(typ))
	}
	if !slices.Equal(enum, want) {
		t.Errorf("capabilities enum = %v, want %v", enum, want)
	}
}
