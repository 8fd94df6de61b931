package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// openAPIRouter finds the documented operation of a request; built once per
// test binary from openAPIDoc.
var openAPIRouter = sync.OnceValues(func() (routers.Router, error) {
	doc, err := openAPIDoc()
	if err != nil {
		return nil, err
	}
	// The HTML pages of the OAuth authorization endpoint and the widget's
	// script are documented as strings; the validator reads them as such.
	openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.FileBodyDecoder)
	openapi3filter.RegisterBodyDecoder("text/javascript", openapi3filter.FileBodyDecoder)
	return gorillamux.NewRouter(doc)
})

// validatingTransport is the transport of every test server's client (see
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
// (/admin, and / which redirects to it), the static files (/static), CORS
// preflights (OPTIONS), and the body of SSE streams (text/event-stream:
// status and headers are still checked; the chat tests check each event
// with checkChatSchema).
type validatingTransport struct {
	tb   testing.TB
	base http.RoundTripper
}

// exemptPath reports whether path is outside the document.
func exemptPath(path string) bool {
	return path == "/" || path == "/admin" || strings.HasPrefix(path, "/admin/") || strings.HasPrefix(path, "/static/")
}

func (v *validatingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodOptions || exemptPath(req.URL.Path) {
		return v.base.RoundTrip(req)
	}
	router, err := openAPIRouter()
	if err != nil {
		v.tb.Errorf("openapi.json: %v", err)
		return v.base.RoundTrip(req)
	}
	resp, err := v.base.RoundTrip(req)
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
			v.tb.Errorf("%s: %d: Content-Type %q is not documented", where, resp.StatusCode, ct)
		}
		if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
			v.tb.Errorf("%s: %d response does not match openapi.json: %.800s", where, resp.StatusCode, err)
		}
		return resp, nil
	}
	body, err := readBody(resp)
	if err != nil {
		return nil, err
	}
	out.SetBodyBytes(body)
	// A JSON body is checked against its schema compiled once (docSchemas);
	// kin-openapi checks the status, the headers and any other body.
	pointer := jsonBodySchema(route, vreq.Method, resp.StatusCode, ct)
	out.Options.ExcludeResponseBody = pointer != ""
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		v.tb.Errorf("%s: %d response %.500s does not match openapi.json: %.800s", where, resp.StatusCode, body, err)
		return resp, nil
	}
	var decoded any // the body, decoded once for both checks
	if pointer != "" {
		if decoded, err = validateJSON(pointer, body); err != nil {
			v.tb.Errorf("%s: %d response %.500s does not match openapi.json: %.800s", where, resp.StatusCode, body, err)
			return resp, nil
		}
	}
	if r := route.Operation.Responses.Status(resp.StatusCode); r != nil && strings.HasPrefix(ct, "application/json") {
		if mt := r.Value.Content.Get(ct); mt != nil && mt.Schema != nil && (decoded != nil || json.Unmarshal(body, &decoded) == nil) {
			documentedKeys(v.tb, where+" "+http.StatusText(resp.StatusCode), mt.Schema.Value, decoded)
		}
	}
	return resp, nil
}

// checkUnknown checks the answer to a request that is no documented
// operation: the Error body of 404 (405 would do too), or 401 under
// /tenants/{slug}/, whose credentials are checked before routing.
func (v *validatingTransport) checkUnknown(where, path string, resp *http.Response) {
	body, err := readBody(resp)
	if err != nil {
		v.tb.Errorf("%s: %v", where, err)
		return
	}
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed:
	case resp.StatusCode == http.StatusUnauthorized && strings.HasPrefix(path, "/tenants/"):
	default:
		v.tb.Errorf("%s: not an operation of openapi.json, answered %d %.300s", where, resp.StatusCode, body)
		return
	}
	doc, _ := openAPIDoc()
	var decoded any
	if err := json.Unmarshal(body, &decoded); err != nil {
		v.tb.Errorf("%s: %d answer is not JSON: %.300s", where, resp.StatusCode, body)
		return
	}
	schema := doc.Components.Schemas["Error"].Value
	if err := schema.VisitJSON(decoded, openapi3.EnableJSONSchema2020()); err != nil {
		v.tb.Errorf("%s: %d answer %.300s is not an Error: %v", where, resp.StatusCode, body, err)
	}
	documentedKeys(v.tb, where, schema, decoded)
}

