package jsonbody

import (
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/handlers/handlerstest"
)

// The decoders answer any input with a value or an error of the caller's
// (400 or 413), never a panic or an internal error; what they accept is
// text PostgreSQL can store. Their seeds, one file an input, are under
// testdata/fuzz/FuzzDecodeObject/; `go test -fuzz FuzzDecodeObject
// ./handlers/jsonbody/` explores further.

// fuzzBody is a struct of every kind of field the handlers decode into.
type fuzzBody struct {
	Name     string         `json:"name"`
	Optional *string        `json:"optional"`
	List     []string       `json:"list"`
	Metadata map[string]any `json:"metadata"`
	Count    int            `json:"count"`
	Active   *bool          `json:"active"`
	Anything any            `json:"anything"`
}

func FuzzDecodeObject(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		raw, err := DecodeObject(handlerstest.FuzzContext(body, ""), 1<<16)
		handlerstest.CallersError(t, err, parley.KindInvalid, parley.KindTooLarge)
		if err != nil {
			return
		}
		var dst fuzzBody
		errs := DecodeFields(raw, &dst)
		for name, v := range map[string]any{"name": dst.Name, "optional": dst.Optional, "list": dst.List,
			"metadata": dst.Metadata, "anything": dst.Anything} {
			if _, bad := errs[name]; !bad {
				handlerstest.CleanValue(t, name, v)
			}
		}
	})
}
