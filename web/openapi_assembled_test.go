package web_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"testing"
)

var updateOpenAPI = flag.Bool("update", false, "TestOpenAPIAssembled: write openapi.json from its parts")

// openAPIParts are the files openapi.json is assembled from, in its order:
// the document's own part (info, servers, tags, the service's routes, the
// security schemes and the components more than one surface uses), then
// each surface's routes, beside its handlers, with the components only it
// uses. A part's $refs point into the assembled document.
var openAPIParts = []string{
	"openapi_base.json",
	"../handlers/public/openapi.json",
	"../handlers/api/openapi.json",
	"../handlers/mcpserver/openapi.json",
	"../handlers/oauth/openapi.json",
	"../handlers/voice/openapi.json",
	"../handlers/operator/openapi.json",
}

// TestOpenAPIAssembled: openapi.json, which web serves and every other test
// reads, is its parts merged, member for member and in their order; a
// member two parts both define is an error. Edit a part, then run
// `make openapi` (this test with -update) to write openapi.json again.
func TestOpenAPIAssembled(t *testing.T) {
	t.Parallel()
	doc := &jsonObject{}
	for _, name := range openAPIParts {
		raw, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		part, err := decodeObject(raw)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := doc.merge(part, 2); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	var out bytes.Buffer
	if err := json.Indent(&out, doc.encode(), "", "  "); err != nil {
		t.Fatal(err)
	}
	out.WriteByte('\n')
	if *updateOpenAPI {
		if err := os.WriteFile("openapi.json", out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, out.Bytes()) {
		t.Fatal("openapi.json is not its parts assembled: edit the parts (openAPIParts), not openapi.json, then run `make openapi`")
	}
}

// jsonObject is a JSON object whose members keep their order.
type jsonObject struct {
	keys []string
	vals map[string]any // json.RawMessage or *jsonObject
}

func decodeObject(raw []byte) (*jsonObject, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	o := &jsonObject{vals: map[string]any{}}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		key := tok.(string)
		if _, dup := o.vals[key]; dup {
			return nil, fmt.Errorf("%q twice", key)
		}
		o.keys = append(o.keys, key)
		o.vals[key] = v
	}
	return o, nil
}

// merge adds part's members to o: down to depth levels, objects both have
// are merged (paths, components, components.schemas); below, a member both
// have is an error.
func (o *jsonObject) merge(part *jsonObject, depth int) error {
	if o.vals == nil {
		o.vals = map[string]any{}
	}
	for _, k := range part.keys {
		v := part.vals[k]
		have, exists := o.vals[k]
		if depth == 0 || (!exists && !isObject(v)) {
			if exists {
				return fmt.Errorf("%q is defined twice", k)
			}
			o.keys = append(o.keys, k)
			o.vals[k] = v
			continue
		}
		sub, err := decodeObject(v.(json.RawMessage))
		if err != nil {
			return fmt.Errorf("%s: %v", k, err)
		}
		if !exists {
			have = &jsonObject{}
			o.keys = append(o.keys, k)
			o.vals[k] = have
		}
		dst, ok := have.(*jsonObject)
		if !ok {
			return fmt.Errorf("%q is defined twice", k)
		}
		if err := dst.merge(sub, depth-1); err != nil {
			return fmt.Errorf("%s: %v", k, err)
		}
	}
	return nil
}

func isObject(v any) bool {
	raw, ok := v.(json.RawMessage)
	return ok && len(raw) > 0 && raw[0] == '{'
}

func (o *jsonObject) encode() []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(k)
		b.Write(key)
		b.WriteByte(':')
		switch v := o.vals[k].(type) {
		case json.RawMessage:
			b.Write(v)
		case *jsonObject:
			b.Write(v.encode())
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}