// jsonBodySchema is the JSON pointer, in openapi.json, of the schema of the
// JSON body a response with this status and Content-Type must have; "" when
// the body is not JSON, has no schema, or kin-openapi leaves it unchecked
// (a HEAD request, a 304 or a redirect).
func jsonBodySchema(route *routers.Route, method string, status int, ct string) string {
	if method == http.MethodHead || status >= 300 && status < 400 || !isJSON(ct) {
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
			return contentSchema(operationAt(route, method)+"/responses/"+code, ref.Ref, ref.Value.Content, ct)
		}
	}
	return ""
}

// jsonRequestSchema is the JSON pointer, in openapi.json, of the schema of a
// request's JSON body; "" when there is no body, it is not JSON, or the
// operation documents no schema for it (kin-openapi then checks it).
func jsonRequestSchema(route *routers.Route, method, ct string, body []byte) string {
	rb := route.Operation.RequestBody
	if len(body) == 0 || !isJSON(ct) || rb == nil || rb.Value == nil {
		return ""
	}
	return contentSchema(operationAt(route, method)+"/requestBody", rb.Ref, rb.Value.Content, ct)
}

// isJSON reports whether a Content-Type is JSON's.
func isJSON(ct string) bool {
	mediaType, _, _ := strings.Cut(ct, ";")
	mediaType = strings.TrimSpace(mediaType)
	return mediaType == "application/json" || strings.HasSuffix(mediaType, "+json")
}

// operationAt is the JSON pointer of route's operation in openapi.json.
func operationAt(route *routers.Route, method string) string {
	return "/paths/" + pointerToken(route.Path) + "/" + strings.ToLower(method)
}

// contentSchema is the JSON pointer of the schema content gives ct, content
// being that of the object at at (a response, a request body) or, when that
// object is a reference (ref, to #/components/...), of the object it names;
// "" when content has no schema for ct.
func contentSchema(at, ref string, content openapi3.Content, ct string) string {
	mt := content.Get(ct)
	if mt == nil || mt.Schema == nil {
		return ""
	}
	if ref != "" {
		at = strings.TrimPrefix(ref, "#")
	}
	for media, m := range content {
		if m == mt {
			return at + "/content/" + pointerToken(media) + "/schema"
		}
	}
	return ""
}

// pointerToken escapes one reference token of a JSON pointer (RFC 6901).
func pointerToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// docSchemas holds the schemas of openapi.json compiled by JSON Schema
// 2020-12, the dialect of OpenAPI 3.1, each once per test binary.
// kin-openapi's VisitJSON compiles a new validator from the schema on every
// call (santhosh-tekuri/jsonschema, the library used here): 12 s of the
// package's 89 s of CPU in a profile of the whole package. Formats are
// asserted as the library defines them (date, date-time, uri, uuid).
var docSchemas = sync.OnceValues(func() (*schemaSet, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(OpenAPI))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(openAPIURL, doc); err != nil {
		return nil, err
	}
	return &schemaSet{c: c, compiled: map[string]*jsonschema.Schema{}}, nil
})

// openAPIURL names openapi.json for the schema compiler; the document's
// references (#/components/schemas/...) resolve within it.
const openAPIURL = "urn:parley:openapi.json"

type schemaSet struct {
	mu       sync.Mutex // a Compiler is not safe for concurrent use
	c        *jsonschema.Compiler
	compiled map[string]*jsonschema.Schema
}

