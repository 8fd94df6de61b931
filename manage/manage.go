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

import (
	"context"
	"net/url"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
)

// Service runs the operations, over the store.
type Service struct {
	DB *db.DB
	// Box seals the secrets tenants give (keys, webhook secrets).
	Box *auth.Box
	// Addresses vets the URLs tenants give Parley to call; nil vets none
	// (the dial-time guard still applies to every request).
	Addresses Addresses
}

// Addresses vets, at registration, a URL a tenant gives Parley to call:
// the outbound guard's checks (agent/outbound), which manage does not
// import.
type Addresses interface {
	// Problem says why Parley must not call rawURL, or "": its host is, or
	// resolves to, a private or reserved address; or, when mustResolve
	// (a webhook's, called at once), it does not resolve. Otherwise a host
	// that does not resolve now passes: DNS may not exist yet.
	Problem(ctx context.Context, rawURL string, mustResolve bool) string
	// PlainHTTP says whether rawURL may be called over plain http: its
	// host is one the operator exempted (PARLEY_SSRF_ALLOW).
	PlainHTTP(ctx context.Context, rawURL string) bool
}

// address is the Addresses' Problem in ctx, for the rules' Check of a URL
// whose scheme the rules decide (https only, or http allowed); nil without
// Addresses.
func (s *Service) address(ctx context.Context) func(string) string {
	if s.Addresses == nil {
		return nil
	}
	return func(rawURL string) string { return s.Addresses.Problem(ctx, rawURL, false) }
}

// vetURL says why Parley must not call rawURL, or "": plain http to a host
// the operator did not exempt ("must use https"; every host without
// Addresses), then the host's addresses (mustResolve: it must resolve now).
// The one vetting of every URL Parley calls with the tenant's data or
// signature: webhook endpoints, escalation webhooks, the reply endpoint and
// the context webhook.
func (s *Service) vetURL(ctx context.Context, rawURL string, mustResolve bool) string {
	if u, err := url.Parse(rawURL); err == nil && u.Scheme != "https" && (s.Addresses == nil || !s.Addresses.PlainHTTP(ctx, rawURL)) {
		return "must use https"
	}
	if s.Addresses == nil {
		return ""
	}
	return s.Addresses.Problem(ctx, rawURL, mustResolve)
}

// urlVetter is vetURL in ctx, for the rules' Check.
func (s *Service) urlVetter(ctx context.Context, mustResolve bool) func(string) string {
	return func(rawURL string) string { return s.vetURL(ctx, rawURL, mustResolve) }
}
