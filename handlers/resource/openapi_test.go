package resource

import (
	"reflect"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/db/listing"
	"github.com/parley/parley/db/testset"
	"github.com/parley/parley/handlers/handlerstest"
	"github.com/parley/parley/manage"
)

// TestWireStructsMatchOpenAPI compares each representation, and each
// request body the surfaces share, with its schema in web/openapi.json
// (handlerstest.MatchOpenAPI).
func TestWireStructsMatchOpenAPI(t *testing.T) {
	t.Parallel()
	handlerstest.MatchOpenAPI(t, "../../web/openapi.json", []handlerstest.WireType{
		{Schema: "TenantStats", Type: reflect.TypeFor[StatsJSON]()},
		{Schema: "PlanUsage", Type: reflect.TypeFor[PlanUsageJSON]()},
		{Schema: "SegmentSummary", Type: reflect.TypeFor[SegmentSummaryJSON]()},
		{Schema: "CorpusEntry", Type: reflect.TypeFor[CorpusJSON]()},
		{Schema: "CorpusSegment", Type: reflect.TypeFor[segmentRef]()},
		{Schema: "CorpusSync", Type: reflect.TypeFor[corpusSyncJS]()},
		{Schema: "Tool", Type: reflect.TypeFor[ToolJSON]()},
		{Schema: "VisitorDetail", Type: reflect.TypeFor[VisitorJSON]()},
		{Schema: "MemoryFact", Type: reflect.TypeFor[MemoryJSON]()},
		{Schema: "Visitor", Type: reflect.TypeFor[VisitorJSON](), Absent: []string{"conversationCount", "memoryCount"}},
		{Schema: "ConversationListItem", Type: reflect.TypeFor[ConversationItemJSON]()},
		{Schema: "ConversationSegment", Type: reflect.TypeFor[conversationSegmentJSON]()},
		{Schema: "ConversationFeedback", Type: reflect.TypeFor[conversationFeedbackJSON]()},
		{Schema: "ConversationDetail", Type: reflect.TypeFor[ConversationDetailJSON]()},
		{Schema: "ConversationMessage", Type: reflect.TypeFor[ConversationMessageJSON]()},
		{Schema: "VoiceCall", Type: reflect.TypeFor[VoiceCallJSON]()},
		{Schema: "ConversationStats", Type: reflect.TypeFor[ConversationStatsJSON]()},
		{Schema: "ConversationStatsTotals", Type: reflect.TypeFor[listing.StatsTotals]()},
		{Schema: "ConversationStatsSatisfaction", Type: reflect.TypeFor[listing.StatsSatisfaction]()},
		{Schema: "KnowledgeRef", Type: reflect.TypeFor[parley.KnowledgeRef]()},
		{Schema: "ConversationToolCall", Type: reflect.TypeFor[parley.ToolCall]()},
		{Schema: "ConversationList", Type: reflect.TypeFor[ConversationListJSON]()},
		{Schema: "ConversationPagination", Type: reflect.TypeFor[conversationPaginationJSON]()},
		{Schema: "CorpusEnvelope", Type: reflect.TypeFor[CorpusEnvelopeJSON]()},
		{Schema: "CorpusUpsertResult", Type: reflect.TypeFor[CorpusUpsertJSON]()},
		{Schema: "CorpusSyncResult", Type: reflect.TypeFor[CorpusUpsertJSON]()},
		{Schema: "CorpusList", Type: reflect.TypeFor[CorpusListJSON]()},
		{Schema: "CorpusPagination", Type: reflect.TypeFor[corpusPaginationJSON]()},
		{Schema: "VisitorList", Type: reflect.TypeFor[VisitorListJSON](),
			Absent: []string{"visitors[].conversationCount", "visitors[].memoryCount"}},
		// One answer serves the deletions of one resource named by its id.
		{Schema: "CorpusDeletion", Type: reflect.TypeFor[DeletionJSON]()},
		{Schema: "ProductDeletion", Type: reflect.TypeFor[DeletionJSON]()},
		{Schema: "SubmissionDeletion", Type: reflect.TypeFor[DeletionJSON]()},
		{Schema: "SynonymDeletion", Type: reflect.TypeFor[DeletionJSON]()},
		{Schema: "ToolDeletion", Type: reflect.TypeFor[DeletionJSON]()},
		{Schema: "VisitorDeletion", Type: reflect.TypeFor[DeletionJSON]()},
		{Schema: "WebhookDeletion", Type: reflect.TypeFor[DeletionJSON]()},
		{Schema: "TestCase", Type: reflect.TypeFor[TestCaseJSON]()},
		{Schema: "TestCaseList", Type: reflect.TypeFor[TestCaseListJSON]()},
		{Schema: "TestRun", Type: reflect.TypeFor[TestRunJSON]()},
		{Schema: "TestResult", Type: reflect.TypeFor[TestResultJSON]()},
		{Schema: "TestCheck", Type: reflect.TypeFor[testset.Check]()},
		{Schema: "TestDeletion", Type: reflect.TypeFor[DeletionJSON]()},
		// Request bodies: what the decoders read.
		{Schema: "TestCaseWrite", Type: reflect.TypeFor[manage.TestCaseInput](), Request: true},
		{Schema: "CorpusEntryWrite", Type: reflect.TypeFor[CorpusBody](), Request: true},
		{Schema: "SegmentWrite", Type: reflect.TypeFor[parley.SegmentInput](), Request: true, Absent: []string{"slug"}},
		{Schema: "SegmentCreate", Type: reflect.TypeFor[parley.SegmentInput](), Request: true},
		{Schema: "SegmentUpdate", Type: reflect.TypeFor[parley.SegmentInput](), Request: true},
		{Schema: "CorpusEntryCreate", Type: reflect.TypeFor[CorpusBody](), Request: true},
		{Schema: "CorpusBulkEntry", Type: reflect.TypeFor[CorpusBody](), Request: true},
		{Schema: "ToolCreate", Type: reflect.TypeFor[parley.ToolInput](), Request: true},
		{Schema: "ToolWrite", Type: reflect.TypeFor[parley.ToolInput](), Request: true},
	})
}
