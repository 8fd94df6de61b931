// Package audit is the SQL of the audit log (migration 00044): who did what
// and when in a tenant. Every surface records through it: the dashboard as
// the signed-in person, the REST API and the MCP server as the API token or
// the OAuth client, the command line and the operator API as the operator.
// A change that has a transaction of its own records its entry in it
// (RecordIn), so that a change and its entry land together or not at all;
// the rest record right after the change (Record). db.DB embeds its store,
// so that its methods are the DB's.
package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/parley/parley/db/internal/pgbase"
)

// Keep is how long an entry is kept.
const Keep = 90 * 24 * time.Hour

// The kinds of actor.
const (
	ActorPerson   = "person"   // a member of the team, signed in to the dashboard
	ActorToken    = "token"    // an API token of the tenant
	ActorOAuth    = "oauth"    // an OAuth client, on behalf of the member who granted it
	ActorOperator = "operator" // whoever runs the installation: the command line, the operator API
	ActorSystem   = "system"   // Parley itself (a clean-up, an expiry)
)

// Actor is who did something: a kind, the id of its row (a user, a token,
// a client; empty for the operator and the system) and its name in words at
// the time (an email, a token's name, a client's name).
type Actor struct {
	Kind string
	ID   string
	Name string
}

// Entry is one line of the audit log. Action is "area.verb" (the constants
// of actions.go); Target says what it acted on in words (a member's email,
// a token's name), TargetID its id. Denied marks an action refused for lack
// of the role or scope it needs.
type Entry struct {
	ID       int64
	TenantID string
	At       time.Time
	Actor    Actor
	Action   string
	Target   string
	TargetID string
	Denied   bool
	Address  string
	Details  map[string]any
}

// Log is the audit log's store.
type Log struct {
	pool *pgxpool.Pool
}

// New makes the audit log's store over pool.
func New(pool *pgxpool.Pool) *Log { return &Log{pool: pool} }

// RecordAudit adds e to the log, in its own statement.
func (l *Log) RecordAudit(ctx context.Context, e Entry) error {
	return RecordIn(ctx, l.pool, e)
}

// RecordIn adds e to the log through q: a change's own transaction, so that
// the change and its entry land together.
func RecordIn(ctx context.Context, q pgbase.Querier, e Entry) error {
	details := []byte("{}")
	if len(e.Details) > 0 {
		b, err := json.Marshal(e.Details)
		if err != nil {
			return fmt.Errorf("encoding the audit entry's details: %w", err)
		}
		details = b
	}
	at := e.At
	if at.IsZero() {
		at = time.Now()
	}
	if len(e.Actor.Name) > 320 {
		e.Actor.Name = e.Actor.Name[:320]
	}
	if len(e.Target) > 500 {
		e.Target = e.Target[:500]
	}
	_, err := q.Exec(ctx, `
INSERT INTO audit_log (tenant_id, at, actor_kind, actor_id, actor_name, action, target, target_id, denied, address, details)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		e.TenantID, at, e.Actor.Kind, e.Actor.ID, e.Actor.Name, e.Action, e.Target, e.TargetID, e.Denied, e.Address, details)
	if err != nil {
		return fmt.Errorf("recording the audit entry %s: %w", e.Action, err)
	}
	return nil
}

type actorKey struct{}

// WithActor is ctx carrying who acts in it: each surface's authentication
// sets it, and the operations that record read it (ActorFrom).
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorFrom is the actor ctx carries, and whether it carries one.
func ActorFrom(ctx context.Context) (Actor, bool) {
	a, ok := ctx.Value(actorKey{}).(Actor)
	return a, ok
}
