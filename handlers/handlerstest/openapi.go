package handlerstest

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// WireType is a struct a surface encodes and the schema of web/openapi.json
// it is encoded as: a component, then .property or [] (array items) steps.
type WireType struct {
	Schema string
	Type   reflect.Type
}

// MatchOpenAPI compares each struct with its schema in the OpenAPI document
// at path: every JSON member of the struct is a property of the schema, and
// every property the schema requires is a member of the struct. The web
// tests validate live answers; this catches a member that no test happens
// to produce (an omitempty field, a rare branch).
func MatchOpenAPI(t *testing.T, path string, types []WireType) {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range types {
		t.Run(tc.Schema, func(t *testing.T) {
			schema := lookupSchema(t, doc, tc.Schema)
			props, required := schemaMembers(schema)
			fields := jsonMembers(tc.Type)
			for _, f := range fields {
				if _, ok := props[f]; !ok {
					t.Errorf("%s.%s is not a property of %s", tc.Type, f, tc.Schema)
				}
			}
			for _, r := range required {
				if !slices.Contains(fields, r) {
					t.Errorf("%s requires %s, which %s does not have", tc.Schema, r, tc.Type)
				}
			}
		})
	}
}

// lookupSchema resolves a component name followed by .property and [] steps.
func lookupSchema(t *testing.T, doc *openapi3.T, path string) *openapi3.Schema {
	t.Helper()
	name, rest, _ := strings.Cut(path, ".")
	name, items := strings.CutSuffix(name, "[]")
	ref := doc.Components.Schemas[name]
	if ref == nil {
		t.Fatalf("no schema %s", name)
	}
	s := ref.Value
	steps := []string{}
	if items {
		steps = append(steps, "[]")
	}
	for _, p := range strings.Split(rest, ".") {
		if p == "" {
			continue
		}
		p, items := strings.CutSuffix(p, "[]")
		steps = append(steps, p)
		if items {
			steps = append(steps, "[]")
		}
	}
	for _, step := range steps {
		if step == "[]" {
			s = ArrayItems(s)
		} else {
			props, _ := schemaMembers(s)
			if props[step] == nil {
				t.Fatalf("%s: no property %s", path, step)
			}
			s = props[step].Value
		}
		if s == nil {
			t.Fatalf("%s: %s leads nowhere", path, step)
		}
		s = objectMember(s)
	}
	return s
}

// objectMember is the object member of a nullable object (anyOf [object, null]), else s.
func objectMember(s *openapi3.Schema) *openapi3.Schema {
	for _, sub := range append(slices.Clone(s.AnyOf), s.OneOf...) {
		if sub.Value.Type.Is("object") || len(sub.Value.Properties) > 0 {
			return sub.Value
		}
	}
	return s
}

// ArrayItems is the items schema of an array, or of the array member of anyOf.
func ArrayItems(s *openapi3.Schema) *openapi3.Schema {
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

// schemaMembers collects the properties of s with those of its allOf members
// and the object members of anyOf/oneOf, and what s and its allOf members
// require (a union member's requirements hold only for that member).
func schemaMembers(s *openapi3.Schema) (map[string]*openapi3.SchemaRef, []string) {
	props := map[string]*openapi3.SchemaRef{}
	required := slices.Clone(s.Required)
	for _, sub := range s.AllOf {
		p, r := schemaMembers(sub.Value)
		for k, v := range p {
			props[k] = v
		}
		required = append(required, r...)
	}
	for _, sub := range append(slices.Clone(s.AnyOf), s.OneOf...) {
		p, _ := schemaMembers(sub.Value)
		for k, v := range p {
			props[k] = v
		}
	}
	for k, v := range s.Properties {
		props[k] = v
	}
	return props, required
}

// jsonMembers lists the JSON member names of a struct, embedded structs flattened.
func jsonMembers(st reflect.Type) []string {
	var names []string
	for i := 0; i < st.NumField(); i++ {
		f := st.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || (!f.IsExported() && !f.Anonymous):
		case name == "" && f.Anonymous && f.Type.Kind() == reflect.Struct:
			names = append(names, jsonMembers(f.Type)...)
		case name == "":
			names = append(names, f.Name)
		default:
			names = append(names, name)
		}
	}
	return names
}
