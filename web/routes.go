package web

import (
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/public"
)

// routes is the whole HTTP surface of Parley, in one place.
func (s *Server) routes() {
	e, h := s.Echo, s.Admin
	e.Pre(middleware.RemoveTrailingSlash())
	e.Use(middleware.RequestID())
	e.Use(s.logRequests)
	e.Use(middleware.Recover())
	e.Use(bodyDeadline(s.Config.BodyTimeout))
	e.Use(publicCORS())
	e.Use(s.securityHeaders)
	e.Use(checkText)

	e.GET("/healthz", s.Base.Healthz)
	e.GET("/readyz", s.Base.Readyz)
	e.GET("/openapi.json", serveOpenAPI)
	staticFiles := serveStatic()
	e.GET("/static/*", staticFiles)
	e.HEAD("/static/*", staticFiles)
	e.GET("/widget.js", public.WidgetScript)
	e.GET("/avatars/:slug", h.ShowAvatar)

	// Public agent surface.
	e.GET("/context/:slug", s.Public.ShowContext)
	e.POST("/chat/:slug", s.Public.Chat)
	e.POST("/chat/:slug/feedback", s.Public.SaveChatFeedback)
	e.GET("/chat/:slug/widget", s.Public.ShowWidgetSettings)
	e.POST("/form/:slug", s.Public.SubmitForm)

	// Voice channel: the orchestrator's custom LLM and server URL,
	// authenticated by the tenant's voice secret (no per-address limit: an
	// orchestrator's calls share its addresses).
	e.POST("/voice/:slug/chat", s.Voice.Chat, requireJSON)
	e.POST("/voice/:slug/chat/completions", s.Voice.Chat, requireJSON)
	e.POST("/voice/:slug/events", s.Voice.Events, requireJSON)

	// Parley's own MCP server (Streamable HTTP, stateless: GET and DELETE answer 405).
	serveMCP := s.MCP.NewServer()
	e.POST(handlers.MCPPath, serveMCP, s.mcpAPI, requireJSON)
	e.GET(handlers.MCPPath, serveMCP, s.mcpAPI)
	e.DELETE(handlers.MCPPath, serveMCP, s.mcpAPI)

	// OAuth 2.1 authorization server (the consent page is the dashboard's).
	e.GET("/.well-known/oauth-authorization-server", s.OAuth.ShowAuthServerMetadata)
	e.GET("/.well-known/oauth-protected-resource", s.OAuth.ShowResourceMetadata)
	e.GET("/.well-known/oauth-protected-resource/mcp", s.OAuth.ShowMCPResourceMetadata)
	e.GET("/.well-known/jwks.json", s.OAuth.ShowJWKS)
	e.POST("/oauth/register", s.OAuth.RegisterClient, s.oauthLimit("register", s.OAuthLimits.Register, time.Hour), requireJSON)
	// The authorization endpoint answers a refused request with a page: the
	// dashboard's headers (CSP, no frames, no caching) go with it.
	e.GET("/oauth/authorize", s.OAuth.Authorize, s.oauthLimit("authorize", s.OAuthLimits.Authorize, time.Minute), s.adminHeaders())
	e.POST("/oauth/token", s.OAuth.Token, s.oauthLimit("token", s.OAuthLimits.Token, time.Minute))
	e.POST("/oauth/revoke", s.OAuth.Revoke, s.oauthLimit("revoke", s.OAuthLimits.Revoke, time.Minute))

	// Management REST API. Every endpoint that reads a JSON body refuses
	// another type with 415 (requireJSON); the CSV import is multipart.
	api := e.Group("/tenants/:slug", s.tenantAPI)
	api.GET("", s.API.ShowTenant, requireScope(auth.ScopeSettingsRead))
	api.PUT("", s.API.UpdateTenant, requireScope(auth.ScopeSettingsWrite), requireJSON)
	api.GET("/stats", s.API.ShowTenantStats, requireScope(auth.ScopeSettingsRead))

	api.GET("/segments", s.API.ListSegments, requireScope(auth.ScopeSegmentsRead))
	api.POST("/segments", s.API.CreateSegment, requireScope(auth.ScopeSegmentsWrite), requireJSON)
	api.GET("/segments/:id", s.API.ShowSegment, requireScope(auth.ScopeSegmentsRead))
	api.PUT("/segments/:id", s.API.UpdateSegment, requireScope(auth.ScopeSegmentsWrite), requireJSON)
	api.PATCH("/segments/:id", s.API.UpdateSegment, requireScope(auth.ScopeSegmentsWrite), requireJSON)
	api.DELETE("/segments/:id", s.API.DeleteSegment, requireScope(auth.ScopeSegmentsWrite))

	api.GET("/corpus", s.API.ListCorpus, requireScope(auth.ScopeCorpusRead))
	api.POST("/corpus", s.API.CreateCorpus, requireScope(auth.ScopeCorpusWrite), requireJSON)
	api.POST("/corpus/bulk", s.API.BulkCorpus, requireScope(auth.ScopeCorpusWrite), requireJSON)
	api.POST("/corpus/import", s.API.ImportCorpus, requireScope(auth.ScopeCorpusWrite))
	api.POST("/corpus/sync", s.API.SyncCorpus, requireScope(auth.ScopeCorpusWrite), requireJSON)
	api.GET("/corpus/:id", s.API.ShowCorpus, requireScope(auth.ScopeCorpusRead))
	api.PUT("/corpus/:id", s.API.UpdateCorpus, requireScope(auth.ScopeCorpusWrite), requireJSON)
	api.PATCH("/corpus/:id", s.API.UpdateCorpus, requireScope(auth.ScopeCorpusWrite), requireJSON)
	api.DELETE("/corpus/:id", s.API.DeleteCorpus, requireScope(auth.ScopeCorpusWrite))
	api.GET("/synonyms", s.API.ListSynonyms, requireScope(auth.ScopeCorpusRead))
	api.POST("/synonyms", s.API.CreateSynonyms, requireScope(auth.ScopeCorpusWrite), requireJSON)
	api.GET("/synonyms/:id", s.API.ShowSynonyms, requireScope(auth.ScopeCorpusRead))
	api.PUT("/synonyms/:id", s.API.UpdateSynonyms, requireScope(auth.ScopeCorpusWrite), requireJSON)
	api.PATCH("/synonyms/:id", s.API.UpdateSynonyms, requireScope(auth.ScopeCorpusWrite), requireJSON)
	api.DELETE("/synonyms/:id", s.API.DeleteSynonyms, requireScope(auth.ScopeCorpusWrite))

	api.GET("/tools", s.API.ListTools, requireScope(auth.ScopeToolsRead))
	api.POST("/tools", s.API.CreateTool, requireScope(auth.ScopeToolsWrite), requireJSON)
	api.GET("/tools/:id", s.API.ShowTool, requireScope(auth.ScopeToolsRead))
	api.PATCH("/tools/:id", s.API.UpdateTool, requireScope(auth.ScopeToolsWrite), requireJSON)
	api.DELETE("/tools/:id", s.API.DeleteTool, requireScope(auth.ScopeToolsWrite))

	// Products are the catalog of RECOMMEND_PRODUCT; they configure tools, hence the tools scopes.
	api.GET("/products", s.API.ListProducts, requireScope(auth.ScopeToolsRead))
	api.POST("/products", s.API.CreateProduct, requireScope(auth.ScopeToolsWrite), requireJSON)
	api.POST("/products/bulk", s.API.BulkProducts, requireScope(auth.ScopeToolsWrite), requireJSON)
	api.GET("/products/:id", s.API.ShowProduct, requireScope(auth.ScopeToolsRead))
	api.PUT("/products/:id", s.API.UpdateProduct, requireScope(auth.ScopeToolsWrite), requireJSON)
	api.PATCH("/products/:id", s.API.UpdateProduct, requireScope(auth.ScopeToolsWrite), requireJSON)
	api.DELETE("/products/:id", s.API.DeleteProduct, requireScope(auth.ScopeToolsWrite))

	api.GET("/visitors", s.API.ListVisitors, requireScope(auth.ScopeVisitorsRead))
	api.POST("/visitors", s.API.CreateVisitor, requireScope(auth.ScopeVisitorsWrite), requireJSON)
	api.GET("/visitors/:visitorId", s.API.ShowVisitor, requireScope(auth.ScopeVisitorsRead))
	api.PATCH("/visitors/:visitorId", s.API.UpdateVisitor, requireScope(auth.ScopeVisitorsWrite), requireJSON)
	api.DELETE("/visitors/:visitorId", s.API.DeleteVisitor, requireScope(auth.ScopeVisitorsWrite))
	api.GET("/visitors/:visitorId/memory", s.API.ListMemory, requireScope(auth.ScopeVisitorsRead))
	api.POST("/visitors/:visitorId/memory", s.API.SaveMemory, requireScope(auth.ScopeVisitorsWrite), requireJSON)
	api.GET("/visitors/:visitorId/memory/:key", s.API.ShowMemory, requireScope(auth.ScopeVisitorsRead))
	api.DELETE("/visitors/:visitorId/memory/:key", s.API.DeleteMemory, requireScope(auth.ScopeVisitorsWrite))

	api.GET("/mcp-tools", s.API.ShowMCPSettings, requireScope(auth.ScopeSettingsRead))
	api.PUT("/mcp-tools", s.API.UpdateMCPSettings, requireScope(auth.ScopeSettingsWrite), requireJSON)
	api.DELETE("/mcp-tools", s.API.DeleteMCPSettings, requireScope(auth.ScopeSettingsWrite))
	api.GET("/embeddings", s.API.ShowEmbeddings, requireScope(auth.ScopeSettingsRead))
	api.PUT("/embeddings", s.API.UpdateEmbeddings, requireScope(auth.ScopeSettingsWrite), requireJSON)
	api.DELETE("/embeddings", s.API.DeleteEmbeddings, requireScope(auth.ScopeSettingsWrite))
	api.POST("/voice/setup", s.API.SetUpVoice, requireScope(auth.ScopeSettingsWrite), requireJSON)
	api.PUT("/voice/setup", s.API.LinkVoice, requireScope(auth.ScopeSettingsWrite), requireJSON)
	api.GET("/integrations/payments", s.API.ShowPaymentConnector, requireScope(auth.ScopeSettingsRead))
	api.PUT("/integrations/payments", s.API.UpdatePaymentConnector, requireScope(auth.ScopeSettingsWrite), requireJSON)
	api.DELETE("/integrations/payments", s.API.DeletePaymentConnector, requireScope(auth.ScopeSettingsWrite))
	api.POST("/integrations/payments/test", s.API.TestPaymentConnector, requireScope(auth.ScopeSettingsWrite), requireJSON)
	api.GET("/integrations/calendar", s.API.ShowCalendarConnector, requireScope(auth.ScopeSettingsRead))
	api.PUT("/integrations/calendar", s.API.UpdateCalendarConnector, requireScope(auth.ScopeSettingsWrite), requireJSON)
	api.DELETE("/integrations/calendar", s.API.DeleteCalendarConnector, requireScope(auth.ScopeSettingsWrite))
	api.POST("/integrations/calendar/test", s.API.TestCalendarConnector, requireScope(auth.ScopeSettingsWrite))
	api.POST("/visitor-signing-key/rotate", s.API.RotateVisitorSigningKey, requireScope(auth.ScopeSettingsWrite))

	api.GET("/webhooks", s.API.ListWebhooks, requireScope(auth.ScopeSettingsRead))
	api.POST("/webhooks", s.API.CreateWebhook, requireScope(auth.ScopeSettingsWrite), requireJSON)
	api.GET("/webhooks/:id", s.API.ShowWebhook, requireScope(auth.ScopeSettingsRead))
	api.PATCH("/webhooks/:id", s.API.UpdateWebhook, requireScope(auth.ScopeSettingsWrite), requireJSON)
	api.DELETE("/webhooks/:id", s.API.DeleteWebhook, requireScope(auth.ScopeSettingsWrite))
	api.GET("/webhooks/:id/deliveries", s.API.ListWebhookDeliveries, requireScope(auth.ScopeSettingsRead))
	api.POST("/webhooks/:id/deliveries/:deliveryId/redeliver", s.API.RedeliverWebhook, requireScope(auth.ScopeSettingsWrite))

	api.GET("/conversations", s.API.ListConversations, requireScope(auth.ScopeConversationsRead))
	api.GET("/conversations/export", s.API.ExportConversations, requireScope(auth.ScopeConversationsRead))
	api.GET("/conversations/stats", s.API.ShowConversationStats, requireScope(auth.ScopeStatsRead))
	api.GET("/conversations/stats/export", s.API.ExportConversationStats, requireScope(auth.ScopeStatsRead))
	api.GET("/conversations/:id", s.API.ShowConversation, requireScope(auth.ScopeConversationsRead))

	api.GET("/submissions", s.API.ListSubmissions, requireScope(auth.ScopeConversationsRead))
	api.PUT("/submissions/:id", s.API.UpdateSubmission, requireScope(auth.ScopeConversationsWrite), requireJSON)
	api.DELETE("/submissions/:id", s.API.DeleteSubmission, requireScope(auth.ScopeConversationsWrite))

	// A call's recording, relayed from the orchestrator's storage: for an API
	// token of the tenant with conversations:read (the dashboard's player has
	// its own route under /admin).
	e.GET("/voice/:slug/recordings/:callId", s.API.ShowVoiceRecording, s.tenantAPI, requireScope(auth.ScopeConversationsRead))

	// Admin dashboard.
	admin := e.Group("/admin", s.adminHeaders(), adminBodyLimit, echo.WrapMiddleware(s.Sessions.LoadAndSave), s.adminCSRF(), checkFormText)
	admin.GET("/login", h.ShowLoginPage)
	admin.POST("/login", h.Login)
	admin.GET("/forgot-password", h.ShowForgotPasswordPage)
	admin.POST("/forgot-password", h.SendPasswordReset)
	admin.GET("/reset-password", h.ShowResetPasswordPage)
	admin.POST("/reset-password", h.SaveNewPassword)
	signedIn := admin.Group("", h.RequireAdmin)
	signedIn.POST("/logout", h.Logout)
	signedIn.POST("/tenant", h.SwitchTenant)
	signedIn.GET("", h.ShowOverviewPage)
	signedIn.GET("/conversations", h.ShowConversationsPage)
	signedIn.GET("/conversations/:id", h.ShowConversationPage)
	signedIn.GET("/analytics", h.ShowAnalyticsPage)
	signedIn.GET("/analytics/export", h.ExportAnalytics)
	signedIn.GET("/test-chat", h.ShowTestChatPage)
	signedIn.POST("/test-chat", h.SendTestMessage)
	signedIn.GET("/settings", h.ShowSettingsPage)
	signedIn.POST("/settings", h.SaveSettings)
	signedIn.GET("/settings/widget", h.ShowSettingsPage)
	signedIn.POST("/settings/widget", h.SaveSettings)
	signedIn.GET("/settings/developer", h.ShowSettingsPage)
	signedIn.POST("/settings/developer", h.SaveSettings)
	signedIn.POST("/settings/widget-key", h.SaveWidgetKey)
	signedIn.POST("/settings/avatar", h.SaveAvatar)
	signedIn.POST("/settings/visitor-signing-key", h.SaveVisitorSigningKey)
	signedIn.GET("/tokens", h.ShowTokensPage)
	signedIn.POST("/tokens", h.SaveToken)
	signedIn.POST("/tokens/:id/revoke", h.RevokeToken)
	signedIn.GET("/oauth/consent", h.ShowConsentPage)
	signedIn.POST("/oauth/consent", h.SaveConsent)
	signedIn.GET("/connected-apps", h.ShowConnectedAppsPage)
	signedIn.POST("/connected-apps/:client/revoke", h.RevokeConnectedApp)
	signedIn.GET("/segments", h.ShowSegmentsPage)
	signedIn.GET("/segments/new", h.ShowSegmentPage)
	signedIn.POST("/segments", h.SaveSegment)
	signedIn.GET("/segments/:id", h.ShowSegmentPage)
	signedIn.POST("/segments/:id", h.SaveSegment)
	signedIn.POST("/segments/:id/delete", h.RemoveSegment)
	signedIn.GET("/corpus", h.ShowCorpusPage)
	signedIn.GET("/corpus/new", h.ShowCorpusEntryPage)
	signedIn.POST("/corpus", h.SaveCorpusEntry)
	signedIn.POST("/corpus/import", h.SaveCorpusImport)
	signedIn.POST("/corpus/sync", h.SaveCorpusSync)
	signedIn.GET("/corpus/synonyms", h.ShowSynonymsPage)
	signedIn.POST("/corpus/synonyms", h.SaveNewSynonyms)
	signedIn.POST("/corpus/synonyms/:id", h.SaveSynonyms)
	signedIn.POST("/corpus/synonyms/:id/delete", h.RemoveSynonyms)
	signedIn.GET("/corpus/embeddings", h.ShowEmbeddingsPage)
	signedIn.GET("/corpus/embeddings/status", h.ShowEmbeddingsStatus)
	signedIn.POST("/corpus/embeddings", h.SaveEmbeddingsPage)
	signedIn.POST("/corpus/embeddings/delete", h.RemoveEmbeddingsPage)
	signedIn.GET("/corpus/:id", h.ShowCorpusEntryPage)
	signedIn.POST("/corpus/:id", h.SaveCorpusEntry)
	signedIn.POST("/corpus/:id/delete", h.RemoveCorpusEntry)
	signedIn.GET("/tools", h.ShowToolsPage)
	signedIn.GET("/tools/new", h.ShowNewToolPage)
	signedIn.GET("/tools/config-fields", h.ShowToolConfigFields)
	signedIn.POST("/tools", h.SaveNewTool)
	signedIn.GET("/tools/:id", h.ShowEditToolPage)
	signedIn.POST("/tools/:id", h.SaveTool)
	signedIn.POST("/tools/:id/delete", h.RemoveTool)
	signedIn.GET("/products", h.ShowProductsPage)
	signedIn.GET("/products/new", h.ShowNewProductPage)
	signedIn.POST("/products", h.SaveNewProduct)
	signedIn.GET("/products/:id", h.ShowEditProductPage)
	signedIn.POST("/products/:id", h.SaveProduct)
	signedIn.POST("/products/:id/delete", h.RemoveProduct)
	signedIn.GET("/visitors", h.ShowVisitorsPage)
	signedIn.GET("/visitors/:id", h.ShowVisitorPage)
	signedIn.POST("/visitors/:id", h.SaveVisitor)
	signedIn.POST("/visitors/:id/erase", h.EraseVisitor)
	signedIn.POST("/visitors/:id/memory", h.SaveMemoryFact)
	signedIn.POST("/visitors/:id/memory/:key/delete", h.RemoveMemoryFact)
	signedIn.GET("/submissions", h.ShowSubmissionsPage)
	signedIn.GET("/submissions/export.csv", h.ExportSubmissions)
	signedIn.GET("/submissions/:id", h.ShowSubmissionPage)
	signedIn.POST("/submissions/:id/status", h.SaveSubmissionStatus)
	signedIn.POST("/submissions/:id/delete", h.RemoveSubmission)
	signedIn.GET("/mcp-tools", h.ShowMCPPage)
	signedIn.POST("/mcp-tools", h.SaveMCPSettings)
	signedIn.POST("/mcp-tools/delete", h.RemoveMCPSettings)
	signedIn.GET("/voice", h.ShowVoicePage)
	signedIn.POST("/voice", h.SaveVoiceSettings)
	signedIn.POST("/voice/setup", h.SaveManagedVoiceSetup)
	signedIn.POST("/voice/link", h.SaveVoiceLink)
	signedIn.GET("/voice/calls/:callId/recording", h.ShowVoiceCallRecording)
	signedIn.GET("/integrations/payments", h.ShowPaymentsPage)
	signedIn.POST("/integrations/payments", h.SavePayments)
	signedIn.POST("/integrations/payments/test", h.TestPayments)
	signedIn.POST("/integrations/payments/delete", h.RemovePayments)
	signedIn.GET("/integrations/calendar", h.ShowCalendarPage)
	signedIn.POST("/integrations/calendar", h.SaveCalendarConnector)
	signedIn.POST("/integrations/calendar/test", h.TestCalendarConnection)
	signedIn.POST("/integrations/calendar/delete", h.RemoveCalendarConnector)
	signedIn.POST("/mcp-tools/discover", h.DiscoverMCPTools)
	signedIn.GET("/integrations", h.ShowIntegrationsPage)
	signedIn.POST("/integrations/context-webhook/test", h.SendContextTest)
	signedIn.GET("/webhooks", h.ShowWebhooksPage)
	signedIn.POST("/webhooks", h.SaveNewWebhook)
	signedIn.GET("/webhooks/:id", h.ShowWebhookPage)
	signedIn.POST("/webhooks/:id", h.SaveWebhook)
	signedIn.POST("/webhooks/:id/enabled", h.ToggleWebhook)
	signedIn.POST("/webhooks/:id/delete", h.RemoveWebhook)
	signedIn.POST("/webhooks/:id/deliveries/:deliveryId/redeliver", h.RedeliverWebhookDelivery)
	signedIn.POST("/webhooks/:id/test", h.SendTestEvent)
	signedIn.POST("/webhooks/:id/secret", h.RotateWebhookSecret)
	signedIn.GET("/webhooks/:id/test/:deliveryId", h.ShowTestEventResult)

	e.GET("/", func(c echo.Context) error { return c.Redirect(http.StatusSeeOther, "/admin") })
}

