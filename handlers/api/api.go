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

// Handler answers the REST API. It embeds the Base web builds, which the
// dashboard's handler embeds too: the operations both run are Base's.
type Handler struct{ *handlers.Base }
