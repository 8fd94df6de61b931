package handlers

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/parley/parley"
	"github.com/parley/parley/agent"
	"github.com/parley/parley/db"
)

// TestResponseStructsMatchOpenAPI compares each struct the API encodes with
// its schema in web/openapi.json: every JSON member of the struct is a
// property of the schema, and every property the schema requires is a member
// of the struct. The web tests validate live answers; this catches a member
// that no test happens to produce (an omitempty field, a rare branch).
func TestResponseStructsMatchOpenAPI(t *testing.T) {
	t.Parallel()
	doc, err := openapi3.NewLoader().LoadFromFile("../web/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		schema string // a component, then .property or [] (array items) steps
		typ    reflect.Type
	}{
		{"Tenant", reflect.TypeFor[tenantJSON]()},
		{"TenantStats", reflect.TypeFor[statsJSON]()},
		{"TenantEnvelope.recentConversations[]", reflect.TypeFor[recentConversationJSON]()},
		{"BookingCtaConfig", reflect.TypeFor[parley.BookingCTAConfig]()},
		{"Segment", reflect.TypeFor[parley.Segment]()},
		{"SegmentSummary", reflect.TypeFor[segmentSummaryJSON]()},
		{"Starter", reflect.TypeFor[parley.Starter]()},
		{"FormConfig", reflect.TypeFor[parley.FormConfig]()},
		{"FormField", reflect.TypeFor[parley.FormField]()},
		{"CorpusEntry", reflect.TypeFor[corpusJSON]()},
		{"CorpusSegment", reflect.TypeFor[segmentRef]()},
		{"CorpusSync", reflect.TypeFor[corpusSyncJS]()},
		{"CorpusBulkResult", reflect.TypeFor[bulkReport]()},
		{"CorpusBulkItemResult", reflect.TypeFor[bulkItemResult]()},
		{"CorpusBulkError", reflect.TypeFor[bulkError]()},
		{"CorpusImportError", reflect.TypeFor[importError]()},
		{"CorpusImportResult", reflect.TypeFor[importReport]()},
		{"SynonymGroup", reflect.TypeFor[parley.SynonymGroup]()},
		{"Tool", reflect.TypeFor[toolJSON]()},
		{"Product", reflect.TypeFor[productJSON]()},
		{"VisitorDetail", reflect.TypeFor[visitorJSON]()},
		{"MemoryFact", reflect.TypeFor[memoryJSON]()},
		{"MCPToolsSettings", reflect.TypeFor[mcpSettingsJSON]()},
		{"VoiceConfig", reflect.TypeFor[parley.VoiceConfig]()},
		{"VoiceSetup", reflect.TypeFor[voiceSetupJSON]()},
		{"CalendarConnector", reflect.TypeFor[calendarJSON]()},
		{"CalendarTest", reflect.TypeFor[calendarTest]()},
		{"CalendarSlot", reflect.TypeFor[agent.Slot]()},
		{"VisitorSigningKey", reflect.TypeFor[visitorSigningKeyJSON]()},
		{"Submission", reflect.TypeFor[submissionJSON]()},
		{"Submission.tool", reflect.TypeFor[submissionToolJSON]()},
		{"WebhookEndpoint", reflect.TypeFor[webhookJSON]()},
		{"WebhookDelivery", reflect.TypeFor[deliveryJSON]()},
		{"WebhookDeliveryStats", reflect.TypeFor[db.DeliveryStats]()},
		{"ChatReply", reflect.TypeFor[chatReply]()},
		{"ChatFeedback", reflect.TypeFor[chatFeedbackReply]()},
		{"FormSubmission", reflect.TypeFor[formReply]()},
		{"ContextDiscovery", reflect.TypeFor[contextJSON]()},
		{"ContextDiscovery.tenant", reflect.TypeFor[contextTenantJSON]()},
		{"ContextDiscovery.endpoints", reflect.TypeFor[contextEndpointsJSON]()},
		{"WidgetSettings", reflect.TypeFor[widgetSettingsJSON]()},
		{"WidgetSettings.segment", reflect.TypeFor[widgetSegmentJSON]()},
		{"WidgetSettings.bot", reflect.TypeFor[widgetBotJSON]()},
		{"WidgetSettings.launcher", reflect.TypeFor[widgetLauncherJSON]()},
		{"WidgetSettings.endpoints", reflect.TypeFor[widgetEndpointsJSON]()},
	} {
		t.Run(tc.schema, func(t *testing.T) {
			schema := lookupSchema(t, doc, tc.schema)
			props, required := schemaMembers(schema)
			fields := jsonMembers(tc.typ)
			for _, f := range fields {
				if _, ok := props[f]; !ok {
					t.Errorf("%s.%s is not a property of %s", tc.typ, f, tc.schema)
				}
			}
			for _, r := range required {
				if !slices.Contains(fields, r) {
					t.Errorf("%s requires %s, which %s does not have", tc.schema, r, tc.typ)
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
			s = arrayItems(s)
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

// arrayItems is the items schema of an array, or of the array member of anyOf.
func arrayItems(s *openapi3.Schema) *openapi3.Schema {
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
