package public

import (
	"reflect"
	"testing"

	"github.com/parley/parley/handlers/handlerstest"
)

// TestWireStructsMatchOpenAPI compares each struct the public surface
// encodes or decodes with its schema in web/openapi.json
// (handlerstest.MatchOpenAPI).
func TestWireStructsMatchOpenAPI(t *testing.T) {
	t.Parallel()
	handlerstest.MatchOpenAPI(t, "../../web/openapi.json", []handlerstest.WireType{
		{Schema: "ChatFeedback", Type: reflect.TypeFor[chatFeedbackReply]()},
		{Schema: "FormSubmission", Type: reflect.TypeFor[formReply]()},
		{Schema: "ContextDiscovery", Type: reflect.TypeFor[contextJSON]()},
		{Schema: "ContextDiscovery.tenant", Type: reflect.TypeFor[contextTenantJSON]()},
		{Schema: "ContextDiscovery.endpoints", Type: reflect.TypeFor[contextEndpointsJSON]()},
		{Schema: "ChatStreamStatus", Type: reflect.TypeFor[streamStatus]()},
		{Schema: "ChatStreamMessage", Type: reflect.TypeFor[streamMessage]()},
		{Schema: "ChatStreamTyping", Type: reflect.TypeFor[streamTyping]()},
		// Request bodies: what the decoders read.
		{Schema: "ChatRequest", Type: reflect.TypeFor[chatRequest](), Request: true},
		{Schema: "ChatFeedbackRequest", Type: reflect.TypeFor[chatFeedbackRequest](), Request: true},
		{Schema: "ChatTypingRequest", Type: reflect.TypeFor[chatTypingRequest](), Request: true},
		{Schema: "FormSubmitRequest", Type: reflect.TypeFor[formRequest](), Request: true},
	})
}
