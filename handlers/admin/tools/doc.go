// Package tools is the dashboard's Tools area: what the assistant can do.
// Its tools, the product catalog it recommends from, and the calendar and
// payment connectors its tools use, each a page or a few under /admin
// (/admin/tools, /admin/products, /admin/integrations/calendar,
// /admin/integrations/payments). handlers/admin builds it into its Handler,
// through which web's route table names each route's method.
package tools

import "github.com/parley/parley/handlers"

// Tools is what the assistant can do: its tools, the product catalog it
// recommends from, and the calendar and payment connectors its tools use.
type Tools struct{ *handlers.Base }

// New builds the Tools area over the Base web builds.
func New(b *handlers.Base) *Tools { return &Tools{b} }
