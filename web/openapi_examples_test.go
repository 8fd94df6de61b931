package web_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/parley/parley/web"
	"github.com/parley/parley/web/webtest"
)

// TestOpenAPIExamplesMatchTheirSchemas: every example the document gives
// conforms to its schema under JSON Schema 2020-12, formats asserted: the
// examples of every schema and subschema (a component, a property, an item,
// a branch), and the example and examples of every media type (request and
// response bodies, of paths and webhooks, inline or under components),
// parameter and header, an examples entry given by $ref included. An
// integrator copies examples; one the schema refuses is a wrong contract.
// Each bad example fails the test with its JSON pointer in the document.
func TestOpenAPIExamplesMatchTheirSchemas(t *testing.T) {
	t.Parallel()
	bad, checked, err := checkExamples(web.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Error(b)
	}
	if checked < 600 {
		t.Errorf("%d examples checked: the walk missed the document's examples", checked)
	}
	t.Logf("%d examples checked", checked)

	// The check fails on a wrong example, wherever it is: a component
	// schema's, a property's, a parameter's, a media type's, a webhook's, one
	// given by $ref.
	t.Run("WrongExamplesFail", func(t *testing.T) {
		t.Parallel()
		var doc map[string]any
		if err := json.Unmarshal(web.OpenAPI, &doc); err != nil {
			t.Fatal(err)
		}
		at := func(pointer string) map[string]any {
			t.Helper()
			var node any = doc
			for _, tok := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
				tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
				m, ok := node.(map[string]any)
				if !ok {
					t.Fatalf("%s: no object at %q", pointer, tok)
				}
				node = m[tok]
			}
			m, ok := node.(map[string]any)
			if !ok {
				t.Fatalf("%s is not an object", pointer)
			}
			return m
		}
		at("/components/schemas/Error")["examples"] = []any{map[string]any{"error": 42}}
		at("/components/schemas/FormConfig/properties/intent")["examples"] = []any{strings.Repeat("x", 101)}
		at("/components/parameters/TenantSlug")["example"] = "Not A Slug"
		at("/paths/~1tenants~1{slug}/put/requestBody/content/application~1json")["example"] = map[string]any{"name": 7}
		at("/webhooks/submission.created/post/requestBody/content/application~1json")["examples"] = map[string]any{
			"wrong": map[string]any{"value": map[string]any{"event": "nothing.happened"}}}
		at("/components")["examples"] = map[string]any{"Wrong": map[string]any{"value": map[string]any{"error": false}}}
		at("/components/responses/InvalidText/content/application~1json")["examples"] = map[string]any{
			"byRef": map[string]any{"$ref": "#/components/examples/Wrong"}}
		raw, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		bad, _, err := checkExamples(raw)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{
			"/components/schemas/Error/examples/0:",
			"/components/schemas/FormConfig/properties/intent/examples/0:",
			"/components/parameters/TenantSlug/example:",
			"/paths/~1tenants~1{slug}/put/requestBody/content/application~1json/example:",
			"/webhooks/submission.created/post/requestBody/content/application~1json/examples/wrong/value:",
			"/components/responses/InvalidText/content/application~1json/examples/byRef (#/components/examples/Wrong)/value:",
		} {
			if !slices.ContainsFunc(bad, func(b string) bool { return strings.HasPrefix(b, want) }) {
				t.Errorf("no failure at %s; failures:\n%s", want, strings.Join(bad, "\n"))
			}
		}
		if len(bad) != 6 {
			t.Errorf("%d failures, want the 6 examples made wrong:\n%s", len(bad), strings.Join(bad, "\n"))
		}
	})
}

// The members of a schema (JSON Schema 2020-12) whose value is a value
// (valueKeys), a schema (schemaKeys), schemas by name (schemaMapKeys) or a
// list of schemas (schemaListKeys).
var (
	valueKeys      = []string{"examples", "example", "const", "default", "enum"}
	schemaKeys     = []string{"items", "not", "if", "then", "else", "contains", "additionalProperties", "propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema"}
	schemaMapKeys  = []string{"properties", "patternProperties", "$defs", "dependentSchemas"}
	schemaListKeys = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
)

