// Package manage holds the management operations every surface shares:
// the REST API, the dashboard, Parley's MCP server and the chat-admin
// tools call the same operation for the same change, so that one rule and
// one limit hold wherever the change comes from. An operation takes domain
// types (the root package's inputs, whose rules it checks) and returns
// domain errors (*parley.Error: a parley.FieldErrors of wire field names
// for bad input); each write is one store call, in one transaction.
//
// Decoding a request and encoding its answer stay with each surface; so
// do its own gates (scopes, plans shown as upgrades).
package manage

import "github.com/parley/parley/db"

// Service runs the operations, over the store.
type Service struct {
	DB *db.DB
}
