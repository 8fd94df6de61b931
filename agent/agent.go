// Package agent is the conversation engine, free of HTTP handlers: prompt
// assembly, the enrichment chain, tools, retrieval and the MCP client. The
// model providers but Local (the knowledge base quoted) are
// agent/outbound/llm's; the one SSRF-guarded client every outgoing request
// goes through is agent/outbound's.
package agent
