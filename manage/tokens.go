package manage

import (
	"context"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db/accounts"
)

// The tenant's API tokens (ak_): created (the token shown once), listed
// and revoked. Only a token's hash is stored.

// CreateToken checks in against the REST scopes and creates the token: the
// token itself, returned this once, and what is stored of it.
func (s *Service) CreateToken(ctx context.Context, tenantID string, in parley.TokenInput) (string, accounts.APIToken, error) {
	if err := in.Check(auth.RESTScopes).Err(); err != nil {
		return "", accounts.APIToken{}, err
	}
	token, nt := auth.NewToken(tenantID, in.Name, in.Scopes, false)
	stored, err := s.DB.CreateToken(ctx, nt)
	if err != nil {
		return "", accounts.APIToken{}, err
	}
	return token, stored, nil
}

// ListTokens lists the tenant's tokens, live ones first, newest first.
func (s *Service) ListTokens(ctx context.Context, tenantID string) ([]accounts.APIToken, error) {
	return s.DB.ListTokens(ctx, tenantID)
}

// RevokeToken revokes one of the tenant's tokens (NotFound for another's,
// or an unknown id); revoking twice is harmless.
func (s *Service) RevokeToken(ctx context.Context, tenantID, id string) error {
	return s.DB.RevokeToken(ctx, tenantID, id)
}
