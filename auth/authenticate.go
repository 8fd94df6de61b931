package auth

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
)

// Principal is who a management request acts as: one tenant, some scopes.
type Principal struct {
	TenantID string
	Scopes   []string
	TokenID  string
	// Audiences are the resources an OAuth access token was issued for (its
	// aud: the REST API, the MCP server, or both); empty for ak_ tokens and
	// legacy keys.
	Audiences []string
	// ClientID is the OAuth client of an access token.
	ClientID string
	// Name is an API token's name (the audit log's words for it); empty
	// for OAuth access tokens, named only when they record
	// (audit.Log.OAuthActorName).
	Name string
}

// HasScope reports whether the principal carries scope.
func (p Principal) HasScope(scope string) bool { return slices.Contains(p.Scopes, scope) }

// BearerVerifier verifies bearer credentials that are not ak_ tokens (OAuth
// access tokens, OAuth.VerifyAccessToken). It returns an unauthorized error
// when the credential is not valid.
type BearerVerifier func(ctx context.Context, token string) (Principal, error)

// Authenticator resolves the credentials of a management request.
type Authenticator struct {
	DB *db.DB
	// JWT verifies OAuth access tokens; when nil, every non-ak_ bearer
	// credential is refused.
	JWT BearerVerifier
	// Audience is the resource an OAuth access token must be issued for: the
	// REST base URL, or the MCP resource for /mcp.
	Audience string
}

func unauthorized(msg string) error {
	return &parley.Error{Kind: parley.KindUnauthorized, Message: msg}
}

// Authenticate reads `Authorization: Bearer` or `X-API-Key`. An ak_ token is
// accepted only as Bearer; X-API-Key carries a tenant's legacy plain key.
func (a *Authenticator) Authenticate(ctx context.Context, r *http.Request) (Principal, error) {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, cred, ok := strings.Cut(h, " ")
		cred = strings.TrimSpace(cred)
		if !ok || !strings.EqualFold(scheme, "Bearer") || cred == "" {
			return Principal{}, unauthorized("Invalid credentials: expected 'Authorization: Bearer <token>'")
		}
		if IsAPIToken(cred) {
			return a.lookup(ctx, cred, false)
		}
		if a.JWT != nil {
			p, err := a.JWT(ctx, cred)
			if err != nil {
				return Principal{}, err
			}
			if a.Audience == "" {
				return Principal{}, unauthorized("OAuth access tokens are not accepted here")
			}
			if !slices.Contains(p.Audiences, a.Audience) {
				return Principal{}, unauthorized("This access token was issued for another resource (" + strings.Join(p.Audiences, " ") + "), not " + a.Audience)
			}
			return p, nil
		}
		return Principal{}, unauthorized("Invalid or revoked token")
	}
	if key := strings.TrimSpace(r.Header.Get("X-API-Key")); key != "" {
		if IsAPIToken(key) {
			return Principal{}, unauthorized("ak_ tokens must be sent as 'Authorization: Bearer <token>', not X-API-Key")
		}
		return a.lookup(ctx, key, true)
	}
	return Principal{}, unauthorized("Missing credentials: send 'Authorization: Bearer <token>'")
}

func (a *Authenticator) lookup(ctx context.Context, token string, legacy bool) (Principal, error) {
	t, err := a.DB.TokenByHash(ctx, HashToken(token))
	if parley.ErrorKind(err) == parley.KindNotFound || (err == nil && t.Legacy != legacy) {
		return Principal{}, unauthorized("Invalid or revoked token")
	}
	if err != nil {
		return Principal{}, err
	}
	_ = a.DB.TouchToken(ctx, t.ID) // bookkeeping only; a failure must not refuse the request
	return Principal{TenantID: t.TenantID, Scopes: t.Scopes, TokenID: t.ID, Name: t.Name}, nil
}
