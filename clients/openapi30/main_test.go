package main

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestConvert: each 3.1 construct of Parley's document becomes its 3.0
// form, and what is not a schema (examples' values) is left as it is.
func TestConvert(t *testing.T) {
	t.Parallel()
	in := `{
	  "openapi": "3.1.0",
	  "info": {"title": "T", "version": "1", "summary": "s", "license": {"name": "MIT", "identifier": "MIT"}},
	  "webhooks": {"x": {}},
	  "paths": {"/a": {"get": {"responses": {"200": {"description": "ok", "content": {"application/json": {
	    "schema": {"$ref": "#/components/schemas/A"},
	    "examples": {"one": {"value": {"items": {"type": ["string", "null"]}}}}
	  }}}}}}},
	  "components": {"schemas": {
	    "A": {"type": "object", "examples": [{"n": 1}], "properties": {
	      "name": {"type": ["string", "null"], "maxLength": 5},
	      "any": {"type": ["object", "array", "string"]},
	      "kind": {"const": "x"},
	      "mode": {"enum": ["a", null]},
	      "amount": {"type": ["number", "null"], "exclusiveMinimum": 0},
	      "url": {"type": ["string", "null"], "anyOf": [{"type": "string", "format": "uri"}, {"type": "string", "pattern": "^\\s*$"}, {"type": "null"}]},
	      "color": {"anyOf": [{"type": "string", "pattern": "^#"}, {"type": "null"}]},
	      "b": {"anyOf": [{"$ref": "#/components/schemas/B"}, {"type": "null"}]},
	      "either": {"anyOf": [{"$ref": "#/components/schemas/B"}, {"$ref": "#/components/schemas/A"}]},
	      "list": {"type": ["array", "null"], "items": {"type": "string", "contentMediaType": "text/csv"}}
	    }},
	    "B": {"type": "object", "allOf": [{"$ref": "#/components/schemas/A"}], "anyOf": [{"required": ["name"]}, {"required": ["kind"]}],
	      "if": {"properties": {"kind": {"const": "x"}}}, "then": {"required": ["name"]}}
	  }}
	}`
	out, err := Convert([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["openapi"] != "3.0.3" || doc["webhooks"] != nil {
		t.Errorf("openapi %v, webhooks %v", doc["openapi"], doc["webhooks"])
	}
	info := doc["info"].(map[string]any)
	if info["summary"] != nil || info["license"].(map[string]any)["identifier"] != nil {
		t.Errorf("info = %v", info)
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	a := schemas["A"].(map[string]any)
	if a["examples"] != nil {
		t.Errorf("A keeps its examples: %v", a["examples"])
	}
	props := a["properties"].(map[string]any)
	want := map[string]string{
		"name":   `{"maxLength":5,"nullable":true,"type":"string"}`,
		"any":    `{}`,
		"kind":   `{"enum":["x"]}`,
		"mode":   `{"enum":["a"],"nullable":true}`,
		"amount": `{"exclusiveMinimum":true,"minimum":0,"nullable":true,"type":"number"}`,
		"url":    `{"nullable":true,"type":"string"}`,
		"color":  `{"nullable":true,"pattern":"^#","type":"string"}`,
		"b":      `{"allOf":[{"$ref":"#/components/schemas/B"}],"nullable":true}`,
		"either": `{"anyOf":[{"$ref":"#/components/schemas/B"},{"$ref":"#/components/schemas/A"}]}`,
		"list":   `{"items":{"type":"string"},"nullable":true,"type":"array"}`,
	}
	for name, w := range want {
		got, _ := json.Marshal(props[name])
		if string(got) != w {
			t.Errorf("%s = %s, want %s", name, got, w)
		}
	}
	b, _ := json.Marshal(schemas["B"])
	if string(b) != `{"allOf":[{"$ref":"#/components/schemas/A"}],"type":"object"}` {
		t.Errorf("B = %s", b)
	}
	media := doc["paths"].(map[string]any)["/a"].(map[string]any)["get"].(map[string]any)["responses"].(map[string]any)["200"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)
	example := media["examples"].(map[string]any)["one"].(map[string]any)["value"]
	if !reflect.DeepEqual(example, map[string]any{"items": map[string]any{"type": []any{"string", "null"}}}) {
		t.Errorf("an example's value was changed: %v", example)
	}
	again, _ := Convert([]byte(in))
	if string(again) != string(out) {
		t.Error("two conversions of one document differ")
	}
}
