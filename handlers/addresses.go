package handlers

import "net/url"

// VoiceURLs are the addresses an orchestrator is given for a tenant, on the
// server at baseURL: the custom LLM's base URL (the orchestrator posts to
// {customLlmUrl}/chat/completions; {customLlmUrl}/chat answers too) and the
// server URL of its events. The voice surface answers them; the managed
// setup and the dashboard's voice page show them.
func VoiceURLs(baseURL, slug string) (customLLM, server string) {
	base := baseURL + "/voice/" + url.PathEscape(slug)
	return base, base + "/events"
}

// MCPPath is where Parley's own MCP server answers.
const MCPPath = "/mcp"
