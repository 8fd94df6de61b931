package web

import (
	"reflect"
	"testing"

	"github.com/parley/parley/handlers/handlerstest"
)

// TestErrorStructsMatchOpenAPI is the surfaces' TestWireStructsMatchOpenAPI
// for the error bodies, which this package writes (handlerstest.MatchOpenAPI).
func TestErrorStructsMatchOpenAPI(t *testing.T) {
	t.Parallel()
	handlerstest.MatchOpenAPI(t, "openapi.json", []handlerstest.WireType{
		{Schema: "Error", Type: reflect.TypeFor[errorBody]()},
		{Schema: "ChatLimitError", Type: reflect.TypeFor[limitBody]()},
		// The error bodies that add details: the envelope is errorBody, the
		// details are the map or struct of the parley.Error (any here).
		// Filled: the errors of these schemas always carry their code.
		{Schema: "ValidationError", Type: reflect.TypeFor[errorBody]()},
		{Schema: "ScopeError", Type: reflect.TypeFor[errorBody]()},
		{Schema: "PlanRequiredError", Type: reflect.TypeFor[errorBody](), Filled: []string{"code"}},
		{Schema: "OrchestratorError", Type: reflect.TypeFor[errorBody](), Filled: []string{"code"}},
		{Schema: "CorpusLimitError", Type: reflect.TypeFor[errorBody]()},
		{Schema: "SegmentLimitError", Type: reflect.TypeFor[errorBody](), Filled: []string{"code"}},
		{Schema: "SegmentNotEmptyError", Type: reflect.TypeFor[errorBody]()},
		{Schema: "SynonymLimitError", Type: reflect.TypeFor[errorBody](), Filled: []string{"code"}},
	})
}
