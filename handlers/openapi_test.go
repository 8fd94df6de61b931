package handlers

import (
	"reflect"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/agent"
	"github.com/parley/parley/db"
	"github.com/parley/parley/handlers/handlerstest"
)

// TestResponseStructsMatchOpenAPI compares each struct the API encodes with
// its schema in web/openapi.json: every JSON member of the struct is a
// property of the schema, and every property the schema requires is a member
// of the struct. The web tests validate live answers; this catches a member
// that no test happens to produce (an omitempty field, a rare branch).
func TestResponseStructsMatchOpenAPI(t *testing.T) {
	t.Parallel()
	handlerstest.MatchOpenAPI(t, "../web/openapi.json", []handlerstest.WireType{
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
		{Schema: "CorpusImportError", Type: reflect.TypeFor[importError]()},
		{Schema: "CorpusImportResult", Type: reflect.TypeFor[importReport]()},
		{Schema: "SynonymGroup", Type: reflect.TypeFor[parley.SynonymGroup]()},
		{Schema: "Product", Type: reflect.TypeFor[productJSON]()},
		{Schema: "MCPToolsSettings", Type: reflect.TypeFor[mcpSettingsJSON]()},
		{Schema: "VoiceConfig", Type: reflect.TypeFor[parley.VoiceConfig]()},
		{Schema: "VoiceSetup", Type: reflect.TypeFor[voiceSetupJSON]()},
		{Schema: "CalendarConnector", Type: reflect.TypeFor[calendarJSON]()},
		{Schema: "CalendarTest", Type: reflect.TypeFor[calendarTest]()},
		{Schema: "CalendarSlot", Type: reflect.TypeFor[agent.Slot]()},
		{Schema: "VisitorSigningKey", Type: reflect.TypeFor[visitorSigningKeyJSON]()},
		{Schema: "Submission", Type: reflect.TypeFor[submissionJSON]()},
		{Schema: "Submission.tool", Type: reflect.TypeFor[submissionToolJSON]()},
		{Schema: "WebhookEndpoint", Type: reflect.TypeFor[webhookJSON]()},
		{Schema: "WebhookDelivery", Type: reflect.TypeFor[deliveryJSON]()},
		{Schema: "WebhookDeliveryStats", Type: reflect.TypeFor[db.DeliveryStats]()},
		{Schema: "ChatReply", Type: reflect.TypeFor[ChatReply]()},
		{Schema: "WidgetSettings", Type: reflect.TypeFor[WidgetSettingsJSON]()},
		{Schema: "WidgetSettings.segment", Type: reflect.TypeFor[widgetSegmentJSON]()},
		{Schema: "WidgetSettings.bot", Type: reflect.TypeFor[widgetBotJSON]()},
		{Schema: "WidgetSettings.launcher", Type: reflect.TypeFor[widgetLauncherJSON]()},
		{Schema: "WidgetSettings.endpoints", Type: reflect.TypeFor[WidgetEndpointsJSON]()},
	})
}
