// Package integrations is the dashboard's Integrations area: how other
// systems reach the tenant and the reverse. The integrations index and its
// live checks (the context webhook, the MCP server's tools), the MCP tools
// server's settings, webhook endpoints with their deliveries and test
// events, and API tokens. handlers/admin builds it into its Handler, through
// which web's route table names each route's method.
package integrations

import "github.com/parley/parley/handlers"

// Integrations is how other systems reach the tenant and the reverse: the
// integrations index and its live checks, the MCP tools server, webhooks and
// API tokens.
type Integrations struct{ *handlers.Base }

// New builds the Integrations area over the Base web builds.
func New(b *handlers.Base) *Integrations { return &Integrations{b} }
