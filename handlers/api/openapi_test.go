package api

import (
	"reflect"
	"slices"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/tools"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/listing"
	"github.com/parley/parley/db/webhooks"
	"github.com/parley/parley/handlers/handlerstest"
	"github.com/parley/parley/handlers/resource"
)

// TestWireStructsMatchOpenAPI compares each struct the REST API encodes, and
// each request body it decodes, with its schema in web/openapi.json
// (handlerstest.MatchOpenAPI).
func TestWireStructsMatchOpenAPI(t *testing.T) {
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
		{Schema: "AuditLog", Type: reflect.TypeFor[auditListJSON]()},
		{Schema: "RefusedOriginList", Type: reflect.TypeFor[refusedOriginListJSON]()},
		{Schema: "RefusedOrigin", Type: reflect.TypeFor[refusedOriginJSON]()},
		{Schema: "TestRunList", Type: reflect.TypeFor[testRunListJSON]()},
		{Schema: "TestRunStart", Type: reflect.TypeFor[startRunBody](), Request: true},
		{Schema: "AuditEntry", Type: reflect.TypeFor[auditEntryJSON]()},
		{Schema: "AuditActor", Type: reflect.TypeFor[auditActorJSON]()},
		{Schema: "AuditPagination", Type: reflect.TypeFor[auditPaginationJSON]()},
		{Schema: "Submission.tool", Type: reflect.TypeFor[submissionToolJSON]()},
		{Schema: "WebhookEndpoint", Type: reflect.TypeFor[webhookJSON]()},
		{Schema: "WebhookDelivery", Type: reflect.TypeFor[deliveryJSON]()},
		{Schema: "WebhookDeliveryStats", Type: reflect.TypeFor[webhooks.DeliveryStats]()},
		{Schema: "WebhookEndpointDetail", Type: reflect.TypeFor[webhookDetailJSON]()},
		{Schema: "WebhookEvent", Type: reflect.TypeFor[db.EventPayload]()},
		{Schema: "WebhookEventData", Type: reflect.TypeFor[db.EventData]()},
		{Schema: "SubmissionCreatedEvent", Type: reflect.TypeFor[db.EventPayload]()},
		{Schema: "SubmissionUpdatedEvent", Type: reflect.TypeFor[db.EventPayload](), Filled: []string{"data.previousStatus"}},
		{Schema: "ConversationEventData", Type: reflect.TypeFor[db.ConversationEventData]()},
		{Schema: "ConversationEvent", Type: reflect.TypeFor[db.ConversationEventPayload](), Filled: []string{"data.previousStatus"}},
		{Schema: "ConversationEscalatedEvent", Type: reflect.TypeFor[db.ConversationEventPayload](), Filled: []string{"data.previousStatus"}},
		{Schema: "ConversationTakenEvent", Type: reflect.TypeFor[db.ConversationEventPayload](), Filled: []string{"data.previousStatus"}},
		{Schema: "ConversationHandedBackEvent", Type: reflect.TypeFor[db.ConversationEventPayload](), Filled: []string{"data.previousStatus"}},
		{Schema: "ConversationClosedEvent", Type: reflect.TypeFor[db.ConversationEventPayload](), Filled: []string{"data.previousStatus"}},
		{Schema: "MessageEventData", Type: reflect.TypeFor[db.MessageEventData]()},
		{Schema: "MessageCreatedEvent", Type: reflect.TypeFor[db.MessageEventPayload]()},
		{Schema: "SubmissionStats", Type: reflect.TypeFor[listing.SubmissionStats]()},
		{Schema: "ConversationExportRow", Type: reflect.TypeFor[exportRowJSON]()},
		{Schema: "EmbeddingSettingsDeletion", Type: reflect.TypeFor[embeddingsDeletionJSON]()},
		{Schema: "ProductBulkResult", Type: reflect.TypeFor[productBulkReport]()},
		{Schema: "ProductBulkError", Type: reflect.TypeFor[bulkError]()},
		{Schema: "OfficeHours", Type: reflect.TypeFor[parley.OfficeHours]()},
		{Schema: "DayHours", Type: reflect.TypeFor[parley.DayHours]()},
		{Schema: "TenantEnvelope", Type: reflect.TypeFor[tenantEnvelopeJSON]()},
		{Schema: "ProductList", Type: reflect.TypeFor[productListJSON]()},
		{Schema: "SubmissionList", Type: reflect.TypeFor[submissionListJSON]()},
		{Schema: "WebhookCreated", Type: reflect.TypeFor[webhookCreatedJSON]()},
		{Schema: "WebhookList", Type: reflect.TypeFor[webhookListJSON]()},
		{Schema: "WebhookDeliveryList", Type: reflect.TypeFor[deliveryListJSON]()},
		// One pagination serves the paged listings of this package.
		{Schema: "ProductPagination", Type: reflect.TypeFor[paginationJSON]()},
		{Schema: "SubmissionPagination", Type: reflect.TypeFor[paginationJSON]()},
		{Schema: "WebhookDeliveryPagination", Type: reflect.TypeFor[paginationJSON]()},
		{Schema: "SegmentDeletion", Type: reflect.TypeFor[segmentDeletionJSON]()},
		{Schema: "MemoryFactDeletion", Type: reflect.TypeFor[memoryDeletionJSON]()},
		{Schema: "MCPToolsDeletion", Type: reflect.TypeFor[mcpSettingsDeletionJSON]()},
		// A tool's config as the API shows it: the types tool_config.go
		// reads and writes it with.
		{Schema: "BookMeetingToolConfig", Type: reflect.TypeFor[parley.MeetingConfig]()},
		{Schema: "EscalateToHumanToolConfig", Type: reflect.TypeFor[parley.EscalateConfig]()},
		{Schema: "GenerateQuoteToolConfig", Type: reflect.TypeFor[parley.QuoteConfig]()},
		{Schema: "QuoteItem", Type: reflect.TypeFor[parley.QuoteItem]()},
		{Schema: "QuoteOption", Type: reflect.TypeFor[parley.QuoteOption]()},
		{Schema: "RecommendProductToolConfig", Type: reflect.TypeFor[parley.RecommendConfig]()},
		{Schema: "RememberFactToolConfig", Type: reflect.TypeFor[parley.RememberConfig]()},
		{Schema: "SubmitFormToolConfig", Type: reflect.TypeFor[parley.SubmitFormConfig]()},
		// Request bodies: what the decoders read.
		{Schema: "BookMeetingToolConfigInput", Type: reflect.TypeFor[parley.MeetingConfig](), Request: true},
		{Schema: "EscalateToHumanToolConfigInput", Type: reflect.TypeFor[parley.EscalateConfig](), Request: true},
		{Schema: "GenerateQuoteToolConfigInput", Type: reflect.TypeFor[parley.QuoteConfig](), Request: true},
		{Schema: "QuoteItemInput", Type: reflect.TypeFor[parley.QuoteItem](), Request: true},
		{Schema: "QuoteOptionInput", Type: reflect.TypeFor[parley.QuoteOption](), Request: true},
		{Schema: "RecommendProductToolConfigInput", Type: reflect.TypeFor[parley.RecommendConfig](), Request: true},
		{Schema: "RememberFactToolConfigInput", Type: reflect.TypeFor[parley.RememberConfig](), Request: true},
		{Schema: "SubmitFormToolConfigInput", Type: reflect.TypeFor[parley.SubmitFormConfig](), Request: true},
		{Schema: "ToolFormFieldInput", Type: reflect.TypeFor[parley.FormField](), Request: true},
		{Schema: "FormConfigInput", Type: reflect.TypeFor[parley.FormConfig](), Request: true},
		{Schema: "FormFieldInput", Type: reflect.TypeFor[parley.FormField](), Request: true},
		{Schema: "StarterInput", Type: reflect.TypeFor[parley.Starter](), Request: true},
		{Schema: "TenantUpdate", Type: reflect.TypeFor[parley.TenantInput](), Request: true},
		{Schema: "EmbeddingSettingsWrite", Type: reflect.TypeFor[embeddingsBody](), Request: true},
		{Schema: "MCPToolsSettingsWrite", Type: reflect.TypeFor[mcpBody](), Request: true},
		{Schema: "ProductWrite", Type: reflect.TypeFor[parley.ProductInput](), Request: true},
		{Schema: "ProductCreate", Type: reflect.TypeFor[parley.ProductInput](), Request: true},
		{Schema: "ProductBulkItem", Type: reflect.TypeFor[parley.ProductInput](), Request: true},
		{Schema: "VisitorWrite", Type: reflect.TypeFor[parley.VisitorInput](), Request: true},
		{Schema: "VisitorCreate", Type: reflect.TypeFor[parley.VisitorInput](), Request: true},
		{Schema: "VoiceSetupManaged", Type: reflect.TypeFor[parley.VoiceSetupInput](), Request: true},
		{Schema: "VoiceSetupLink", Type: reflect.TypeFor[parley.VoiceLinkInput](), Request: true},
		{Schema: "WebhookEndpointCreate", Type: reflect.TypeFor[parley.WebhookInput](), Request: true},
		{Schema: "WebhookEndpointUpdate", Type: reflect.TypeFor[parley.WebhookInput](), Request: true},
		// A sync decodes the body twice: the page's address, and the entry
		// fields a corpus write reads, of which it drops those the fetch
		// sets (handlers.SyncURL).
		{Schema: "CorpusSyncRequest", Type: reflect.TypeFor[struct {
			syncTarget
			resource.CorpusBody
		}](), Request: true, Absent: []string{"content", "externalId", "source", "sourceUrl"}},
	})
}

