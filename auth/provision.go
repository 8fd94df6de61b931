package auth

import (
	"context"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
)

// Provisioned is what creating a tenant gives back; Token is shown this once.
type Provisioned struct {
	ID         string   `json:"id"`
	Slug       string   `json:"slug"`
	Name       string   `json:"name"`
	Plan       string   `json:"plan"`
	OwnerEmail string   `json:"ownerEmail,omitempty"`
	Token      string   `json:"token"`
	Scopes     []string `json:"scopes"`
}

// Provision creates a tenant with its default segment, its visitor signing
// key (sealed by box), an optional owner login (the password hashed by pws)
// and one token carrying every REST scope, in one transaction
// (db.CreateTenant). A refused input is a parley.FieldErrors error keyed by
// slug, name, plan, ownerEmail and ownerPassword.
func Provision(ctx context.Context, store *db.DB, box *Box, pws *Passwords, in parley.NewTenantInput) (Provisioned, error) {
	if err := in.Validate(); err != nil {
		return Provisioned{}, err
	}
	nt := db.NewTenant{Slug: in.Slug, Name: in.Name, Plan: in.Plan, SealedSigningKey: box.Seal(RandomBytes(32))}
	if in.OwnerEmail != "" {
		hash, err := pws.Hash(in.OwnerPassword)
		if err != nil {
			return Provisioned{}, parley.FieldErrors{"ownerPassword": err.Error()}.Err()
		}
		nt.OwnerEmail, nt.OwnerPasswordHash = in.OwnerEmail, hash
	}
	token, stored := NewToken("", "Created with the tenant", RESTScopes, false)
	nt.Token = stored
	t, err := store.CreateTenant(ctx, nt)
	if err != nil {
		return Provisioned{}, err
	}
	return Provisioned{ID: t.ID, Slug: t.Slug, Name: t.Name, Plan: t.Plan, OwnerEmail: in.OwnerEmail,
		Token: token, Scopes: RESTScopes}, nil
}
