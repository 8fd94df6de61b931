// Package agent is the conversation engine, free of HTTP handlers: prompt
// assembly, the enrichment chain, tools, LLM providers, the MCP client, and
// the one SSRF-guarded client every outgoing request goes through.
package agent