// publicCORS lets pages on other sites call the public agent surface (chat,
// feedback, the form widget, context discovery) from a browser: any origin,
// no cookies. The Origin gate of chat and forms still refuses pages outside
// the tenant's allowedDomains; CORS only stops the browser hiding answers
// the tenant means its own pages to read. Preflights are answered for these
// paths only; the management API and the dashboard send no CORS headers.
func publicCORS() echo.MiddlewareFunc {
	return middleware.CORSWithConfig(middleware.CORSConfig{
		Skipper: func(c echo.Context) bool {
			p := c.Request().URL.Path
			return !strings.HasPrefix(p, "/chat/") && !strings.HasPrefix(p, "/form/") && !strings.HasPrefix(p, "/context/")
		},
		AllowOrigins: []string{"*"},
		AllowMethods: []string{http.MethodGet, http.MethodPost},
		AllowHeaders: []string{"Content-Type", "If-None-Match", "X-Widget-Key", "X-Visitor-Id", "X-Visitor-Token", "X-Service-Locale",
			"X-Service-Admin-Token", "X-Agent-Model", "X-API-Key", "X-LLM-Key", "X-LLM-Provider", "X-LLM-Model", "X-LLM-Base-Url"},
		ExposeHeaders: []string{"X-AI-Generated", "Retry-After", "ETag", echo.HeaderXRequestID},
		MaxAge:        600,
	})
}
