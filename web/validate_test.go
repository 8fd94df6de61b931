package web

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
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
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		v.tb.Errorf("%s: %d response %.500s does not match openapi.json: %.800s", where, resp.StatusCode, body, err)
		return resp, nil
	}
	if r := route.Operation.Responses.Status(resp.StatusCode); r != nil && strings.HasPrefix(ct, "application/json") {
		if mt := r.Value.Content.Get(ct); mt != nil && mt.Schema != nil {
			var decoded any
			if err := json.Unmarshal(body, &decoded); err == nil {
				documentedKeys(v.tb, where+" "+http.StatusText(resp.StatusCode), mt.Schema.Value, decoded)
			}
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
