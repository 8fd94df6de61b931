package webtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime/multipart"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/knowledge"
	"github.com/parley/parley/handlers/handlerstest"
	"github.com/parley/parley/web"
)

// OpenAPIDoc is the embedded document, parsed once per test binary: some
// thirty tests of a binary read it (none changes it; kin-openapi's caches
// are safe for concurrent use). It is not validated here: web's
// TestOpenAPIDocument does that once for the suite, where each binary that
// validated it spent 0.8 s of CPU under the race detector, most of it on
// the examples (which web's TestOpenAPIExamplesMatchTheirSchemas checks too).
// The parse is handlerstest.ParseDoc's, which the wire types' checks of the
// same binary (handlerstest.MatchOpenAPI) share instead of parsing it again.
func OpenAPIDoc() (*openapi3.T, error) { return handlerstest.ParseDoc(web.OpenAPI) }

// LoadOpenAPI returns the embedded document, parsed; tests must not change
// it.
func LoadOpenAPI(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := OpenAPIDoc()
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// SchemaProps collects the properties of s and of its allOf members.
func SchemaProps(s *openapi3.Schema) map[string]*openapi3.SchemaRef {
	out := map[string]*openapi3.SchemaRef{}
	for _, sub := range s.AllOf {
		for k, v := range SchemaProps(sub.Value) {
			out[k] = v
		}
	}
	for k, v := range s.Properties {
		out[k] = v
	}
	return out
}

func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// OpenAPIChecker sends requests whose validity against the document a test
// states; the answers are validated by the client's ValidatingTransport.
type OpenAPIChecker struct {
	T *testing.T
	B *Bundle
}

// Exchange sends a request with body encoded as JSON, checks that the
// document accepts the request (wantValidRequest) or refuses it, and returns
// the status and decoded body.
func (c *OpenAPIChecker) Exchange(method, path, token string, body any, wantValidRequest bool) (int, any) {
	c.T.Helper()
	var raw []byte
	contentType := ""
	if body != nil {
		raw, _ = json.Marshal(body)
		contentType = "application/json"
	}
	return c.ExchangeRaw(method, path, token, contentType, raw, wantValidRequest)
}

// ExchangeRaw is exchange with a body already encoded as contentType (none when "").
func (c *OpenAPIChecker) ExchangeRaw(method, path, token, contentType string, raw []byte, wantValidRequest bool) (int, any) {
	t := c.T
	t.Helper()
	newReq := func() *http.Request {
		req, _ := http.NewRequest(method, c.B.TS.URL+path, bytes.NewReader(raw))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		return req
	}
	router, err := OpenAPIRouter()
	if err != nil {
		t.Fatal(err)
	}
	req := newReq()
	route, params, err := router.FindRoute(req)
	if err != nil {
		t.Fatalf("%s %s: not in the document: %v", method, path, err)
	}
	// A JSON body is checked against its schema compiled once (DocSchemas).
	pointer := JSONRequestSchema(route, method, contentType, raw)
	err = openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{
		Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, ExcludeRequestBody: pointer != ""},
	})
	if err == nil && pointer != "" {
		_, err = ValidateJSON(pointer, raw)
	}
	if wantValidRequest && err != nil {
		t.Errorf("%s %s: request does not validate: %.500s", method, path, err)
	}
	if !wantValidRequest && err == nil {
		t.Errorf("%s %s: invalid request body %.300s validates against the document", method, path, raw)
	}

	resp, err := c.B.TS.Client().Do(newReq())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	respBody, _ := io.ReadAll(resp.Body)
	var decoded any
	if err := json.Unmarshal(respBody, &decoded); err != nil {
		t.Fatalf("%s %s: bad JSON %q", method, path, respBody)
	}
	return resp.StatusCode, decoded
}

// SameKeys checks that an object has exactly the properties its schema
// declares: a field added to the code but not to the document (or the
// reverse) fails here even though the schemas stay open to additions.
func SameKeys(t *testing.T, where string, schema *openapi3.Schema, value any) {
	t.Helper()
	obj, ok := value.(map[string]any)
	if !ok {
		t.Errorf("%s: %T is not an object", where, value)
		return
	}
	props := SchemaProps(schema)
	if got, want := SortedKeys(obj), SortedKeys(props); !slices.Equal(got, want) {
		t.Errorf("%s: fields %v\ndocumented %v", where, got, want)
	}
	for name, p := range props {
		if len(SchemaProps(p.Value)) > 0 && obj[name] != nil {
			if _, isObj := obj[name].(map[string]any); isObj {
				SameKeys(t, where+"."+name, p.Value, obj[name])
			}
		}
	}
}

