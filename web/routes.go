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
	e.Use(s.metricsMiddleware) // outermost: the status it counts is the one written
	e.Use(middleware.RequestID())
	s.traceRequests(e)
	e.Use(s.logRequests)
	e.Use(middleware.Recover())
	e.Use(bodyDeadline(s.Config.BodyTimeout))
	e.Use(publicCORS())
	e.Use(s.securityHeaders)
	e.Use(checkText)

	e.GET("/healthz", s.Base.Healthz)
	e.GET("/readyz", s.Base.Readyz)
	e.GET(MetricsPath, s.ShowMetrics)
	e.GET("/openapi.json", serveOpenAPI)
	e.GET(DocsPath, showDocs)
	for _, alias := range DocsAliases {
		e.GET(alias, redirectToDocs)
	}
	staticFiles := serveStatic()
	e.GET("/static/*", staticFiles)
	e.HEAD("/static/*", staticFiles)
	e.GET("/widget.js", public.WidgetScript)
	e.GET("/avatars/:slug", h.Settings.ShowAvatar)

	// Public agent surface.
	e.GET("/context/:slug", s.Public.ShowContext)
	e.POST("/chat/:slug", s.Public.Chat)
	e.POST("/chat/:slug/feedback", s.Public.SaveChatFeedback)
	e.GET("/chat/:slug/widget", s.Public.ShowWidgetSettings)
	e.GET("/chat/:slug/stream", s.Public.StreamChat)
	e.POST("/chat/:slug/typing", s.Public.SignalTyping)
	e.POST("/form/:slug", s.Public.SubmitForm, s.Idempotency.KeepForm)

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
	api := e.Group("/tenants/:slug", s.tenantAPI, s.Idempotency.Keep, s.Audit.Record)
	api.GET("", s.API.Settings.ShowTenant, requireScope(auth.ScopeSettingsRead))
	api.PUT("", s.API.Settings.UpdateTenant, requireScope(auth.ScopeSettingsWrite), requireJSON)
	api.GET("/stats", s.API.Settings.ShowTenantStats, requireScope(auth.ScopeSettingsRead))

	api.GET("/segments", s.API.Settings.ListSegments, requireScope(auth.ScopeSegmentsRead))
	api.POST("/segments", s.API.Settings.CreateSegment, requireScope(auth.ScopeSegmentsWrite), requireJSON)
	api.GET("/segments/:id", s.API.Settings.ShowSegment, requireScope(auth.ScopeSegmentsRead))
	api.PUT("/segments/:id", s.API.Settings.UpdateSegment, requireScope(auth.ScopeSegmentsWrite), requireJSON)
	api.PATCH("/segments/:id", s.API.Settings.UpdateSegment, requireScope(auth.ScopeSegmentsWrite), requireJSON)
	api.DELETE("/segments/:id", s.API.Settings.DeleteSegment, requireScope(auth.ScopeSegmentsWrite))

	api.GET("/corpus", s.API.Knowledge.ListCorpus, requireScope(auth.ScopeCorpusRead))
	api.POST("/corpus", s.API.Knowledge.CreateCorpus, requireScope(auth.ScopeCorpusWrite), requireJSON)
	api.POST("/corpus/bulk", s.API.Knowledge.BulkCorpus, requireScope(auth.ScopeCorpusWrite), requireJSON)
	api.POST("/corpus/import", s.API.Knowledge.ImportCorpus, requireScope(auth.ScopeCorpusWrite))
	api.POST("/corpus/sync", s.API.Knowledge.SyncCorpus, requireScope(auth.ScopeCorpusWrite), requireJSON)
	api.GET("/corpus/:id", s.API.Knowledge.ShowCorpus, requireScope(auth.ScopeCorpusRead))
	api.PUT("/corpus/:id", s.API.Knowledge.UpdateCorpus, requireScope(auth.ScopeCorpusWrite), requireJSON)
	api.PATCH("/corpus/:id", s.API.Knowledge.UpdateCorpus, requireScope(auth.ScopeCorpusWrite), requireJSON)
	api.DELETE("/corpus/:id", s.API.Knowledge.DeleteCorpus, requireScope(auth.ScopeCorpusWrite))
	api.GET("/knowledge-gaps", s.API.Knowledge.ListKnowledgeGaps, requireScope(auth.ScopeConversationsRead))
	api.POST("/knowledge-gaps/state", s.API.Knowledge.MarkKnowledgeGap, requireScope(auth.ScopeCorpusWrite), requireJSON)
	api.GET("/synonyms", s.API.Knowledge.ListSynonyms, requireScope(auth.ScopeCorpusRead))
	api.POST("/synonyms", s.API.Knowledge.CreateSynonyms, requireScope(auth.ScopeCorpusWrite), requireJSON)
	api.GET("/synonyms/:id", s.API.Knowledge.ShowSynonyms, requireScope(auth.ScopeCorpusRead))
	api.PUT("/synonyms/:id", s.API.Knowledge.UpdateSynonyms, requireScope(auth.ScopeCorpusWrite), requireJSON)
	api.PATCH("/synonyms/:id", s.API.Knowledge.UpdateSynonyms, requireScope(auth.ScopeCorpusWrite), requireJSON)
	api.DELETE("/synonyms/:id", s.API.Knowledge.DeleteSynonyms, requireScope(auth.ScopeCorpusWrite))
	api.GET("/tests", s.API.Tests.ListTests, requireScope(auth.ScopeCorpusRead))
	api.POST("/tests", s.API.Tests.CreateTest, requireScope(auth.ScopeCorpusWrite), requireJSON)
	api.GET("/tests/runs", s.API.Tests.ListTestRuns, requireScope(auth.ScopeCorpusRead))
	api.POST("/tests/runs", s.API.Tests.StartTestRun, requireScope(auth.ScopeCorpusWrite), requireJSON)
	api.GET("/tests/runs/:id", s.API.Tests.ShowTestRun, requireScope(auth.ScopeCorpusRead))
	api.GET("/tests/:id", s.API.Tests.ShowTest, requireScope(auth.ScopeCorpusRead))
	api.PUT("/tests/:id", s.API.Tests.UpdateTest, requireScope(auth.ScopeCorpusWrite), requireJSON)
	api.PATCH("/tests/:id", s.API.Tests.UpdateTest, requireScope(auth.ScopeCorpusWrite), requireJSON)
	api.DELETE("/tests/:id", s.API.Tests.DeleteTest, requireScope(auth.ScopeCorpusWrite))

	api.GET("/tools", s.API.Tools.ListTools, requireScope(auth.ScopeToolsRead))
	api.POST("/tools", s.API.Tools.CreateTool, requireScope(auth.ScopeToolsWrite), requireJSON)
	api.GET("/tools/:id", s.API.Tools.ShowTool, requireScope(auth.ScopeToolsRead))
	api.PATCH("/tools/:id", s.API.Tools.UpdateTool, requireScope(auth.ScopeToolsWrite), requireJSON)
	api.DELETE("/tools/:id", s.API.Tools.DeleteTool, requireScope(auth.ScopeToolsWrite))

	// Products are the catalog of RECOMMEND_PRODUCT; they configure tools, hence the tools scopes.
	api.GET("/products", s.API.Tools.ListProducts, requireScope(auth.ScopeToolsRead))
	api.POST("/products", s.API.Tools.CreateProduct, requireScope(auth.ScopeToolsWrite), requireJSON)
	api.POST("/products/bulk", s.API.Tools.BulkProducts, requireScope(auth.ScopeToolsWrite), requireJSON)
	api.GET("/products/:id", s.API.Tools.ShowProduct, requireScope(auth.ScopeToolsRead))
	api.PUT("/products/:id", s.API.Tools.UpdateProduct, requireScope(auth.ScopeToolsWrite), requireJSON)
	api.PATCH("/products/:id", s.API.Tools.UpdateProduct, requireScope(auth.ScopeToolsWrite), requireJSON)
	api.DELETE("/products/:id", s.API.Tools.DeleteProduct, requireScope(auth.ScopeToolsWrite))

	api.GET("/visitors", s.API.Leads.ListVisitors, requireScope(auth.ScopeVisitorsRead))
	api.POST("/visitors", s.API.Leads.CreateVisitor, requireScope(auth.ScopeVisitorsWrite), requireJSON)
	api.GET("/visitors/:visitorId", s.API.Leads.ShowVisitor, requireScope(auth.ScopeVisitorsRead))
	api.PATCH("/visitors/:visitorId", s.API.Leads.UpdateVisitor, requireScope(auth.ScopeVisitorsWrite), requireJSON)
	api.DELETE("/visitors/:visitorId", s.API.Leads.DeleteVisitor, requireScope(auth.ScopeVisitorsWrite))
	api.GET("/visitors/:visitorId/memory", s.API.Leads.ListMemory, requireScope(auth.ScopeVisitorsRead))
	api.POST("/visitors/:visitorId/memory", s.API.Leads.SaveMemory, requireScope(auth.ScopeVisitorsWrite), requireJSON)
	api.GET("/visitors/:visitorId/memory/:key", s.API.Leads.ShowMemory, requireScope(auth.ScopeVisitorsRead))
	api.DELETE("/visitors/:visitorId/memory/:key", s.API.Leads.DeleteMemory, requireScope(auth.ScopeVisitorsWrite))

	api.GET("/mcp-tools", s.API.Integrations.ShowMCPSettings, requireScope(auth.ScopeSettingsRead))
	api.PUT("/mcp-tools", s.API.Integrations.UpdateMCPSettings, requireScope(auth.ScopeSettingsWrite), requireJSON)
	api.DELETE("/mcp-tools", s.API.Integrations.DeleteMCPSettings, requireScope(auth.ScopeSettingsWrite))
	api.GET("/embeddings", s.API.Knowledge.ShowEmbeddings, requireScope(auth.ScopeSettingsRead))
	api.PUT("/embeddings", s.API.Knowledge.UpdateEmbeddings, requireScope(auth.ScopeSettingsWrite), requireJSON)
	api.DELETE("/embeddings", s.API.Knowledge.DeleteEmbeddings, requireScope(auth.ScopeSettingsWrite))
	api.GET("/refused-origins", s.API.Settings.ListRefusedOrigins, requireScope(auth.ScopeSettingsRead))
	api.POST("/voice/setup", s.API.Settings.SetUpVoice, requireScope(auth.ScopeSettingsWrite), requireJSON)
	api.PUT("/voice/setup", s.API.Settings.LinkVoice, requireScope(auth.ScopeSettingsWrite), requireJSON)
	api.GET("/integrations/payments", s.API.Tools.ShowPaymentConnector, requireScope(auth.ScopeSettingsRead))
	api.PUT("/integrations/payments", s.API.Tools.UpdatePaymentConnector, requireScope(auth.ScopeSettingsWrite), requireJSON)
	api.DELETE("/integrations/payments", s.API.Tools.DeletePaymentConnector, requireScope(auth.ScopeSettingsWrite))
	api.POST("/integrations/payments/test", s.API.Tools.TestPaymentConnector, requireScope(auth.ScopeSettingsWrite), requireJSON)
	api.GET("/integrations/calendar", s.API.Tools.ShowCalendarConnector, requireScope(auth.ScopeSettingsRead))
	api.PUT("/integrations/calendar", s.API.Tools.UpdateCalendarConnector, requireScope(auth.ScopeSettingsWrite), requireJSON)
	api.DELETE("/integrations/calendar", s.API.Tools.DeleteCalendarConnector, requireScope(auth.ScopeSettingsWrite))
	api.POST("/integrations/calendar/test", s.API.Tools.TestCalendarConnector, requireScope(auth.ScopeSettingsWrite))
	api.POST("/visitor-signing-key/rotate", s.API.Settings.RotateVisitorSigningKey, requireScope(auth.ScopeSettingsWrite))

	api.GET("/webhooks", s.API.Integrations.ListWebhooks, requireScope(auth.ScopeSettingsRead))
	api.POST("/webhooks", s.API.Integrations.CreateWebhook, requireScope(auth.ScopeSettingsWrite), requireJSON)
	api.GET("/webhooks/:id", s.API.Integrations.ShowWebhook, requireScope(auth.ScopeSettingsRead))
	api.PATCH("/webhooks/:id", s.API.Integrations.UpdateWebhook, requireScope(auth.ScopeSettingsWrite), requireJSON)
	api.DELETE("/webhooks/:id", s.API.Integrations.DeleteWebhook, requireScope(auth.ScopeSettingsWrite))
	api.GET("/webhooks/:id/deliveries", s.API.Integrations.ListWebhookDeliveries, requireScope(auth.ScopeSettingsRead))
	api.POST("/webhooks/:id/deliveries/:deliveryId/redeliver", s.API.Integrations.RedeliverWebhook, requireScope(auth.ScopeSettingsWrite))

	api.GET("/conversations", s.API.Leads.ListConversations, requireScope(auth.ScopeConversationsRead))
	api.GET("/conversations/export", s.API.Leads.ExportConversations, requireScope(auth.ScopeConversationsRead))
	api.GET("/conversations/stats", s.API.Leads.ShowConversationStats, requireScope(auth.ScopeStatsRead))
	api.GET("/conversations/stats/export", s.API.Leads.ExportConversationStats, requireScope(auth.ScopeStatsRead))
	api.GET("/conversations/:id", s.API.Leads.ShowConversation, requireScope(auth.ScopeConversationsRead))
	api.POST("/conversations/:id/state", s.API.Leads.MoveConversation, requireScope(auth.ScopeConversationsWrite), requireJSON)
	api.POST("/conversations/:id/messages", s.API.Leads.ReplyToConversation, requireScope(auth.ScopeConversationsWrite), requireJSON)
	api.POST("/conversations/:id/draft", s.API.Leads.DraftReply, requireScope(auth.ScopeConversationsWrite))
	api.POST("/conversations/:id/messages/:messageId/correction", s.API.Knowledge.CorrectAnswer, requireScope(auth.ScopeCorpusWrite), requireJSON)

	api.GET("/audit-log", s.API.Audit.ListAuditLog, requireScope(auth.ScopeAuditRead))

	api.GET("/submissions", s.API.Leads.ListSubmissions, requireScope(auth.ScopeConversationsRead))
	api.PUT("/submissions/:id", s.API.Leads.UpdateSubmission, requireScope(auth.ScopeConversationsWrite), requireJSON)
	api.DELETE("/submissions/:id", s.API.Leads.DeleteSubmission, requireScope(auth.ScopeConversationsWrite))

	// The operator API: whoever runs the installation sets plans and bot
	// seats and reads every tenant's usage, with the operator's own token
	// (PARLEY_OPERATOR_TOKEN; unset, 404 OPERATOR_API_OFF).
	op := e.Group("/operator", s.Operator.Authenticate)
	op.GET("/tenants", s.Operator.ListTenants)
	op.GET("/tenants/:slug", s.Operator.ShowTenant)
	op.PUT("/tenants/:slug/plan", s.Operator.UpdateTenantPlan, requireJSON)

	// A call's recording, relayed from the orchestrator's storage: for an API
	// token of the tenant with conversations:read (the dashboard's player has
	// its own route under /admin).
	e.GET("/voice/:slug/recordings/:callId", s.API.Settings.ShowVoiceRecording, s.tenantAPI, requireScope(auth.ScopeConversationsRead))

	// Admin dashboard.
	admin := e.Group("/admin", s.adminHeaders(), adminBodyLimit, echo.WrapMiddleware(s.Sessions.LoadAndSave), s.adminCSRF(), checkFormText)
	// The polls of open pages (the navigation's count, the inbox's top, an
	// open conversation) read the session and never write it back: a poll
	// is not the owner's activity (Account.ReadSession). The CSRF check
	// gives the forms a fragment renders their token, and guards the
	// reply box's typing signal, sent every few seconds while a person
	// types (no session write for each either).
	polls := e.Group("/admin/conversations", s.adminHeaders(), h.Account.ReadSession, s.adminCSRF(), h.Account.RequireAdmin)
	polls.GET("/waiting", h.Leads.ShowWaitingCount)
	polls.GET("/attention", h.Leads.ShowInboxUpdates)
	polls.GET("/:id/live", h.Leads.ShowConversationUpdates)
	polls.POST("/:id/typing", h.Presence.SignalTyping, adminBodyLimit)
	admin.GET("/login", h.Account.ShowLoginPage)
	admin.POST("/login", h.Account.Login)
	admin.GET("/forgot-password", h.Account.ShowForgotPasswordPage)
	admin.POST("/forgot-password", h.Account.SendPasswordReset)
	admin.GET("/reset-password", h.Account.ShowResetPasswordPage)
	admin.POST("/reset-password", h.Account.SaveNewPassword)
	admin.GET("/invitation", h.Team.ShowInvitationPage)
	admin.POST("/invitation", h.Team.AcceptInvitation)
	// Sign-up (PARLEY_SIGNUP): public, like the sign-in; closed, every one
	// of these answers the page saying so.
	admin.GET("/signup", h.Signup.ShowSignupPage)
	admin.POST("/signup", h.Signup.SaveSignup)
	admin.GET("/signup/sent", h.Signup.ShowSignupSentPage)
	admin.GET("/signup/confirm", h.Signup.ShowConfirmPage)
	admin.POST("/signup/confirm", h.Signup.ConfirmSignup)
	// The sign-in's second step: the session is not signed in until it passes.
	admin.GET("/login/code", h.Security.ShowCodePage)
	admin.POST("/login/code", h.Security.SignInWithCode)
	// Every signed-in route is open to every role (an agent's: the
	// conversations, submissions and visitors, the account), unless it
	// names the least role it needs: asAdmin (the assistant's
	// configuration, knowledge, tools, integrations, analytics, exports)
	// or asOwner (the team, the plan, sign-in security, API tokens,
	// connected apps, webhooks, the visitor signing key, erasing visitors
	// and deleting submissions). TestRoleRoutes walks them all with every
	// role.
	signedIn := admin.Group("", h.Account.RequireAdmin, s.Audit.Record)
	asAdmin, asOwner := h.Team.RequireRole(auth.RoleAdmin), h.Team.RequireRole(auth.RoleOwner)
	signedIn.GET("/plan", h.Plan.ShowPlanPage, asOwner)
	signedIn.GET("/members", h.Team.ShowMembersPage, asOwner)
	signedIn.POST("/members", h.Team.SaveInvitation, asOwner)
	signedIn.POST("/members/:id/role", h.Team.SaveMemberRole, asOwner)
	signedIn.POST("/members/:id/remove", h.Team.RemoveMember, asOwner)
	signedIn.POST("/members/invitations/:id/renew", h.Team.RenewInvitation, asOwner)
	signedIn.POST("/members/invitations/:id/revoke", h.Team.RevokeInvitation, asOwner)
	signedIn.POST("/logout", h.Security.SignOut)
	// The person's own account (every role): password, sessions, two-step sign-in.
	signedIn.GET("/account", h.Security.ShowAccountPage)
	signedIn.POST("/account/password", h.Security.SavePassword)
	signedIn.POST("/account/sessions/end-others", h.Security.EndOtherSessions)
	signedIn.POST("/account/sessions/:id/end", h.Security.EndSession)
	signedIn.GET("/account/two-factor", h.Security.ShowTwoFactorSetupPage)
	signedIn.POST("/account/two-factor", h.Security.SaveTwoFactor)
	signedIn.POST("/account/two-factor/off", h.Security.RemoveTwoFactor)
	signedIn.GET("/account/recovery-codes", h.Security.ShowRecoveryCodesPage)
	signedIn.POST("/account/recovery-codes", h.Security.SaveNewRecoveryCodes)
	// The tenant's sign-in rules.
	signedIn.GET("/security", h.Security.ShowSecurityPage, asOwner)
	signedIn.POST("/security", h.Security.SaveSecurity, asOwner)
	signedIn.POST("/tenant", h.Account.SwitchTenant)
	signedIn.GET("", h.Account.ShowOverviewPage, h.Team.SendBelow(auth.RoleAdmin, "/admin/conversations"))
	// The overview's sites refused by the allowed domains (a developer setting).
	signedIn.POST("/refused-origins/:id/allow", h.Origins.AllowOrigin, asAdmin)
	signedIn.POST("/refused-origins/:id/dismiss", h.Origins.DismissOrigin, asAdmin)
	signedIn.GET("/conversations", h.Leads.ShowConversationsPage)
	signedIn.GET("/conversations/:id", h.Leads.ShowConversationPage)
	signedIn.POST("/conversations/:id/state", h.Leads.SaveConversationState)
	signedIn.POST("/conversations/:id/reply", h.Leads.SendPersonReply)
	signedIn.POST("/conversations/:id/draft", h.Leads.DraftPersonReply)
	signedIn.GET("/conversations/:id/messages/:messageId/correction", h.Corrections.ShowCorrectionForm, asAdmin)
	signedIn.POST("/conversations/:id/messages/:messageId/correction", h.Corrections.SaveCorrection, asAdmin)
	signedIn.GET("/analytics", h.Leads.ShowAnalyticsPage, asAdmin)
	signedIn.GET("/analytics/export", h.Leads.ExportAnalytics, asAdmin)
	signedIn.GET("/test-chat", h.Settings.ShowTestChatPage, asAdmin)
	signedIn.GET("/script-chat", h.Scripting.ShowScriptChatPage, asAdmin)
	signedIn.POST("/test-chat", h.Settings.SendTestMessage, asAdmin)
	signedIn.GET("/tests", h.Tests.ShowTestsPage, asAdmin)
	signedIn.POST("/tests", h.Tests.SaveNewTest, asAdmin)
	signedIn.POST("/tests/run", h.Tests.StartTestRun, asAdmin)
	signedIn.GET("/tests/runs/:id", h.Tests.ShowTestRun, asAdmin)
	signedIn.GET("/tests/:id", h.Tests.ShowTestPage, asAdmin)
	signedIn.POST("/tests/:id", h.Tests.SaveTest, asAdmin)
	signedIn.POST("/tests/:id/delete", h.Tests.RemoveTest, asAdmin)
	signedIn.GET("/settings", h.Settings.ShowSettingsPage, asAdmin)
	signedIn.POST("/settings", h.Settings.SaveSettings, asAdmin)
	signedIn.GET("/settings/widget", h.Settings.ShowSettingsPage, asAdmin)
	signedIn.POST("/settings/widget", h.Settings.SaveSettings, asAdmin)
	signedIn.GET("/settings/developer", h.Settings.ShowSettingsPage, asAdmin)
	signedIn.POST("/settings/developer", h.Settings.SaveSettings, asAdmin)
	signedIn.GET("/settings/team", h.Settings.ShowTeamSettingsPage, asAdmin)
	signedIn.POST("/settings/team", h.Settings.SaveTeamSettings, asAdmin)
	signedIn.POST("/settings/widget-key", h.Settings.SaveWidgetKey, asAdmin)
	signedIn.POST("/settings/avatar", h.Settings.SaveAvatar, asAdmin)
	signedIn.POST("/settings/visitor-signing-key", h.Settings.SaveVisitorSigningKey, asOwner)
	signedIn.GET("/tokens", h.Integrations.ShowTokensPage, asOwner)
	signedIn.POST("/tokens", h.Integrations.SaveToken, asOwner)
	signedIn.POST("/tokens/:id/revoke", h.Integrations.RevokeToken, asOwner)
	signedIn.GET("/oauth/consent", h.Account.ShowConsentPage)
	signedIn.POST("/oauth/consent", h.Account.SaveConsent)
	signedIn.GET("/connected-apps", h.Account.ShowConnectedAppsPage, asOwner)
	signedIn.GET("/audit", h.Audit.ShowAuditPage, asOwner)
	signedIn.POST("/connected-apps/:client/revoke", h.Account.RevokeConnectedApp, asOwner)
	signedIn.GET("/segments", h.Settings.ShowSegmentsPage, asAdmin)
	signedIn.GET("/segments/new", h.Settings.ShowSegmentPage, asAdmin)
	signedIn.POST("/segments", h.Settings.SaveSegment, asAdmin)
	signedIn.GET("/segments/:id", h.Settings.ShowSegmentPage, asAdmin)
	signedIn.POST("/segments/:id", h.Settings.SaveSegment, asAdmin)
	signedIn.POST("/segments/:id/delete", h.Settings.RemoveSegment, asAdmin)
	signedIn.GET("/corpus", h.Knowledge.ShowCorpusPage, asAdmin)
	signedIn.GET("/corpus/new", h.Knowledge.ShowCorpusEntryPage, asAdmin)
	signedIn.POST("/corpus", h.Knowledge.SaveCorpusEntry, asAdmin)
	signedIn.POST("/corpus/import", h.Knowledge.SaveCorpusImport, asAdmin)
	signedIn.POST("/corpus/sync", h.Knowledge.SaveCorpusSync, asAdmin)
	signedIn.GET("/corpus/synonyms", h.Knowledge.ShowSynonymsPage, asAdmin)
	signedIn.POST("/corpus/synonyms", h.Knowledge.SaveNewSynonyms, asAdmin)
	signedIn.POST("/corpus/synonyms/:id", h.Knowledge.SaveSynonyms, asAdmin)
	signedIn.POST("/corpus/synonyms/:id/delete", h.Knowledge.RemoveSynonyms, asAdmin)
	signedIn.GET("/corpus/embeddings", h.Knowledge.ShowEmbeddingsPage, asAdmin)
	signedIn.GET("/corpus/embeddings/status", h.Knowledge.ShowEmbeddingsStatus, asAdmin)
	signedIn.POST("/corpus/embeddings", h.Knowledge.SaveEmbeddingsPage, asAdmin)
	signedIn.POST("/corpus/embeddings/delete", h.Knowledge.RemoveEmbeddingsPage, asAdmin)
	signedIn.GET("/knowledge-gaps", h.Gaps.ShowGapsPage, asAdmin)
	signedIn.POST("/knowledge-gaps/state", h.Gaps.SaveGapState, asAdmin)
	signedIn.GET("/corpus/:id", h.Knowledge.ShowCorpusEntryPage, asAdmin)
	signedIn.POST("/corpus/:id", h.Knowledge.SaveCorpusEntry, asAdmin)
	signedIn.POST("/corpus/:id/delete", h.Knowledge.RemoveCorpusEntry, asAdmin)
	signedIn.GET("/tools", h.Tools.ShowToolsPage, asAdmin)
	signedIn.GET("/tools/new", h.Tools.ShowNewToolPage, asAdmin)
	signedIn.GET("/tools/config-fields", h.Tools.ShowToolConfigFields, asAdmin)
	signedIn.POST("/tools", h.Tools.SaveNewTool, asAdmin)
	signedIn.GET("/tools/:id", h.Tools.ShowEditToolPage, asAdmin)
	signedIn.POST("/tools/:id", h.Tools.SaveTool, asAdmin)
	signedIn.POST("/tools/:id/delete", h.Tools.RemoveTool, asAdmin)
	signedIn.GET("/products", h.Tools.ShowProductsPage, asAdmin)
	signedIn.GET("/products/new", h.Tools.ShowNewProductPage, asAdmin)
	signedIn.POST("/products", h.Tools.SaveNewProduct, asAdmin)
	signedIn.GET("/products/:id", h.Tools.ShowEditProductPage, asAdmin)
	signedIn.POST("/products/:id", h.Tools.SaveProduct, asAdmin)
	signedIn.POST("/products/:id/delete", h.Tools.RemoveProduct, asAdmin)
	signedIn.GET("/visitors", h.Leads.ShowVisitorsPage)
	signedIn.GET("/visitors/:id", h.Leads.ShowVisitorPage)
	signedIn.POST("/visitors/:id", h.Leads.SaveVisitor)
	signedIn.POST("/visitors/:id/erase", h.Leads.EraseVisitor, asOwner)
	signedIn.POST("/visitors/:id/memory", h.Leads.SaveMemoryFact)
	signedIn.POST("/visitors/:id/memory/:key/delete", h.Leads.RemoveMemoryFact)
	signedIn.GET("/submissions", h.Leads.ShowSubmissionsPage)
	signedIn.GET("/submissions/export.csv", h.Leads.ExportSubmissions, asAdmin)
	signedIn.GET("/submissions/:id", h.Leads.ShowSubmissionPage)
	signedIn.POST("/submissions/:id/status", h.Leads.SaveSubmissionStatus)
	signedIn.POST("/submissions/:id/delete", h.Leads.RemoveSubmission, asOwner)
	signedIn.GET("/mcp-tools", h.Integrations.ShowMCPPage, asAdmin)
	signedIn.POST("/mcp-tools", h.Integrations.SaveMCPSettings, asAdmin)
	signedIn.POST("/mcp-tools/delete", h.Integrations.RemoveMCPSettings, asAdmin)
	signedIn.GET("/voice", h.Voice.ShowVoicePage, asAdmin)
	signedIn.POST("/voice", h.Voice.SaveVoiceSettings, asAdmin)
	signedIn.POST("/voice/setup", h.Voice.SaveManagedVoiceSetup, asAdmin)
	signedIn.POST("/voice/link", h.Voice.SaveVoiceLink, asAdmin)
	signedIn.GET("/voice/calls/:callId/recording", h.Voice.ShowVoiceCallRecording)
	signedIn.GET("/integrations/payments", h.Tools.ShowPaymentsPage, asAdmin)
	signedIn.POST("/integrations/payments", h.Tools.SavePayments, asAdmin)
	signedIn.POST("/integrations/payments/test", h.Tools.TestPayments, asAdmin)
	signedIn.POST("/integrations/payments/delete", h.Tools.RemovePayments, asAdmin)
	signedIn.GET("/integrations/calendar", h.Tools.ShowCalendarPage, asAdmin)
	signedIn.POST("/integrations/calendar", h.Tools.SaveCalendarConnector, asAdmin)
	signedIn.POST("/integrations/calendar/test", h.Tools.TestCalendarConnection, asAdmin)
	signedIn.POST("/integrations/calendar/delete", h.Tools.RemoveCalendarConnector, asAdmin)
	signedIn.POST("/mcp-tools/discover", h.Integrations.DiscoverMCPTools, asAdmin)
	signedIn.GET("/integrations", h.Integrations.ShowIntegrationsPage, asAdmin)
	signedIn.POST("/integrations/context-webhook/test", h.Integrations.SendContextTest, asAdmin)
	signedIn.GET("/webhooks", h.Integrations.ShowWebhooksPage, asOwner)
	signedIn.POST("/webhooks", h.Integrations.SaveNewWebhook, asOwner)
	signedIn.GET("/webhooks/:id", h.Integrations.ShowWebhookPage, asOwner)
	signedIn.POST("/webhooks/:id", h.Integrations.SaveWebhook, asOwner)
	signedIn.POST("/webhooks/:id/enabled", h.Integrations.ToggleWebhook, asOwner)
	signedIn.POST("/webhooks/:id/delete", h.Integrations.RemoveWebhook, asOwner)
	signedIn.POST("/webhooks/:id/deliveries/:deliveryId/redeliver", h.Integrations.RedeliverWebhookDelivery, asOwner)
	signedIn.POST("/webhooks/:id/test", h.Integrations.SendTestEvent, asOwner)
	signedIn.POST("/webhooks/:id/secret", h.Integrations.RotateWebhookSecret, asOwner)
	signedIn.GET("/webhooks/:id/test/:deliveryId", h.Integrations.ShowTestEventResult, asOwner)

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
			"X-Service-Admin-Token", "X-Agent-Model", "X-API-Key", "X-LLM-Key", "X-LLM-Provider", "X-LLM-Model", "X-LLM-Base-Url",
			"Last-Event-ID", "Idempotency-Key"},
		ExposeHeaders: []string{"X-AI-Generated", "Retry-After", "ETag", "Idempotency-Replayed", echo.HeaderXRequestID},
		MaxAge:        600,
	})
}