// TestEnumsMatchOpenAPI compares the value tables of the Go side with the
// enums of their schemas in web/openapi.json (handlerstest.MatchEnums).
func TestEnumsMatchOpenAPI(t *testing.T) {
	t.Parallel()
	plans := make([]string, len(parley.Plans))
	for i, p := range parley.Plans {
		plans[i] = p.Name
	}
	// The update takes "" too: it clears the mode.
	authModes := append(slices.Clone(parley.VisitorAuthModes), "")
	handlerstest.MatchEnums(t, "../../web/openapi.json", []handlerstest.Enum{
		{Schema: "Plan", Values: plans},
		{Schema: "Scope", Values: auth.RESTScopes},
		{Schema: "ConversationChannel", Values: parley.ConversationChannels},
		{Schema: "ConversationStatus", Values: parley.ConversationStatuses},
		{Schema: "TenantEnvelope.recentConversations[].status", Values: parley.ConversationStatuses},
		{Schema: "ConversationStats.window.granularity", Values: parley.StatsGranularities},
		{Schema: "SubmissionStatus", Values: parley.SubmissionStatuses},
		{Schema: "ToolType", Values: parley.UserToolTypes},
		{Schema: "WebhookEventType", Values: parley.WebhookEvents},
		{Schema: "WebhookDeliveryEvent", Values: append(slices.Clone(parley.WebhookEvents), webhooks.EventWebhookTest)},
		{Schema: "WebhookDeliveryStatus", Values: []string{webhooks.DeliveryPending, webhooks.DeliverySucceeded, webhooks.DeliveryFailed, webhooks.DeliveryDropped}},
		{Schema: "FormField.type", Values: parley.FormFieldTypes},
		{Schema: "FormFieldInput.type", Values: parley.FormFieldTypes},
		{Schema: "ToolFormFieldInput.type", Values: parley.FormFieldTypes},
		{Schema: "Tenant.botTone", Values: parley.BotTones},
		{Schema: "Tenant.avatarType", Values: parley.AvatarTypes},
		{Schema: "Tenant.contentPolicy", Values: parley.ContentPolicies},
		{Schema: "Tenant.visitorAuthMode", Values: parley.VisitorAuthModes},
		{Schema: "Tenant.voiceProvider", Values: parley.VoiceProviders},
		{Schema: "TenantUpdate.botTone", Values: parley.BotTones},
		{Schema: "TenantUpdate.avatarType", Values: parley.AvatarTypes},
		{Schema: "TenantUpdate.contentPolicy", Values: parley.ContentPolicies},
		{Schema: "TenantUpdate.visitorAuthMode", Values: authModes},
		{Schema: "TenantUpdate.voiceProvider", Values: parley.VoiceProviders},
		{Schema: "WidgetSettings.bot.avatarType", Values: parley.AvatarTypes},
	})
}