// ObjectShape collects the properties and required members of an object
// schema, through allOf and the object members of anyOf/oneOf (a nullable
// object is documented as anyOf [object, null]).
func ObjectShape(s *openapi3.Schema) (map[string]*openapi3.SchemaRef, []string) {
	props := map[string]*openapi3.SchemaRef{}
	var required []string
	add := func(sub *openapi3.Schema) {
		p, r := ObjectShape(sub)
		for k, v := range p {
			props[k] = v
		}
		required = append(required, r...)
	}
	for _, sub := range s.AllOf {
		add(sub.Value)
	}
	for _, sub := range append(slices.Clone(s.AnyOf), s.OneOf...) {
		if p, _ := ObjectShape(sub.Value); len(p) > 0 {
			add(sub.Value)
		}
	}
	for k, v := range s.Properties {
		props[k] = v
	}
	return props, append(required, s.Required...)
}

// Shape is one documented form of an object: its properties and required members.
type Shape struct {
	props    map[string]*openapi3.SchemaRef
	required []string
}

// fits reports whether every member of v is documented and every required member present.
func (s Shape) fits(v map[string]any) bool {
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

// ObjectShapes is ObjectShape for unions: a schema whose anyOf/oneOf has
// several object members (such as a tool's config, one object per tool type)
// has one shape per member, each with the schema's own and allOf members;
// any other schema has the one shape ObjectShape gives.
func ObjectShapes(s *openapi3.Schema) []Shape {
	var members []*openapi3.Schema
	for _, sub := range append(slices.Clone(s.AnyOf), s.OneOf...) {
		if p, _ := ObjectShape(sub.Value); len(p) > 0 {
			members = append(members, sub.Value)
		}
	}
	if len(members) < 2 {
		p, r := ObjectShape(s)
		return []Shape{{p, r}}
	}
	var shapes []Shape
	for _, m := range members {
		sh := Shape{props: map[string]*openapi3.SchemaRef{}}
		for _, sub := range append(slices.Clone(s.AllOf), &openapi3.SchemaRef{Value: m}) {
			p, r := ObjectShape(sub.Value)
			maps.Copy(sh.props, p)
			sh.required = append(sh.required, r...)
		}
		maps.Copy(sh.props, s.Properties)
		sh.required = append(sh.required, s.Required...)
		shapes = append(shapes, sh)
	}
	return shapes
}

// DocumentedKeys is SameKeys for schemas with optional members, applied to
// every nested object and array item: each field present is documented, each
// required member is present. An object documented as a union of object
// shapes must fit one of them, and is checked against the first it fits.
func DocumentedKeys(t testing.TB, where string, schema *openapi3.Schema, value any) {
	t.Helper()
	switch v := value.(type) {
	case map[string]any:
		shapes := ObjectShapes(schema)
		props, required := shapes[0].props, shapes[0].required
		if len(shapes) > 1 {
			i := slices.IndexFunc(shapes, func(s Shape) bool { return s.fits(v) })
			if i < 0 {
				t.Errorf("%s: %v fits none of the %d documented alternatives", where, v, len(shapes))
				return
			}
			props, required = shapes[i].props, shapes[i].required
		}
		if ap := schema.AdditionalProperties; len(props) == 0 || (ap.Has != nil && *ap.Has) || ap.Schema != nil {
			return // a free-form object, or one open to members it does not list
		}
		for _, k := range SortedKeys(v) {
			p, ok := props[k]
			if !ok {
				t.Errorf("%s: field %s is not documented", where, k)
				continue
			}
			if v[k] != nil {
				DocumentedKeys(t, where+"."+k, p.Value, v[k])
			}
		}
		for _, k := range required {
			if _, ok := v[k]; !ok {
				t.Errorf("%s: required field %s is missing from %v", where, k, v)
			}
		}
	case []any:
		if items := handlerstest.ArrayItems(schema); items != nil {
			for i, x := range v {
				DocumentedKeys(t, fmt.Sprintf("%s[%d]", where, i), items, x)
			}
		}
	}
}

// MultipartFile encodes content as a multipart/form-data body with one file part.
func MultipartFile(part, filename, content string) (string, []byte) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile(part, filename)
	_, _ = io.WriteString(fw, content)
	_ = mw.Close()
	return mw.FormDataContentType(), buf.Bytes()
}

