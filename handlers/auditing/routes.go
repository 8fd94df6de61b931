package auditing

import (
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley/db/audit"
	"github.com/parley/parley/handlers"
)

// route is what a successful request of one route records.
type route struct {
	action string
	// target is what it acted on, in words.
	target string
	// param is the path parameter holding the target's id ("" for none).
	param string
	// idField is the form field holding the target's id, when the path
	// does not.
	idField string
	// field is a form field whose value names the target (a new token's
	// name, a new webhook's URL).
	field string
	// words say what changed, when the route alone does not (details' "change").
	words func(c echo.Context) string
	// name looks the target's name up (rare changes only).
	name func(r *Recorder, c echo.Context) string
	// check reports whether the request changed anything, beyond its status.
	check func(c echo.Context) bool
	// tenant is the tenant changed, when it is not the request's.
	tenant func(c echo.Context) string
}

// Targets in the owner's words.
const (
	targetSettings = "Settings"
	targetEntry    = "Knowledge base entry"
	targetWebhook  = "Webhook"
)

func changed(words string) func(echo.Context) string {
	return func(echo.Context) string { return words }
}

// routes are the changes worth recording, by method and route (as
// web/routes.go registers them). Changes of members, plans and sign-ins
// are recorded by their own code, not here.
var routes = map[string]route{
	// Dashboard: API tokens and connected apps.
	"POST /admin/tokens":                        {action: audit.ActionTokenCreated, target: "API token", field: "name"},
	"POST /admin/tokens/:id/revoke":             {action: audit.ActionTokenRevoked, target: "API token", param: "id"},
	"POST /admin/oauth/consent":                 {action: audit.ActionAppConnected, target: "App", idField: "client_id", name: consentClient, check: consentApproved, tenant: consentTenant},
	"POST /admin/connected-apps/:client/revoke": {action: audit.ActionAppRevoked, target: "App", param: "client", name: pathClient},

	// Dashboard: webhooks.
	"POST /admin/webhooks":             {action: audit.ActionWebhookCreated, target: targetWebhook, field: "url"},
	"POST /admin/webhooks/:id":         {action: audit.ActionWebhookChanged, target: targetWebhook, param: "id", field: "url"},
	"POST /admin/webhooks/:id/enabled": {action: audit.ActionWebhookChanged, target: targetWebhook, param: "id", words: webhookSwitch},
	"POST /admin/webhooks/:id/delete":  {action: audit.ActionWebhookDeleted, target: targetWebhook, param: "id"},
	"POST /admin/webhooks/:id/secret":  {action: audit.ActionWebhookChanged, target: targetWebhook, param: "id", words: changed("Rotated the signing secret")},

	// Dashboard: settings.
	"POST /admin/settings":                     {action: audit.ActionSettingsChanged, target: "General settings"},
	"POST /admin/settings/widget":              {action: audit.ActionSettingsChanged, target: "Widget settings"},
	"POST /admin/settings/developer":           {action: audit.ActionSettingsChanged, target: "Developer settings"},
	"POST /admin/settings/team":                {action: audit.ActionSettingsChanged, target: "Team and live chat settings"},
	"POST /admin/settings/widget-key":          {action: audit.ActionSettingsChanged, target: "Widget key", words: widgetKeyChange},
	"POST /admin/refused-origins/:id/allow":    {action: audit.ActionSettingsChanged, target: "Allowed domains", words: allowedSite, check: siteAllowed},
	"POST /admin/settings/avatar":              {action: audit.ActionSettingsChanged, target: "Assistant's avatar"},
	"POST /admin/settings/visitor-signing-key": {action: audit.ActionSettingsChanged, target: "Visitor signing key", words: changed("Made a new visitor signing key")},
	"POST /admin/mcp-tools":                    {action: audit.ActionSettingsChanged, target: "MCP server connection"},
	"POST /admin/mcp-tools/delete":             {action: audit.ActionSettingsChanged, target: "MCP server connection", words: changed("Removed it")},
	"POST /admin/corpus/embeddings":            {action: audit.ActionSettingsChanged, target: "Embedding settings"},
	"POST /admin/corpus/embeddings/delete":     {action: audit.ActionSettingsChanged, target: "Embedding settings", words: changed("Removed them")},
	"POST /admin/voice":                        {action: audit.ActionSettingsChanged, target: "Voice settings"},
	"POST /admin/voice/setup":                  {action: audit.ActionSettingsChanged, target: "Voice settings", words: changed("Set up a phone number")},
	"POST /admin/voice/link":                   {action: audit.ActionSettingsChanged, target: "Voice settings", words: changed("Linked their own voice assistant")},
	"POST /admin/integrations/payments":        {action: audit.ActionSettingsChanged, target: "Payment connector"},
	"POST /admin/integrations/payments/delete": {action: audit.ActionSettingsChanged, target: "Payment connector", words: changed("Removed it")},
	"POST /admin/integrations/calendar":        {action: audit.ActionSettingsChanged, target: "Calendar connector"},
	"POST /admin/integrations/calendar/delete": {action: audit.ActionSettingsChanged, target: "Calendar connector", words: changed("Removed it")},

	// Dashboard: an answer improved into the knowledge base.
	"POST /admin/conversations/:id/messages/:messageId/correction": {action: audit.ActionAnswerCorrected, target: targetEntry, check: corrected},

	// Dashboard: deletions.
	"POST /admin/corpus/:id/delete":               {action: audit.ActionDeleted, target: targetEntry, param: "id"},
	"POST /admin/corpus/synonyms/:id/delete":      {action: audit.ActionDeleted, target: "Synonym group", param: "id"},
	"POST /admin/segments/:id/delete":             {action: audit.ActionDeleted, target: "Segment", param: "id"},
	"POST /admin/tools/:id/delete":                {action: audit.ActionDeleted, target: "Tool", param: "id"},
	"POST /admin/products/:id/delete":             {action: audit.ActionDeleted, target: "Product", param: "id"},
	"POST /admin/submissions/:id/delete":          {action: audit.ActionDeleted, target: "Submission", param: "id"},
	"POST /admin/visitors/:id/erase":              {action: audit.ActionDeleted, target: "Visitor", param: "id", words: changed("Erased the visitor and their data")},
	"POST /admin/visitors/:id/memory/:key/delete": {action: audit.ActionDeleted, target: "Visitor's remembered fact", param: "id", words: memoryKey},

	// Dashboard: exports.
	"GET /admin/analytics/export":       {action: audit.ActionExported, target: "Analytics"},
	"GET /admin/submissions/export.csv": {action: audit.ActionExported, target: "Submissions (CSV)"},

	// REST API: settings.
	"PUT /tenants/:slug":                             {action: audit.ActionSettingsChanged, target: targetSettings},
	"PUT /tenants/:slug/mcp-tools":                   {action: audit.ActionSettingsChanged, target: "MCP server connection"},
	"DELETE /tenants/:slug/mcp-tools":                {action: audit.ActionSettingsChanged, target: "MCP server connection", words: changed("Removed it")},
	"PUT /tenants/:slug/embeddings":                  {action: audit.ActionSettingsChanged, target: "Embedding settings"},
	"DELETE /tenants/:slug/embeddings":               {action: audit.ActionSettingsChanged, target: "Embedding settings", words: changed("Removed them")},
	"POST /tenants/:slug/voice/setup":                {action: audit.ActionSettingsChanged, target: "Voice settings", words: changed("Set up a phone number")},
	"PUT /tenants/:slug/voice/setup":                 {action: audit.ActionSettingsChanged, target: "Voice settings", words: changed("Linked their own voice assistant")},
	"PUT /tenants/:slug/integrations/payments":       {action: audit.ActionSettingsChanged, target: "Payment connector"},
	"DELETE /tenants/:slug/integrations/payments":    {action: audit.ActionSettingsChanged, target: "Payment connector", words: changed("Removed it")},
	"PUT /tenants/:slug/integrations/calendar":       {action: audit.ActionSettingsChanged, target: "Calendar connector"},
	"DELETE /tenants/:slug/integrations/calendar":    {action: audit.ActionSettingsChanged, target: "Calendar connector", words: changed("Removed it")},
	"POST /tenants/:slug/visitor-signing-key/rotate": {action: audit.ActionSettingsChanged, target: "Visitor signing key", words: changed("Made a new visitor signing key")},

	// REST API: webhooks.
	"POST /tenants/:slug/webhooks":       {action: audit.ActionWebhookCreated, target: targetWebhook},
	"PATCH /tenants/:slug/webhooks/:id":  {action: audit.ActionWebhookChanged, target: targetWebhook, param: "id"},
	"DELETE /tenants/:slug/webhooks/:id": {action: audit.ActionWebhookDeleted, target: targetWebhook, param: "id"},

	// REST API: an answer improved into the knowledge base.
	"POST /tenants/:slug/conversations/:id/messages/:messageId/correction": {action: audit.ActionAnswerCorrected, target: targetEntry},

	// REST API: deletions.
	"DELETE /tenants/:slug/segments/:id":                    {action: audit.ActionDeleted, target: "Segment", param: "id"},
	"DELETE /tenants/:slug/corpus/:id":                      {action: audit.ActionDeleted, target: targetEntry, param: "id"},
	"DELETE /tenants/:slug/synonyms/:id":                    {action: audit.ActionDeleted, target: "Synonym group", param: "id"},
	"DELETE /tenants/:slug/tools/:id":                       {action: audit.ActionDeleted, target: "Tool", param: "id"},
	"DELETE /tenants/:slug/products/:id":                    {action: audit.ActionDeleted, target: "Product", param: "id"},
	"DELETE /tenants/:slug/visitors/:visitorId":             {action: audit.ActionDeleted, target: "Visitor", param: "visitorId", words: changed("Erased the visitor and their data")},
	"DELETE /tenants/:slug/visitors/:visitorId/memory/:key": {action: audit.ActionDeleted, target: "Visitor's remembered fact", param: "visitorId", words: memoryKey},
	"DELETE /tenants/:slug/submissions/:id":                 {action: audit.ActionDeleted, target: "Submission", param: "id"},

	// REST API: exports.
	"GET /tenants/:slug/conversations/export":       {action: audit.ActionExported, target: "Conversations"},
	"GET /tenants/:slug/conversations/stats/export": {action: audit.ActionExported, target: "Conversation statistics"},
}

