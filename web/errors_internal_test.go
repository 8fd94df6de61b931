package web

import (
	"reflect"
	"testing"

	"github.com/parley/parley/handlers/handlerstest"
)

// TestErrorStructsMatchOpenAPI is the surfaces' TestResponseStructsMatchOpenAPI
// for the error bodies, which this package writes: every JSON member is a
// property of the schema, every required property a member.
func TestErrorStructsMatchOpenAPI(t *testing.T) {
	t.Parallel()
	handlerstest.MatchOpenAPI(t, "openapi.json", []handlerstest.WireType{
		{Schema: "Error", Type: reflect.TypeFor[errorBody]()},
		{Schema: "ChatLimitError", Type: reflect.TypeFor[limitBody]()},
	})
}