func ErrorDetails(body any) map[string]any {
	m, _ := body.(map[string]any)
	d, _ := m["details"].(map[string]any)
	return d
}

// OpenAPIHarness loads the document and returns it with a checker on b and a schema lookup.
func OpenAPIHarness(t *testing.T, b *Bundle) (*openapi3.T, *OpenAPIChecker, func(string) *openapi3.Schema) {
	t.Helper()
	doc := LoadOpenAPI(t)
	return doc, &OpenAPIChecker{T: t, B: b}, func(name string) *openapi3.Schema {
		s := doc.Components.Schemas[name]
		if s == nil {
			t.Fatalf("no schema %s", name)
		}
		return s.Value
	}
}

// OpenAPIRouter finds the documented operation of a request; built once per
// test binary from OpenAPIDoc.
var OpenAPIRouter = sync.OnceValues(func() (routers.Router, error) {
	doc, err := OpenAPIDoc()
	if err != nil {
		return nil, err
	}
	// The HTML pages of the OAuth authorization endpoint and the widget's
	// script are documented as strings; the validator reads them as such.
	openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.FileBodyDecoder)
	openapi3filter.RegisterBodyDecoder("text/javascript", openapi3filter.FileBodyDecoder)
	return gorillamux.NewRouter(doc)
})

// ValidatingTransport is the transport of every test server's client (see
// bundle.serve): it checks each exchange against openapi.json and reports a
// mismatch as a failure of the test that started the server.
//
// Checked: the request is a documented operation (else the answer must be
// the documented 404 of an unknown path, or 401 under /tenants/{slug}/); the
// response status is documented for the operation, the headers it declares
// are present and valid, the Content-Type is declared, and a JSON body fits
// the schema and has no member the schema does not document.
//
// Request bodies and parameters are not checked: tests send invalid requests
// on purpose, and the server is deliberately more lenient than the document
// in places (it trims text, takes enum query values in any case, reports the
// bad items of a bulk request one by one, reads JSON sent without a
// Content-Type), so a request the document refuses may rightly succeed.
//
// Exempt, because the document does not describe them: the HTML dashboard
// (/admin, and / which redirects to it), the static files (/static), the
// API reference's page and the addresses that lead to it (/docs), CORS
// preflights (OPTIONS), and the body of SSE streams (text/event-stream:
// status and headers are still checked; the chat tests check each event
// with CheckChatSchema).
type ValidatingTransport struct {
	TB   testing.TB
	Base http.RoundTripper
}

// ExemptPath reports whether path is outside the document.
func ExemptPath(path string) bool {
	return path == "/" || path == "/admin" || strings.HasPrefix(path, "/admin/") || strings.HasPrefix(path, "/static/") ||
		path == web.DocsPath || slices.Contains(web.DocsAliases, path)
}

