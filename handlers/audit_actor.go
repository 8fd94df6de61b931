package handlers

import (
	"context"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/db/audit"
)

// PrincipalActor is the actor of a REST or MCP request made with p: an API
// token (its id and name) or an OAuth client (its id; named when an entry is
// recorded, by NameActor).
func PrincipalActor(p auth.Principal) audit.Actor {
	if p.ClientID != "" {
		return audit.Actor{Kind: audit.ActorOAuth, ID: p.ClientID}
	}
	return audit.Actor{Kind: audit.ActorToken, ID: p.TokenID, Name: p.Name}
}

// Namer is what naming an OAuth actor reads (*db.DB).
type Namer interface {
	OAuthActorName(ctx context.Context, tenantID, jti string) (client, email string, err error)
}

// NameActor completes an OAuth actor's name: its client's name and the email of
// the member who granted it, "Claude (ann@example.com)"; other actors are
// returned as they are.
func NameActor(ctx context.Context, store Namer, tenantID string, a audit.Actor, p auth.Principal) audit.Actor {
	if a.Kind != audit.ActorOAuth || a.Name != "" {
		return a
	}
	client, email, err := store.OAuthActorName(ctx, tenantID, p.TokenID)
	switch {
	case err != nil || client == "":
		a.Name = "OAuth app " + a.ID
	case email != "":
		a.Name = client + " (" + email + ")"
	default:
		a.Name = client
	}
	return a
}
