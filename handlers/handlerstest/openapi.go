package handlerstest

import (
	"crypto/sha256"
	"encoding"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
)

// WireType is a Go type, mostly a struct, that a surface encodes (an
// answer) or decodes (a request body), and the schema of web/openapi.json it
// is written as: a component, then .property or [] (array items) steps.
type WireType struct {
	Schema string
	Type   reflect.Type
	// Request marks a struct the server decodes rather than encodes: a
	// member the schema requires may then carry omitempty, and a pointer
	// need not be nullable (the server never writes it).
	Request bool
	// Absent lists members of Type the schema does not have: in a response,
	// members the server leaves nil, and so out, where it writes this schema
	// (a struct shared by a summary and a detail); in a request, members the
	// decoder reads but the operation of this schema ignores. A member of a
	// nested struct is named by its path below Schema, as for Filled
	// (visitors[].memoryCount).
	Absent []string
	// Filled lists members, as paths below Schema (data.previousStatus),
	// the schema requires and the struct marks omitempty, which the server
	// never leaves empty where it writes this schema.
	Filled []string
}

// MatchOpenAPI compares each struct with its schema in the OpenAPI document
// at path, member by member:
//   - every JSON member of the struct is a property of the schema, and every
//     property of the schema a member of the struct;
//   - every property the schema requires is a member, and (for a response)
//     one the struct never omits (no omitempty);
//   - each member's Go type is of the schema's JSON type (string, integer,
//     number, boolean, array, object), and a pointer member the server
//     writes without omitempty is nullable; a property that is always null
//     (type null) is a member that can be nil, which the server leaves nil;
//   - a member that is itself a struct, or a slice or map of structs, is
//     compared with its property's schema the same way, so nested objects
//     and array items are checked too.
//
// The web tests validate live answers; this catches a member that no test
// happens to produce (an omitempty field, a rare branch) and a property the
// server never writes or never reads.
func MatchOpenAPI(t *testing.T, path string, types []WireType) {
	t.Helper()
	doc := loadDoc(t, path)
	for _, tc := range types {
		t.Run(tc.Schema, func(t *testing.T) {
			c := &comparison{top: tc.Schema, request: tc.Request, absent: tc.Absent, filled: tc.Filled,
				seen: map[visit]bool{}, found: map[string]bool{}}
			c.value(lookupSchema(t, doc, tc.Schema), tc.Type, tc.Schema)
			for _, name := range tc.Absent {
				if !c.found[name] {
					c.errorf("%s lists %s as absent, but %s has no such member", tc.Schema, name, tc.Type)
				}
			}
			for _, e := range c.errs {
				t.Error(e)
			}
		})
	}
}

var docs sync.Map // sha256 of the document → *openapi3.T, or error

// ParseDoc parses an OpenAPI document once per test binary: the same bytes,
// read from a file here or embedded in web (web/webtest's client), give the
// same parsed document, which callers only read (kin-openapi's caches are
// safe for concurrent use). A parse of web/openapi.json is about 0.8 s of CPU
// under the race detector.
func ParseDoc(data []byte) (*openapi3.T, error) {
	key := sha256.Sum256(data)
	v, ok := docs.Load(key)
	if !ok {
		doc, err := openapi3.NewLoader().LoadFromData(data)
		if err != nil {
			v = fmt.Errorf("loading the OpenAPI document: %w", err)
		} else {
			v = doc
		}
		v, _ = docs.LoadOrStore(key, v)
	}
	if err, ok := v.(error); ok {
		return nil, err
	}
	return v.(*openapi3.T), nil
}