// validateJSON checks a JSON document against the schema at pointer in
// openapi.json, and returns it decoded (numbers as json.Number).
func validateJSON(pointer string, body []byte) (any, error) {
	set, err := docSchemas()
	if err != nil {
		return nil, fmt.Errorf("openapi.json: %w", err)
	}
	set.mu.Lock()
	schema, ok := set.compiled[pointer]
	if !ok {
		if schema, err = set.c.Compile(openAPIURL + "#" + pointer); err != nil {
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

// readBody reads resp's body and puts it back for the caller.
func readBody(resp *http.Response) ([]byte, error) {
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return body, err
}

// CloseIdleConnections lets httptest.Server.Close close the base transport's connections.
func (v *validatingTransport) CloseIdleConnections() {
	if c, ok := v.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// TestNoUncheckedClient keeps every test request on a validating client:
// Go's default client would bypass validatingTransport.
func TestNoUncheckedClient(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	pkg := "http" + "."
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, call := range []string{"DefaultClient", "Get(", "Post(", "PostForm(", "Head("} {
			if bytes.Contains(src, []byte(pkg+call)) {
				t.Errorf("%s uses %s%s: send requests through b.ts.Client()", f, pkg, call)
			}
		}
	}
}

// recordingTB keeps the failures validatingTransport reports, to test the
// checker itself.
type recordingTB struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// TestValidatingTransportChecksBodies: the JSON bodies checked against the
// schemas compiled once are checked for real, in a response of the
// operation's own and in one of #/components/responses, at the top and
// deeper, formats included; a fitting body passes.
func TestValidatingTransportChecksBodies(t *testing.T) {
	t.Parallel()
	type exchange struct {
		name, method, path string
		status             int    // the answer's status
		body               string // and body
		wantError          string // "" when the body fits
	}
	cases := []exchange{
		{"Fits", "GET", "/healthz", 200, `{"status":"ok"}`, ""},
		{"WrongType", "GET", "/healthz", 200, `{"status":5}`, "at '/status'"},
		{"NotInEnum", "GET", "/healthz", 200, `{"status":"fine"}`, "at '/status'"},
		{"NotJSON", "GET", "/healthz", 200, `{"status":`, "not JSON"},
		{"ComponentResponseFits", "GET", "/tenants/acme/webhooks", 403, `{"error":"Missing scope: settings:read","details":{"requiredScope":"settings:read"}}`, ""},
		{"ComponentResponseMissingMember", "GET", "/tenants/acme/webhooks", 403, `{"details":{"requiredScope":"settings:read"}}`, "missing property 'error'"},
		{"FormatFits", "DELETE", "/tenants/acme/webhooks/5f0c6a3e-2b1d-4c8e-9f7a-3d2e1c0b9a88", 200, `{"deleted":true,"id":"5f0c6a3e-2b1d-4c8e-9f7a-3d2e1c0b9a88"}`, ""},
		{"Format", "DELETE", "/tenants/acme/webhooks/5f0c6a3e-2b1d-4c8e-9f7a-3d2e1c0b9a88", 200, `{"deleted":true,"id":"5f0c6a3e"}`, "at '/id'"},
	}
	// The server answers each case's request with the case's status and body.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := slices.IndexFunc(cases, func(c exchange) bool { return c.name == r.URL.Query().Get("case") })
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(cases[i].status)
		_, _ = io.WriteString(w, cases[i].body)
	}))
	defer srv.Close()
	for _, tc := range cases {
		rec := &recordingTB{TB: t}
		client := &http.Client{Transport: &validatingTransport{tb: rec, base: srv.Client().Transport}}
		req, _ := http.NewRequest(tc.method, srv.URL+tc.path+"?case="+tc.name, nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		got := strings.Join(rec.errors, "\n")
		switch {
		case tc.wantError == "" && got != "":
			t.Errorf("%s: a fitting body was refused: %s", tc.name, got)
		case tc.wantError != "" && !strings.Contains(got, tc.wantError):
			t.Errorf("%s: want a failure naming %q, got %q", tc.name, tc.wantError, got)
		}
	}
}
