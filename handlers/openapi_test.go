package handlers

import (
	"reflect"
	"testing"

	"github.com/parley/parley/agent/tools"
	"github.com/parley/parley/handlers/handlerstest"
)

// TestWireStructsMatchOpenAPI compares each struct the API encodes, and
// each request body it decodes, with its schema in web/openapi.json
// (handlerstest.MatchOpenAPI: members both ways, required members, JSON
// types, nullability, nested objects and array items). The web tests
// validate live answers; this catches a member that no test happens to
// produce (an omitempty field, a rare branch).
func TestWireStructsMatchOpenAPI(t *testing.T) {
	t.Parallel()
	handlerstest.MatchOpenAPI(t, "../web/openapi.json", []handlerstest.WireType{
		{Schema: "CorpusImportError", Type: reflect.TypeFor[importError]()},
		{Schema: "CorpusImportResult", Type: reflect.TypeFor[ImportReport]()},
		{Schema: "CalendarTest", Type: reflect.TypeFor[calendarTest]()},
		{Schema: "ChatReply", Type: reflect.TypeFor[ChatReply]()},
		{Schema: "ChatToolExecution", Type: reflect.TypeFor[tools.ExecutionEnvelope]()},
		{Schema: "ChatStreamError", Type: reflect.TypeFor[chatStreamError]()},
		{Schema: "HealthStatus", Type: reflect.TypeFor[healthStatus]()},
		{Schema: "WidgetSettings", Type: reflect.TypeFor[WidgetSettingsJSON]()},
		{Schema: "WidgetSettings.segment", Type: reflect.TypeFor[widgetSegmentJSON]()},
		{Schema: "WidgetSettings.bot", Type: reflect.TypeFor[widgetBotJSON]()},
		{Schema: "WidgetSettings.launcher", Type: reflect.TypeFor[widgetLauncherJSON]()},
		{Schema: "WidgetSettings.endpoints", Type: reflect.TypeFor[WidgetEndpointsJSON]()},
		{Schema: "EmbeddingSettings", Type: reflect.TypeFor[EmbeddingsJSON]()},
		{Schema: "PaymentConnector", Type: reflect.TypeFor[paymentJSON]()},
		{Schema: "PaymentConnectorTest", Type: reflect.TypeFor[paymentTestResult]()},
		// Request bodies: what the decoders read.
		{Schema: "PaymentConnectorWrite", Type: reflect.TypeFor[PaymentBody](), Request: true},
		{Schema: "PaymentConnectorTestRequest", Type: reflect.TypeFor[PaymentBody](), Request: true,
			Absent: []string{"isActive", "currency", "defaultAmount", "defaultDescription", "successMessage"}},
		{Schema: "CalendarConnectorWrite", Type: reflect.TypeFor[CalendarBody](), Request: true},
	})
}

// TestEnumsMatchOpenAPI compares the value tables of this package with the
// enums of their schemas in web/openapi.json (handlerstest.MatchEnums).
func TestEnumsMatchOpenAPI(t *testing.T) {
	t.Parallel()
	handlerstest.MatchEnums(t, "../web/openapi.json", []handlerstest.Enum{
		{Schema: "SubmissionChannel", Values: submissionChannels},
	})
}
