// Package agent is the conversation engine, free of HTTP handlers: prompt
// assembly, the enrichment chain, retrieval, the tool loop. The tool
// registry and the built-in tools' execution are agent/tools', the model
// providers but Local (the knowledge base quoted) agent/outbound/llm's, the
// client of the tenants' MCP servers agent/outbound/mcpclient's; the one
// SSRF-guarded client every outgoing request goes through is
// agent/outbound's.
package agent
