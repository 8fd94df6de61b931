// Package admin is the tenant owner's dashboard under /admin: server-rendered
// pages (templ, htmx) for the settings, the knowledge base, segments, tools,
// products, visitors, conversations, submissions, webhooks, connectors and
// connected apps, the sign-in and password reset, and the test chat. Its
// forms call the management operations (manage) the REST API calls, and a
// failed form is rendered again with its problems beside each field.
package admin

import (
	"github.com/parley/parley/handlers"
)

// Handler answers the dashboard. It embeds the Base web builds, which the
// REST API's handler embeds too: the operations both run are Base's.
type Handler struct{ *handlers.Base }