func (v *ValidatingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodOptions || ExemptPath(req.URL.Path) {
		return v.Base.RoundTrip(req)
	}
	router, err := OpenAPIRouter()
	if err != nil {
		v.TB.Errorf("openapi.json: %v", err)
		return v.Base.RoundTrip(req)
	}
	resp, err := v.Base.RoundTrip(req)
	if err != nil {
		return nil, err
	}

	// The route of the request as the server sees it: trailing slash removed.
	vreq := req.Clone(context.Background())
	vreq.Body = http.NoBody
	if p := vreq.URL.Path; len(p) > 1 {
		vreq.URL.Path = strings.TrimRight(p, "/")
	}
	where := req.Method + " " + req.URL.RequestURI()
	route, params, err := router.FindRoute(vreq)
	if err != nil {
		v.checkUnknown(where, vreq.URL.Path, resp)
		return resp, nil
	}
	in := &openapi3filter.RequestValidationInput{Request: vreq, PathParams: params, Route: route}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 resp.StatusCode,
		Header:                 resp.Header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	ct := resp.Header.Get("Content-Type")
	if strings.HasPrefix(ct, "text/event-stream") {
		// Streamed: leave the body to the caller.
		out.Options.ExcludeResponseBody = true
		if r := route.Operation.Responses.Status(resp.StatusCode); r != nil && r.Value.Content.Get(ct) == nil {
			v.TB.Errorf("%s: %d: Content-Type %q is not documented", where, resp.StatusCode, ct)
		}
		if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
			v.TB.Errorf("%s: %d response does not match openapi.json: %.800s", where, resp.StatusCode, err)
		}
		return resp, nil
	}
	body, err := ReadBody(resp)
	if err != nil {
		return nil, err
	}
	out.SetBodyBytes(body)
	// A JSON body is checked against its schema compiled once (DocSchemas);
	// kin-openapi checks the status, the headers and any other body.
	pointer := JSONBodySchema(route, vreq.Method, resp.StatusCode, ct)
	out.Options.ExcludeResponseBody = pointer != ""
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		v.TB.Errorf("%s: %d response %.500s does not match openapi.json: %.800s", where, resp.StatusCode, body, err)
		return resp, nil
	}
	var decoded any // the body, decoded once for both checks
	if pointer != "" {
		if decoded, err = ValidateJSON(pointer, body); err != nil {
			v.TB.Errorf("%s: %d response %.500s does not match openapi.json: %.800s", where, resp.StatusCode, body, err)
			return resp, nil
		}
	}
	if r := route.Operation.Responses.Status(resp.StatusCode); r != nil && strings.HasPrefix(ct, "application/json") {
		if mt := r.Value.Content.Get(ct); mt != nil && mt.Schema != nil && (decoded != nil || json.Unmarshal(body, &decoded) == nil) {
			DocumentedKeys(v.TB, where+" "+http.StatusText(resp.StatusCode), mt.Schema.Value, decoded)
		}
	}
	return resp, nil
}

// checkUnknown checks the answer to a request that is no documented
// operation: the Error body of 404 (405 would do too), or 401 under
// /tenants/{slug}/, whose credentials are checked before routing.
func (v *ValidatingTransport) checkUnknown(where, path string, resp *http.Response) {
	body, err := ReadBody(resp)
	if err != nil {
		v.TB.Errorf("%s: %v", where, err)
		return
	}
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed:
	case resp.StatusCode == http.StatusUnauthorized && strings.HasPrefix(path, "/tenants/"):
	default:
		v.TB.Errorf("%s: not an operation of openapi.json, answered %d %.300s", where, resp.StatusCode, body)
		return
	}
	doc, _ := OpenAPIDoc()
	var decoded any
	if err := json.Unmarshal(body, &decoded); err != nil {
		v.TB.Errorf("%s: %d answer is not JSON: %.300s", where, resp.StatusCode, body)
		return
	}
	schema := doc.Components.Schemas["Error"].Value
	if err := schema.VisitJSON(decoded, openapi3.EnableJSONSchema2020()); err != nil {
		v.TB.Errorf("%s: %d answer %.300s is not an Error: %v", where, resp.StatusCode, body, err)
	}
	DocumentedKeys(v.TB, where, schema, decoded)
}

// JSONBodySchema is the JSON pointer, in openapi.json, of the schema of the
// JSON body a response with this status and Content-Type must have; "" when
// the body is not JSON, has no schema, or kin-openapi leaves it unchecked
// (a HEAD request, a 304 or a redirect).
func JSONBodySchema(route *routers.Route, method string, status int, ct string) string {
	if method == http.MethodHead || status >= 300 && status < 400 || !IsJSON(ct) {
		return ""
	}
	responses := route.Operation.Responses
	ref := responses.Status(status)
	if ref == nil {
		ref = responses.Default()
	}
	if ref == nil || ref.Value == nil {
		return ""
	}
	for code, r := range responses.Map() {
		if r == ref {
			return ContentSchema(OperationAt(route, method)+"/responses/"+code, ref.Ref, ref.Value.Content, ct)
		}
	}
	return ""
}

