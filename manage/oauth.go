package manage

import (
	"context"
	"strings"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db/accounts"
)

// OAuth's management: public clients registering themselves, an owner's
// consent becoming an authorization code, and the apps connected to a
// tenant, listed and revoked. Redeeming codes and refresh tokens is the
// token endpoint's protocol, not management.

// RegisterOAuthClient checks in and registers a public client, with the
// known scopes it asks for (unknown ones are dropped silently: RFC 7591
// lets the server pick), every OAuth scope when it asks for none. Asking
// for scopes none of which is known is refused: such a client could be
// granted nothing.
func (s *Service) RegisterOAuthClient(ctx context.Context, in parley.OAuthClientInput) (accounts.OAuthClient, error) {
	errs := in.Check()
	scopes := auth.FilterOAuthScopes(in.Scope)
	if strings.TrimSpace(in.Scope) == "" {
		scopes = auth.OAuthScopes
	} else if len(scopes) == 0 {
		errs.Add("scope", "none of the scopes asked for is known (known: "+strings.Join(auth.OAuthScopes, " ")+")")
	}
	if err := errs.Err(); err != nil {
		return accounts.OAuthClient{}, err
	}
	return s.DB.CreateOAuthClient(ctx, accounts.OAuthClient{
		ID: auth.NewOpaque("pc_"), Name: in.ClientName, RedirectURIs: in.RedirectURIs, Scopes: scopes})
}

// CreateOAuthCode issues the authorization code of a consent the owner
// approved (c, whose ExpiresAt is set here: auth.CodeTTL after now): the
// code, returned this once, as only its hash is stored.
func (s *Service) CreateOAuthCode(ctx context.Context, c accounts.OAuthCode, now time.Time) (string, error) {
	code := auth.NewOpaque("ac_")
	c.ExpiresAt = now.Add(auth.CodeTTL)
	if err := s.DB.CreateOAuthCode(ctx, auth.HashToken(code), c, now); err != nil {
		return "", err
	}
	return code, nil
}

// ConnectedApps lists the clients holding a live grant on the tenant at
// now, last used first.
func (s *Service) ConnectedApps(ctx context.Context, tenantID string, now time.Time) ([]accounts.ConnectedApp, error) {
	return s.DB.ConnectedApps(ctx, tenantID, now)
}

// RevokeConnectedApp revokes every grant of a client on the tenant: its
// access and refresh tokens stop working at once. NotFound when it holds
// none (another tenant's app, an unknown id, one already revoked).
func (s *Service) RevokeConnectedApp(ctx context.Context, tenantID, clientID string, now time.Time) error {
	found, err := s.DB.RevokeConnectedApp(ctx, tenantID, clientID, now)
	if err != nil {
		return err
	}
	if !found {
		return parley.Errorf(parley.KindNotFound, "That app has no access to revoke")
	}
	return nil
}
