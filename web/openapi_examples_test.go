package web_test

import (
	"encoding/json"
	"testing"

	"github.com/parley/parley/web"
	"github.com/parley/parley/web/webtest"
)

// TestOpenAPIExamplesMatchTheirSchemas: every example the document gives,
// of a schema (its examples) or of a request or response body (a media
// type's example or examples, inline or under components), conforms to its
// schema under JSON Schema 2020-12 with formats asserted (ValidateJSON). An
// integrator copies examples; one the schema refuses is a wrong contract.
func TestOpenAPIExamplesMatchTheirSchemas(t *testing.T) {
	t.Parallel()
	var doc map[string]any
	if err := json.Unmarshal(web.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	checked := 0
	check := func(where, schemaPointer string, example any) {
		t.Helper()
		body, err := json.Marshal(example)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		if _, err := webtest.ValidateJSON(schemaPointer, body); err != nil {
			t.Errorf("%s: the example does not match its schema: %v", where, err)
		}
	}
	// mediaType checks the examples of one media type object at pointer.
	mediaType := func(where, pointer string, mt map[string]any) {
		if _, ok := mt["schema"]; !ok {
			return
		}
		if ex, ok := mt["example"]; ok {
			check(where, pointer+"/schema", ex)
		}
		examples, _ := mt["examples"].(map[string]any)
		for name, e := range examples {
			if v, ok := e.(map[string]any)["value"]; ok {
				check(where+" example "+name, pointer+"/schema", v)
			}
		}
	}
	// content checks every media type of a request body or response at pointer.
	content := func(where, pointer string, holder map[string]any) {
		types, _ := holder["content"].(map[string]any)
		for ct, mt := range types {
			if m, ok := mt.(map[string]any); ok {
				mediaType(where+" "+ct, pointer+"/content/"+webtest.PointerToken(ct), m)
			}
		}
	}
	components, _ := doc["components"].(map[string]any)
	schemas, _ := components["schemas"].(map[string]any)
	for name, s := range schemas {
		examples, _ := s.(map[string]any)["examples"].([]any)
		for _, ex := range examples {
			check("schema "+name, "/components/schemas/"+webtest.PointerToken(name), ex)
		}
	}
	responses, _ := components["responses"].(map[string]any)
	for name, r := range responses {
		if m, ok := r.(map[string]any); ok {
			content("response "+name, "/components/responses/"+webtest.PointerToken(name), m)
		}
	}
	paths, _ := doc["paths"].(map[string]any)
	for path, item := range paths {
		ops, _ := item.(map[string]any)
		for method, op := range ops {
			o, ok := op.(map[string]any)
			if !ok {
				continue
			}
			at := "/paths/" + webtest.PointerToken(path) + "/" + method
			if rb, ok := o["requestBody"].(map[string]any); ok {
				content(method+" "+path+" request", at+"/requestBody", rb)
			}
			rs, _ := o["responses"].(map[string]any)
			for status, r := range rs {
				if m, ok := r.(map[string]any); ok {
					content(method+" "+path+" "+status, at+"/responses/"+status, m)
				}
			}
		}
	}
	if checked < 100 {
		t.Errorf("%d examples checked: the walk missed the document's examples", checked)
	}
	t.Logf("%d examples checked", checked)
}
