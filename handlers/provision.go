package handlers

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
)

var slugPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,99}$`)

// NewTenantParams are the inputs of ProvisionTenant (the flags of tenant create).
type NewTenantParams struct {
	Slug, Name, Plan, OwnerEmail, OwnerPassword string
}

// Provisioned is what tenant create prints; Token is shown this once.
type Provisioned struct {
	ID         string   `json:"id"`
	Slug       string   `json:"slug"`
	Name       string   `json:"name"`
	Plan       string   `json:"plan"`
	OwnerEmail string   `json:"ownerEmail,omitempty"`
	Token      string   `json:"token"`
	Scopes     []string `json:"scopes"`
}

// ProvisionTenant creates a tenant with its default segment, optional owner
// (its password hashed by pws) and one token carrying every REST scope.
func ProvisionTenant(ctx context.Context, store *db.DB, b *auth.Box, pws *auth.Passwords, np NewTenantParams) (Provisioned, error) {
	slug, name, plan, email, password := np.Slug, np.Name, np.Plan, np.OwnerEmail, np.OwnerPassword
	switch {
	case !slugPattern.MatchString(slug):
		return Provisioned{}, fmt.Errorf("--slug: %q must be 1 to 100 lowercase letters, digits or hyphens, starting with a letter or digit", slug)
	case strings.TrimSpace(name) == "" || utf8.RuneCountInString(name) > 255:
		return Provisioned{}, errors.New("--name: required, at most 255 characters")
	}
	if _, ok := parley.PlanByName(plan); !ok {
		return Provisioned{}, fmt.Errorf("--plan: %q is not one of %s", plan, strings.Join(parley.PlanNames(), ", "))
	}
	if (email == "") != (password == "") {
		return Provisioned{}, errors.New("--owner-email and --owner-password go together")
	}
	nt := db.NewTenant{Slug: slug, Name: name, Plan: plan, SealedSigningKey: b.Seal(auth.RandomBytes(32))}
	if email != "" {
		if !strings.Contains(email, "@") {
			return Provisioned{}, fmt.Errorf("--owner-email: %q is not an email address", email)
		}
		hash, err := pws.Hash(password)
		if err != nil {
			return Provisioned{}, fmt.Errorf("--owner-password: %w", err)
		}
		nt.OwnerEmail, nt.OwnerPasswordHash = email, hash
	}
	token, stored := auth.NewToken("", "Created with the tenant", auth.RESTScopes, false)
	nt.Token = stored
	t, err := store.CreateTenant(ctx, nt)
	if err != nil {
		return Provisioned{}, err
	}
	return Provisioned{ID: t.ID, Slug: t.Slug, Name: t.Name, Plan: t.Plan, OwnerEmail: email, Token: token, Scopes: auth.RESTScopes}, nil
}
