package handlers

// The engine's cache of a tenant's MCP tools, forgotten when the REST API
// or the dashboard changes its MCP settings.

// ForgetMCPTools drops the tenant's cached MCP tool list once its settings
// changed. Other instances need no word of it: they use a cached list only
// with the URL and key it was made with (mcpclient.Client).
func (h *Base) ForgetMCPTools(tenantID string) {
	if h.Engine != nil && h.Engine.MCP != nil {
		h.Engine.MCP.Forget(tenantID)
	}
}
