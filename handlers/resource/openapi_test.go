package resource

import (
	"reflect"
	"testing"

	"github.com/parley/parley/handlers/handlerstest"
)

// TestResponseStructsMatchOpenAPI compares each representation with its
// schema in web/openapi.json (handlerstest.MatchOpenAPI).
func TestResponseStructsMatchOpenAPI(t *testing.T) {
	t.Parallel()
	handlerstest.MatchOpenAPI(t, "../../web/openapi.json", []handlerstest.WireType{
		{Schema: "TenantStats", Type: reflect.TypeFor[StatsJSON]()},
		{Schema: "SegmentSummary", Type: reflect.TypeFor[SegmentSummaryJSON]()},
		{Schema: "CorpusEntry", Type: reflect.TypeFor[CorpusJSON]()},
		{Schema: "CorpusSegment", Type: reflect.TypeFor[segmentRef]()},
		{Schema: "CorpusSync", Type: reflect.TypeFor[corpusSyncJS]()},
		{Schema: "Tool", Type: reflect.TypeFor[ToolJSON]()},
		{Schema: "VisitorDetail", Type: reflect.TypeFor[VisitorJSON]()},
		{Schema: "MemoryFact", Type: reflect.TypeFor[MemoryJSON]()},
	})
}