// loadDoc parses the document at path (ParseDoc).
func loadDoc(t *testing.T, path string) *openapi3.T {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := ParseDoc(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return doc
}

type visit struct {
	schema *openapi3.Schema
	typ    reflect.Type
}

// comparison collects the differences between a schema and a Go type.
type comparison struct {
	top     string
	request bool
	filled  []string        // paths below top
	absent  []string        // paths below top of the members the schema does without
	found   map[string]bool // the absent paths met
	seen    map[visit]bool
	errs    []string
}

// path is the path below top of the member name of the object at where.
func (c *comparison) path(where, name string) string {
	return strings.TrimPrefix(where+"."+name, c.top+".")
}

func (c *comparison) errorf(format string, args ...any) {
	c.errs = append(c.errs, fmt.Sprintf(format, args...))
}

// object compares the members of struct st with the properties of s; where
// names the place for the messages.
func (c *comparison) object(s *openapi3.Schema, st reflect.Type, where string) {
	for st.Kind() == reflect.Pointer {
		st = st.Elem()
	}
	if c.seen[visit{s, st}] {
		return
	}
	c.seen[visit{s, st}] = true
	props, required := schemaMembers(s)
	members := jsonMembers(st)
	names := map[string]member{}
	for _, m := range members {
		names[m.name] = m
		p, ok := props[m.name]
		if !ok && slices.Contains(c.absent, c.path(where, m.name)) {
			c.found[c.path(where, m.name)] = true
			if !c.request && !m.nilable() {
				c.errorf("%s.%s is absent from %s, but %s never leaves it out", st, m.name, where, st)
			}
			continue
		}
		if !ok {
			c.errorf("%s.%s is not a property of %s", st, m.name, where)
			continue
		}
		if p.Value != nil {
			c.member(p.Value, m, where+"."+m.name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(props)) {
		if _, ok := names[name]; !ok {
			c.errorf("%s has property %s, which %s does not have", where, name, st)
		}
	}
	for _, r := range required {
		m, ok := names[r]
		switch {
		case !ok:
			c.errorf("%s requires %s, which %s does not have", where, r, st)
		case !c.request && m.omitted() && !slices.Contains(c.filled, c.path(where, r)):
			c.errorf("%s requires %s, which %s omits when empty", where, r, st)
		}
	}
}

// member compares one struct member with its property's schema.
func (c *comparison) member(s *openapi3.Schema, m member, where string) {
	if m.asString {
		if !allows(s, "string") {
			c.errorf("%s is %s, but the member is written as a string", where, schemaTypes(s))
		}
		return
	}
	if types := schemaTypes(s); len(types) == 1 && types[0] == "null" {
		// Always null: a member the server leaves nil.
		if k := m.typ.Kind(); k != reflect.Pointer && k != reflect.Interface && k != reflect.Slice && k != reflect.Map {
			c.errorf("%s is always null, but %s is never nil", where, m.typ)
		}
		return
	}
	if !c.request && m.typ.Kind() == reflect.Pointer && !m.omitEmpty && !m.omitZero && !allows(s, "null") {
		c.errorf("%s is not nullable, but %s is a pointer written without omitempty", where, m.typ)
	}
	c.value(s, m.typ, where)
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	unmarshalerType   = reflect.TypeFor[json.Unmarshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	timeType          = reflect.TypeFor[time.Time]()
)

// value compares a Go type with a schema: its JSON type, then the members of
// a struct and the elements of a slice or map.
func (c *comparison) value(s *openapi3.Schema, typ reflect.Type, where string) {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if v, ok := optValue(typ); ok {
		typ = v
	}
	want := ""
	switch {
	case typ == timeType:
		want = "string"
	case implements(typ, marshalerType) || implements(typ, unmarshalerType):
		return // its own encoding: json.RawMessage, a custom type
	case implements(typ, textMarshalerType):
		want = "string"
	default:
		switch typ.Kind() {
		case reflect.String:
			want = "string"
		case reflect.Bool:
			want = "boolean"
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			want = "integer"
		case reflect.Float32, reflect.Float64:
			want = "number"
		case reflect.Slice, reflect.Array:
			if typ.Elem().Kind() == reflect.Uint8 {
				want = "string" // base64
			} else {
				want = "array"
			}
		case reflect.Map, reflect.Struct:
			want = "object"
		default: // interface: anything
			return
		}
	}
	if !allows(s, want) && !(want == "integer" && allows(s, "number")) {
		c.errorf("%s is %s, but %s is written as %s", where, schemaTypes(s), typ, want)
		return
	}
	switch {
	case want == "object" && typ.Kind() == reflect.Struct:
		c.object(objectMember(s), typ, where)
	case want == "object" && typ.Kind() == reflect.Map:
		if ap := s.AdditionalProperties.Schema; ap != nil && ap.Value != nil {
			c.value(ap.Value, typ.Elem(), where+"{}")
		}
	case want == "array":
		if items := ArrayItems(s); items != nil {
			c.value(items, typ.Elem(), where+"[]")
		}
	}
}

// optValue is T of a parley.Opt[T] (a member of a partial update, which
// decodes as T or null).
func optValue(typ reflect.Type) (reflect.Type, bool) {
	if typ.Kind() != reflect.Struct || !strings.HasPrefix(typ.Name(), "Opt[") || typ.PkgPath() != "github.com/parley/parley" {
		return nil, false
	}
	f, ok := typ.FieldByName("Value")
	return f.Type, ok
}

func implements(typ, iface reflect.Type) bool {
	return typ.Implements(iface) || reflect.PointerTo(typ).Implements(iface)
}

// schemaTypes lists the JSON types s allows, with those of its allOf, anyOf
// and oneOf members; none means any.
func schemaTypes(s *openapi3.Schema) []string {
	var types []string
	if s.Type != nil {
		types = append(types, s.Type.Slice()...)
	}
	for _, sub := range slices.Concat(s.AllOf, s.AnyOf, s.OneOf) {
		if sub.Value != nil {
			types = append(types, schemaTypes(sub.Value)...)
		}
	}
	if s.Type == nil && len(s.Properties) > 0 {
		types = append(types, "object")
	}
	return types
}

// allows reports whether s allows JSON type want (a schema that names no
// type allows all; a nullable 3.0 schema allows null).
func allows(s *openapi3.Schema, want string) bool {
	types := schemaTypes(s)
	if want == "null" {
		return slices.Contains(types, "null") || s.Nullable
	}
	return len(types) == 0 || slices.Contains(types, want)
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
	if len(s.Properties) > 0 || len(s.AllOf) > 0 {
		return s
	}
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
		if inherited := props[k]; inherited != nil && inherited.Value != nil && v.Value != nil {
			// A refinement of an allOf member's property: both hold.
			v = &openapi3.SchemaRef{Value: &openapi3.Schema{AllOf: openapi3.SchemaRefs{inherited, v}}}
		}
		props[k] = v
	}
	return props, required
}

// member is one JSON member of a struct.
type member struct {
	name      string
	typ       reflect.Type
	omitEmpty bool // omitempty: left out when false, 0, "", nil or empty
	omitZero  bool // omitzero: left out when the zero value
	asString  bool // ",string": a number or boolean written as a string
}

// omitted reports whether the member is left out of an encoded value when it
// holds a value of its own: false, 0, "", an empty slice or map. A pointer
// or interface with omitempty is left out only when nil, which is the
// constructor's choice (a struct shared by a summary and a detail), not a
// value the member can hold.
func (m member) omitted() bool {
	switch {
	case m.omitZero:
		return m.typ.Kind() != reflect.Pointer && m.typ.Kind() != reflect.Interface
	case !m.omitEmpty:
		return false
	}
	switch m.typ.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Struct:
		return false
	case reflect.Array:
		return m.typ.Len() == 0
	}
	return true
}

// nilable reports whether the member is left out when nil.
func (m member) nilable() bool {
	switch m.typ.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Slice, reflect.Map:
		return m.omitEmpty || m.omitZero
	}
	return false
}

// jsonMembers lists the JSON members of a struct as encoding/json sees them,
// embedded structs flattened.
func jsonMembers(st reflect.Type) []member {
	var members []member
	for i := 0; i < st.NumField(); i++ {
		f := st.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		embedded := f.Type
		if embedded.Kind() == reflect.Pointer {
			embedded = embedded.Elem()
		}
		switch {
		case name == "-" && opts == "":
		case !f.IsExported() && !(f.Anonymous && embedded.Kind() == reflect.Struct):
		case name == "" && f.Anonymous && embedded.Kind() == reflect.Struct:
			members = append(members, jsonMembers(embedded)...)
		default:
			if name == "" {
				name = f.Name
			}
			o := strings.Split(opts, ",")
			members = append(members, member{
				name:      name,
				typ:       f.Type,
				omitEmpty: slices.Contains(o, "omitempty"),
				omitZero:  slices.Contains(o, "omitzero"),
				asString:  slices.Contains(o, "string"),
			})
		}
	}
	return members
}

// Enum is a list of values the Go side knows (a table of constants) and the
// schema of web/openapi.json that lists them: a component, then .property
// or [] steps, as for WireType.
type Enum struct {
	Schema string
	Values []string
}

// MatchEnums compares each list of values with its schema's enum (null
// aside) as sets: a value the server takes or sends that the schema does
// not list fails, and so does a listed value the Go side does not know.
func MatchEnums(t *testing.T, path string, enums []Enum) {
	t.Helper()
	doc := loadDoc(t, path)
	for _, e := range enums {
		t.Run(e.Schema, func(t *testing.T) {
			listed := enumValues(lookupSchema(t, doc, e.Schema))
			if listed == nil {
				t.Fatalf("%s has no enum", e.Schema)
			}
			for _, v := range e.Values {
				if !slices.Contains(listed, v) {
					t.Errorf("%s does not list %q", e.Schema, v)
				}
			}
			for _, v := range listed {
				if !slices.Contains(e.Values, v) {
					t.Errorf("%s lists %q, which the Go side does not know", e.Schema, v)
				}
			}
		})
	}
}

// enumValues is the string values of s's enum, with those of its allOf,
// anyOf and oneOf members (a nullable enum: anyOf [enum, null]); nil when
// none has one.
func enumValues(s *openapi3.Schema) []string {
	var values []string
	for _, v := range s.Enum {
		if str, ok := v.(string); ok {
			values = append(values, str)
		}
	}
	for _, sub := range slices.Concat(s.AllOf, s.AnyOf, s.OneOf) {
		if sub.Value != nil {
			values = append(values, enumValues(sub.Value)...)
		}
	}
	return values
}
