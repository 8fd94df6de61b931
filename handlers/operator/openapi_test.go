package operator

import (
	"reflect"
	"testing"

	"github.com/parley/parley/handlers/handlerstest"
	"github.com/parley/parley/manage"
)

// TestWireStructsMatchOpenAPI compares the operator API's answers and its
// request body with their schemas in web/openapi.json
// (handlerstest.MatchOpenAPI).
func TestWireStructsMatchOpenAPI(t *testing.T) {
	t.Parallel()
	handlerstest.MatchOpenAPI(t, "../../web/openapi.json", []handlerstest.WireType{
		{Schema: "OperatorTenantList", Type: reflect.TypeFor[TenantListJSON]()},
		{Schema: "PlanChange", Type: reflect.TypeFor[manage.PlanInput]()},
	})
}
