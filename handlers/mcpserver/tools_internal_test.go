package mcpserver

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/handlers/resource"
)

// jsonTags are the JSON names a struct decodes, without aliases left out.
func jsonTags(v any, leaveOut ...string) []string {
	var out []string
	t := reflect.TypeOf(v)
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" && !slices.Contains(leaveOut, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

func propNames(tool ManageTool, leaveOut ...string) []string {
	var out []string
	for k := range tool.Input["properties"].(schema) {
		if !slices.Contains(leaveOut, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// The tools' schemas declare exactly the fields the REST decoders read, so
// that no argument the REST API takes is refused as unknown and none is
// declared but ignored; each tool needs a known MCP scope.
func TestManageToolSchemas(t *testing.T) {
	h := &Handler{}
	tools := map[string]ManageTool{}
	for _, tool := range h.ManageTools() {
		if _, dup := tools[tool.Name]; dup {
			t.Errorf("%s twice", tool.Name)
		}
		tools[tool.Name] = tool
		if !slices.Contains(auth.MCPScopes, tool.Scope) {
			t.Errorf("%s: scope %q", tool.Name, tool.Scope)
		}
		if tool.ReadOnly != strings.HasSuffix(tool.Scope, ":read") {
			t.Errorf("%s: read-only %v with scope %s", tool.Name, tool.ReadOnly, tool.Scope)
		}
		if tool.Input["type"] != "object" || tool.Input["additionalProperties"] != false {
			t.Errorf("%s: input %v", tool.Name, tool.Input)
		}
		required, _ := tool.Input["required"].([]string)
		for _, r := range required {
			if !slices.Contains(propNames(tool), r) {
				t.Errorf("%s: required %s is not a property", tool.Name, r)
			}
		}
	}
	for _, c := range []struct {
		tool string
		want []string
	}{
		{"create_corpus_entry", jsonTags(resource.CorpusBody{}, "segment")},
		{"update_corpus_entry", jsonTags(resource.CorpusBody{}, "segment")},
		{"create_segment", jsonTags(parley.SegmentInput{})},
		{"update_segment", jsonTags(parley.SegmentInput{})},
		{"create_tool", jsonTags(parley.ToolInput{})},
		{"update_tool", jsonTags(parley.ToolInput{})},
		{"update_persona", jsonTags(personaJSON{})},
		{"read_persona", nil},
	} {
		if got := propNames(tools[c.tool], "id"); !slices.Equal(got, c.want) {
			t.Errorf("%s: arguments %v, want %v", c.tool, got, c.want)
		}
	}
	patch := jsonTags(parley.TenantInput{})
	for _, f := range jsonTags(personaJSON{}) {
		if !slices.Contains(patch, f) {
			t.Errorf("persona field %s is not a tenant field", f)
		}
	}
}
