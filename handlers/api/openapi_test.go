package api

import (
	"reflect"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/tools"
	"github.com/parley/parley/db/webhooks"
	"github.com/parley/parley/handlers/handlerstest"
)

// TestResponseStructsMatchOpenAPI compares each struct the REST API encodes
// with its schema in web/openapi.json (handlerstest.MatchOpenAPI).
func TestResponseStructsMatchOpenAPI(t *testing.T) {
	t.Parallel()
	handlerstest.MatchOpenAPI(t, "../../web/openapi.json", []handlerstest.WireType{
		{Schema: "Tenant", Type: reflect.TypeFor[tenantJSON]()},
		{Schema: "TenantEnvelope.recentConversations[]", Type: reflect.TypeFor[recentConversationJSON]()},
		{Schema: "BookingCtaConfig", Type: reflect.TypeFor[parley.BookingCTAConfig]()},
		{Schema: "Segment", Type: reflect.TypeFor[parley.Segment]()},
		{Schema: "Starter", Type: reflect.TypeFor[parley.Starter]()},
		{Schema: "FormConfig", Type: reflect.TypeFor[parley.FormConfig]()},
		{Schema: "FormField", Type: reflect.TypeFor[parley.FormField]()},
		{Schema: "CorpusBulkResult", Type: reflect.TypeFor[bulkReport]()},
		{Schema: "CorpusBulkItemResult", Type: reflect.TypeFor[bulkItemResult]()},
		{Schema: "CorpusBulkError", Type: reflect.TypeFor[bulkError]()},
		{Schema: "SynonymGroup", Type: reflect.TypeFor[parley.SynonymGroup]()},
		{Schema: "Product", Type: reflect.TypeFor[productJSON]()},
		{Schema: "MCPToolsSettings", Type: reflect.TypeFor[mcpSettingsJSON]()},
		{Schema: "VoiceConfig", Type: reflect.TypeFor[parley.VoiceConfig]()},
		{Schema: "VoiceSetup", Type: reflect.TypeFor[voiceSetupJSON]()},
		{Schema: "CalendarConnector", Type: reflect.TypeFor[calendarJSON]()},
		{Schema: "CalendarSlot", Type: reflect.TypeFor[tools.Slot]()},
		{Schema: "VisitorSigningKey", Type: reflect.TypeFor[visitorSigningKeyJSON]()},
		{Schema: "Submission", Type: reflect.TypeFor[submissionJSON]()},
		{Schema: "Submission.tool", Type: reflect.TypeFor[submissionToolJSON]()},
		{Schema: "WebhookEndpoint", Type: reflect.TypeFor[webhookJSON]()},
		{Schema: "WebhookDelivery", Type: reflect.TypeFor[deliveryJSON]()},
		{Schema: "WebhookDeliveryStats", Type: reflect.TypeFor[webhooks.DeliveryStats]()},
	})
}
