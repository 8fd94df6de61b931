package handlers

import (
	"reflect"
	"testing"

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
		{Schema: "CorpusImportError", Type: reflect.TypeFor[importError]()},
		{Schema: "CorpusImportResult", Type: reflect.TypeFor[ImportReport]()},
		{Schema: "CalendarTest", Type: reflect.TypeFor[calendarTest]()},
		{Schema: "ChatReply", Type: reflect.TypeFor[ChatReply]()},
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