// webhookSwitch says whether ToggleWebhook turned the endpoint on or off.
func webhookSwitch(c echo.Context) string {
	if c.FormValue("enabled") == "true" {
		return "Turned it on"
	}
	return "Turned it off"
}

// widgetKeyChange says whether SaveWidgetKey made a key or removed it.
func widgetKeyChange(c echo.Context) string {
	if c.FormValue("action") == "clear" {
		return "Removed it"
	}
	return "Made a new widget key"
}

// AllowedSite is the echo.Context key under which the dashboard's "Allow
// this site" (handlers/admin/origins) leaves the site it allowed.
const AllowedSite = "auditAllowedSite"

// allowedSite says which site "Allow this site" added to the allowed domains.
func allowedSite(c echo.Context) string {
	if site, _ := c.Get(AllowedSite).(string); site != "" {
		return "Allowed " + site
	}
	return ""
}

// siteAllowed reports whether "Allow this site" changed the allowed
// domains (not when every site was allowed already).
func siteAllowed(c echo.Context) bool { return allowedSite(c) != "" }

// memoryKey names the fact deleted.
func memoryKey(c echo.Context) string { return "Forgot " + c.Param("key") }

// consentApproved reports whether the consent page approved: a refusal
// redirects to the client too, with an error instead of a code.
func consentApproved(c echo.Context) bool {
	return c.FormValue("decision") == "approve" && strings.Contains(c.Response().Header().Get(echo.HeaderLocation), "code=")
}

// consentTenant is the tenant the consent granted: the one chosen on the
// page, else the signed-in one.
func consentTenant(c echo.Context) string {
	a, ok := handlers.AdminOf(c)
	if !ok {
		return ""
	}
	slug := c.FormValue("tenant")
	if slug == "" {
		return a.Tenant.ID
	}
	for _, m := range a.Memberships {
		if m.TenantSlug == slug {
			return m.TenantID
		}
	}
	return ""
}

func consentClient(r *Recorder, c echo.Context) string {
	return r.clientName(c, c.FormValue("client_id"))
}

func pathClient(r *Recorder, c echo.Context) string { return r.clientName(c, c.Param("client")) }

// clientName is an OAuth client's name, or its id when it has none.
func (r *Recorder) clientName(c echo.Context, id string) string {
	n, err := r.DB.OAuthClientName(c.Request().Context(), id)
	if err != nil || n == "" {
		return id
	}
	return n
}

// corrected reports whether the dashboard's correction form saved (a
// refused one re-renders with 422; an htmx one answers 200 either way).
func corrected(c echo.Context) bool {
	id, _ := c.Get(audit.TargetIDKey).(string)
	return id != ""
}
