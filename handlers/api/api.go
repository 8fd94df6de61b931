// Package api is Parley's management REST API (/tenants/{slug}/...): the
// tenant's settings, knowledge base, segments, tools, products, visitors,
// conversations, submissions, webhooks and connectors, each behind its
// scope. Its handlers decode, call the management operations (manage) or
// the store, and encode the representations the MCP tools share
// (handlers/resource).
package api

import (
	"github.com/parley/parley/handlers"
)

// Handler answers the REST API, one area of it a field; web's route table
// names each route's method through its area.
type Handler struct {
	Settings     *Settings
	Knowledge    *Knowledge
	Tools        *Tools
	Leads        *Leads
	Integrations *Integrations
	Audit        *Audit
	Tests        *Tests
}

// New builds the REST API's areas over the Base web builds, which the
// dashboard's areas embed too: the operations both run are Base's.
func New(b *handlers.Base) *Handler {
	c := core{b}
	return &Handler{
		Settings:     &Settings{c},
		Knowledge:    &Knowledge{c},
		Tools:        &Tools{c},
		Leads:        &Leads{c},
		Integrations: &Integrations{c},
		Audit:        &Audit{c},
		Tests:        &Tests{c},
	}
}

// core is what every area embeds: the Base, and the helpers the areas share
// as its methods.
type core struct{ *handlers.Base }

// Settings is the tenant itself (its settings, stats and embed code), its
// segments, the visitor signing key and the voice setups.
type Settings struct{ core }

// Knowledge is the knowledge base: entries, bulk writes, CSV import, URL
// sync, synonyms and the embedding endpoint.
type Knowledge struct{ core }

// Tools is the tools, the product catalog, and the calendar and payment
// connectors.
type Tools struct{ core }

// Leads is the visitors and their memory, the conversations with their
// stats and exports, and the submissions.
type Leads struct{ core }

// Integrations is the webhook endpoints and their deliveries, and the MCP
// tools server.
type Integrations struct{ core }

// paginationJSON is the pagination of the paged listings (products,
// submissions, webhook deliveries): pages is ceil(total / limit).
type paginationJSON struct {
	Page  int `json:"page"`
	Limit int `json:"limit"`
	Total int `json:"total"`
	Pages int `json:"pages"`
}

func newPaginationJSON(page, limit, total int) paginationJSON {
	return paginationJSON{Page: page, Limit: limit, Total: total, Pages: (total + limit - 1) / limit}
}