// checkExamples validates every example of the OpenAPI document raw
// against its schema, and returns one line per bad example (its JSON
// pointer, then why) and how many examples it checked.
func checkExamples(raw []byte) (bad []string, checked int, err error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, 0, err
	}
	const url = "urn:parley:examples:openapi.json"
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(url, doc); err != nil {
		return nil, 0, err
	}
	var plain any // the document as encoding/json reads it, for the examples
	if err := json.Unmarshal(raw, &plain); err != nil {
		return nil, 0, err
	}
	check := func(where, schemaAt string, example any) {
		checked++
		s, err := c.Compile(url + "#" + schemaAt)
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s: its schema %s does not compile: %v", where, schemaAt, err))
			return
		}
		body, _ := json.Marshal(example)
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
		if err == nil {
			err = s.Validate(v)
		}
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s: the example does not match its schema %s: %v", where, schemaAt, err))
		}
	}
	components, _ := plain.(map[string]any)["components"].(map[string]any)
	namedExamples, _ := components["examples"].(map[string]any)
	// holder checks the example and examples of a media type, parameter or
	// header object (one with a schema) at pointer.
	holder := func(pointer string, o map[string]any) {
		if ex, ok := o["example"]; ok {
			check(pointer+"/example", pointer+"/schema", ex)
		}
		examples, _ := o["examples"].(map[string]any)
		for name, e := range examples {
			entry, _ := e.(map[string]any)
			where := pointer + "/examples/" + webtest.PointerToken(name)
			if ref, ok := entry["$ref"].(string); ok {
				target, _ := namedExamples[strings.TrimPrefix(ref, "#/components/examples/")].(map[string]any)
				if target == nil {
					bad = append(bad, fmt.Sprintf("%s: $ref %s names no example", where, ref))
					continue
				}
				where, entry = where+" ("+ref+")", target
			}
			if v, ok := entry["value"]; ok {
				check(where+"/value", pointer+"/schema", v)
			}
		}
	}
	// walk visits every object of the document; isSchema says that node
	// is a schema (so that its examples are a list of values, and a member
	// named "schema" or "examples" among its properties is a property).
	var walk func(pointer string, node any, isSchema bool)
	walk = func(pointer string, node any, isSchema bool) {
		switch n := node.(type) {
		case []any:
			for i, v := range n {
				walk(pointer+"/"+strconv.Itoa(i), v, false)
			}
		case map[string]any:
			if isSchema {
				if list, ok := n["examples"].([]any); ok {
					for i, ex := range list {
						check(pointer+"/examples/"+strconv.Itoa(i), pointer, ex)
					}
				}
				if ex, ok := n["example"]; ok {
					check(pointer+"/example", pointer, ex)
				}
			} else if _, ok := n["schema"]; ok {
				holder(pointer, n)
			}
			for k, v := range n {
				at := pointer + "/" + webtest.PointerToken(k)
				switch {
				case isSchema && slices.Contains(valueKeys, k):
					// values, not schemas: the examples were checked above
				case isSchema && slices.Contains(schemaMapKeys, k), !isSchema && pointer == "/components" && k == "schemas":
					if m, ok := v.(map[string]any); ok {
						for name, s := range m {
							walk(at+"/"+webtest.PointerToken(name), s, true)
						}
					}
				case isSchema && slices.Contains(schemaListKeys, k):
					if l, ok := v.([]any); ok {
						for i, s := range l {
							walk(at+"/"+strconv.Itoa(i), s, true)
						}
					}
				case isSchema && slices.Contains(schemaKeys, k), !isSchema && k == "schema":
					walk(at, v, true)
				case isSchema:
					// another keyword (type, required, ...): no schema below
				case pointer == "/components" && k == "examples":
					// checked where they are referenced, against that schema
				default:
					walk(at, v, false)
				}
			}
		}
	}
	walk("", plain, false)
	slices.Sort(bad)
	return bad, checked, nil
}
