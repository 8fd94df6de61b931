package main

import (
	"context"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/knowledge"
)

// demoCorpus is the demo tenant's knowledge base: a few entries about
// Parley itself, so that the first question a newcomer types into the demo
// chat gets an answer from it, offline, with the local provider (which
// quotes the entries sharing the most words with the question).
var demoCorpus = []struct{ title, content string }{
	{"What is Parley?", "Parley is a multi-tenant AI agent service. Each tenant puts a chatbot on its website, " +
		"lets other AI agents talk to it over a JSON API, and lets callers reach it by phone. The agent answers " +
		"from the tenant's knowledge base, runs tools (forms, quotes, meetings, escalation to a person, memory, " +
		"products), captures leads as submissions and sends them to the tenant's servers as signed webhooks."},
	{"Adding the chat widget to a website", "Open the dashboard's Widget page, copy the embed code (one script " +
		"tag) and paste it into the pages of your website, before the closing body tag. The widget opens as a " +
		"chat bubble in the corner. Allowed domains and a widget key keep other sites from using your bot."},
	{"The knowledge base", "The knowledge base holds the entries the agent answers from: write them in the " +
		"dashboard's Knowledge page, import a CSV file, sync a web page by its URL, or send them through the " +
		"REST API. Each entry has a title, content, a priority and optional tags, locale and segment."},
	{"Connecting a language model", "Without a language model the agent quotes its knowledge base directly, " +
		"as in this answer. To have it write real answers, start Parley with PARLEY_LLM_PROVIDER set to openai " +
		"or anthropic and PARLEY_LLM_API_KEY set to your key (PARLEY_LLM_MODEL picks the model)."},
	{"Leads, submissions and webhooks", "When a visitor fills in a form, asks for a quote or books a meeting, " +
		"Parley stores a submission, shows it under Submissions in the dashboard and sends it to your webhook " +
		"endpoints, signed so that your server can check it came from Parley, with retries when your server " +
		"is down."},
	{"API, OAuth and MCP for integrators", "Integrators manage a tenant through the REST API with an API token " +
		"(Bearer ak_...) or an OAuth 2.1 access token, and through Parley's MCP server at /mcp. The OpenAPI " +
		"document is served at /openapi.json."},
	{"Phone calls", "On the scale plan the agent answers phone calls through a voice orchestrator: set up a " +
		"phone number on the dashboard's Voice page, and callers talk to the same agent, with the same " +
		"knowledge base and tools."},
}

// seedDemoCorpus writes demoCorpus into the tenant's knowledge base.
func seedDemoCorpus(ctx context.Context, store *db.DB, tenantID string, limit int) error {
	for _, e := range demoCorpus {
		if _, _, err := store.UpsertCorpus(ctx, tenantID, limit, knowledge.CorpusWrite{
			Title: parley.Some(e.title), Content: parley.Some(e.content),
		}); err != nil {
			return err
		}
	}
	return nil
}
