package voice

import (
	"reflect"
	"testing"

	"github.com/parley/parley/agent/outbound/vapi"
	"github.com/parley/parley/handlers/handlerstest"
)

// TestWireStructsMatchOpenAPI compares each struct the voice endpoints
// encode or decode with its schema in web/openapi.json
// (handlerstest.MatchOpenAPI).
func TestWireStructsMatchOpenAPI(t *testing.T) {
	t.Parallel()
	handlerstest.MatchOpenAPI(t, "../../web/openapi.json", []handlerstest.WireType{
		{Schema: "VoiceAssistant", Type: reflect.TypeFor[vapi.Assistant]()},
		{Schema: "VoiceChatCompletion", Type: reflect.TypeFor[voiceCompletion]()},
		{Schema: "VoiceEventResponse", Type: reflect.TypeFor[voiceEventReply]()},
		// Request bodies: what the decoders read.
		{Schema: "VoiceEventRequest.message", Type: reflect.TypeFor[voiceEvent](), Request: true},
		{Schema: "VoiceChatRequest.messages[]", Type: reflect.TypeFor[voiceMessage](), Request: true},
		{Schema: "VoiceChatRequest.call", Type: reflect.TypeFor[voiceCallRef](), Request: true},
	})
}