// JSONRequestSchema is the JSON pointer, in openapi.json, of the schema of a
// request's JSON body; "" when there is no body, it is not JSON, or the
// operation documents no schema for it (kin-openapi then checks it).
func JSONRequestSchema(route *routers.Route, method, ct string, body []byte) string {
	rb := route.Operation.RequestBody
	if len(body) == 0 || !IsJSON(ct) || rb == nil || rb.Value == nil {
		return ""
	}
	return ContentSchema(OperationAt(route, method)+"/requestBody", rb.Ref, rb.Value.Content, ct)
}

// IsJSON reports whether a Content-Type is JSON's.
func IsJSON(ct string) bool {
	mediaType, _, _ := strings.Cut(ct, ";")
	mediaType = strings.TrimSpace(mediaType)
	return mediaType == "application/json" || strings.HasSuffix(mediaType, "+json")
}

// OperationAt is the JSON pointer of route's operation in openapi.json.
func OperationAt(route *routers.Route, method string) string {
	return "/paths/" + PointerToken(route.Path) + "/" + strings.ToLower(method)
}

// ContentSchema is the JSON pointer of the schema content gives ct, content
// being that of the object at at (a response, a request body) or, when that
// object is a reference (ref, to #/components/...), of the object it names;
// "" when content has no schema for ct.
func ContentSchema(at, ref string, content openapi3.Content, ct string) string {
	mt := content.Get(ct)
	if mt == nil || mt.Schema == nil {
		return ""
	}
	if ref != "" {
		at = strings.TrimPrefix(ref, "#")
	}
	for media, m := range content {
		if m == mt {
			return at + "/content/" + PointerToken(media) + "/schema"
		}
	}
	return ""
}

// PointerToken escapes one reference token of a JSON pointer (RFC 6901).
func PointerToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// DocSchemas holds the schemas of openapi.json compiled by JSON Schema
// 2020-12, the dialect of OpenAPI 3.1, each once per test binary.
// kin-openapi's VisitJSON compiles a new validator from the schema on every
// call (santhosh-tekuri/jsonschema, the library used here): 12 s of the
// package's 89 s of CPU in a profile of the whole package. Formats are
// asserted as the library defines them (date, date-time, uri, uuid).
var DocSchemas = sync.OnceValues(func() (*SchemaSet, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(web.OpenAPI))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(OpenAPIURL, doc); err != nil {
		return nil, err
	}
	return &SchemaSet{c: c, compiled: map[string]*jsonschema.Schema{}}, nil
})

// OpenAPIURL names openapi.json for the schema compiler; the document's
// references (#/components/schemas/...) resolve within it.
const OpenAPIURL = "urn:parley:openapi.json"

type SchemaSet struct {
	mu       sync.Mutex // a Compiler is not safe for concurrent use
	c        *jsonschema.Compiler
	compiled map[string]*jsonschema.Schema
}

// ValidateJSON checks a JSON document against the schema at pointer in
// openapi.json, and returns it decoded (numbers as json.Number).
func ValidateJSON(pointer string, body []byte) (any, error) {
	set, err := DocSchemas()
	if err != nil {
		return nil, fmt.Errorf("openapi.json: %w", err)
	}
	set.mu.Lock()
	schema, ok := set.compiled[pointer]
	if !ok {
		if schema, err = set.c.Compile(OpenAPIURL + "#" + pointer); err != nil {
			set.mu.Unlock()
			return nil, fmt.Errorf("compiling the schema at %s: %w", pointer, err)
		}
		set.compiled[pointer] = schema
	}
	set.mu.Unlock()
	value, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("the body is not JSON: %w", err)
	}
	return value, schema.Validate(value)
}

// ReadBody reads resp's body and puts it back for the caller.
func ReadBody(resp *http.Response) ([]byte, error) {
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return body, err
}

// CloseIdleConnections lets httptest.Server.Close close the base transport's connections.
func (v *ValidatingTransport) CloseIdleConnections() {
	if c, ok := v.Base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// DecodeJSON decodes a response body into v, failing the test on bad JSON.
func DecodeJSON(t *testing.T, resp *http.Response, v any) {
	t.Helper()
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("decoding %s: %v", resp.Request.URL, err)
	}
}

// ListCorpus lists a tenant's corpus straight from the database, for assertions.
func ListCorpus(store *db.DB, ctx context.Context, tenantID string, q knowledge.CorpusQuery) ([]parley.CorpusEntry, int, error) {
	res, err := store.ListCorpus(ctx, tenantID, q)
	return res.Entries, res.Total, err
}
