// Command openapi30 writes an OpenAPI 3.0 copy of Parley's OpenAPI 3.1
// document, for the Go client's generator (make clients), which reads 3.0
// and only part of 3.1.
//
// The copy describes the same wire shapes as far as a type system sees them;
// it drops what only a validator uses:
//
//   - a type list ["string", "null"] becomes type "string" with nullable;
//     a list of several types (any JSON value) loses its type;
//   - const becomes a one-value enum, and null in an enum becomes nullable;
//   - an anyOf or oneOf member that is only {"type": "null"} becomes
//     nullable; a single member left is merged into its schema (a $ref as
//     allOf of it, the 3.0 way of a nullable reference);
//   - an anyOf or oneOf whose members add no type of their own (patterns of
//     a string, alternative required members of an object) is dropped, as
//     are if/then/else, contentMediaType and $comment;
//   - a numeric exclusiveMinimum or exclusiveMaximum becomes minimum or
//     maximum with the boolean of 3.0;
//   - a schema's examples list goes (the generator would only copy it into
//     comments); media types' and parameters' examples, maps of Example
//     Objects, stay;
//   - webhooks, info.summary and license.identifier, which 3.0 lacks, go.
//
// The output is JSON with sorted keys: the same document always gives the
// same copy.
//
// Usage: go run ./clients/openapi30 IN OUT
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "openapi30:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("usage: openapi30 IN OUT")
	}
	raw, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	out, err := Convert(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", args[0], err)
	}
	return os.WriteFile(args[1], out, 0o644)
}

// Convert returns the 3.0 copy of the 3.1 document raw, indented.
func Convert(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	doc["openapi"] = "3.0.3"
	delete(doc, "webhooks")
	delete(doc, "jsonSchemaDialect")
	if info, ok := doc["info"].(map[string]any); ok {
		delete(info, "summary")
		if lic, ok := info["license"].(map[string]any); ok {
			delete(lic, "identifier")
		}
	}
	if comps, ok := doc["components"].(map[string]any); ok {
		delete(comps, "pathItems")
	}
	walk(doc)
	return json.MarshalIndent(doc, "", "  ")
}

// walk converts every schema under v. A schema is recognised where the
// document puts one: the values of "schema", "items", "not",
// "additionalProperties", the members of "properties" and of
// components.schemas, and the members of allOf, anyOf and oneOf.
func walk(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			switch k {
			case "example", "examples":
				// Values, not schemas (an example's own "items" or
				// "schema" member is data).
			case "schema", "items", "additionalProperties":
				if s, ok := child.(map[string]any); ok {
					schema(s)
				}
			case "properties", "schemas":
				if m, ok := child.(map[string]any); ok {
					for _, s := range m {
						if s, ok := s.(map[string]any); ok {
							schema(s)
						}
					}
				}
			default:
				walk(child)
			}
		}
	case []any:
		for _, child := range v {
			walk(child)
		}
	}
}

// schema converts s and the schemas inside it, in place: the members first,
// so that a member reduced to {"nullable": true} is seen as the null type.
func schema(s map[string]any) {
	for _, k := range []string{"items", "additionalProperties", "not"} {
		if sub, ok := s[k].(map[string]any); ok {
			schema(sub)
		}
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for _, p := range props {
			if p, ok := p.(map[string]any); ok {
				schema(p)
			}
		}
	}
	delete(s, "if")
	delete(s, "then")
	delete(s, "else")
	delete(s, "contentMediaType")
	delete(s, "$comment")

	if s["type"] == "null" {
		delete(s, "type")
		s["nullable"] = true
	}
	if t, ok := s["type"].([]any); ok {
		var kinds []any
		for _, k := range t {
			if k == "null" {
				s["nullable"] = true
			} else {
				kinds = append(kinds, k)
			}
		}
		if len(kinds) == 1 {
			s["type"] = kinds[0]
		} else {
			delete(s, "type")
		}
	}
	if c, ok := s["const"]; ok {
		delete(s, "const")
		s["enum"] = []any{c}
	}
	if e, ok := s["enum"].([]any); ok && slices.Contains(e, nil) {
		s["enum"] = slices.DeleteFunc(slices.Clone(e), func(v any) bool { return v == nil })
		s["nullable"] = true
	}
	for exclusive, bound := range map[string]string{"exclusiveMinimum": "minimum", "exclusiveMaximum": "maximum"} {
		if n, ok := s[exclusive].(json.Number); ok {
			s[exclusive] = true
			s[bound] = n
		}
	}
	if _, ok := s["examples"].([]any); ok {
		delete(s, "examples")
	}
	if all, ok := s["allOf"].([]any); ok {
		for _, m := range all {
			if m, ok := m.(map[string]any); ok {
				schema(m)
			}
		}
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		members, ok := s[k].([]any)
		if !ok {
			continue
		}
		if kept := union(s, members); kept != nil {
			s[k] = kept
		} else {
			delete(s, k)
		}
	}
}

// union converts the members of s's anyOf or oneOf and returns what is left
// of them: nil when the union is dropped or merged into s.
func union(s map[string]any, members []any) []any {
	var kept []any
	for _, m := range members {
		m, ok := m.(map[string]any)
		if !ok {
			kept = append(kept, m)
			continue
		}
		schema(m)
		if isNull(m) {
			s["nullable"] = true
			continue
		}
		kept = append(kept, m)
	}
	// Members that only constrain the schema's own type (patterns, lengths,
	// required members) describe no other shape.
	if _, typed := s["type"]; typed || s["allOf"] != nil || s["$ref"] != nil {
		constraintsOnly := true
		for _, m := range kept {
			m, _ := m.(map[string]any)
			if m == nil || m["$ref"] != nil || (m["type"] != nil && m["type"] != s["type"]) {
				constraintsOnly = false
			}
		}
		if constraintsOnly {
			return nil
		}
	}
	if len(kept) != 1 {
		return kept
	}
	only := kept[0].(map[string]any)
	if ref, ok := only["$ref"]; ok {
		s["allOf"] = []any{map[string]any{"$ref": ref}}
		return nil
	}
	for k, v := range only {
		if _, taken := s[k]; !taken {
			s[k] = v
		}
	}
	return nil
}

// isNull reports whether m, converted, stands for null alone.
func isNull(m map[string]any) bool {
	for k, v := range m {
		switch k {
		case "nullable":
			if v != true {
				return false
			}
		case "description", "title":
		default:
			return false
		}
	}
	return m["nullable"] == true
}
