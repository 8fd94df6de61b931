package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/parley/parley/db"
	"github.com/parley/parley/db/accounts"
)

// OAuth token lifetimes (spec, Limits).
const (
	AccessTokenTTL  = 15 * time.Minute
	RefreshTokenTTL = 30 * 24 * time.Hour
	CodeTTL         = 10 * time.Minute
)

// RefreshTokenPrefix starts every refresh token, so that /oauth/revoke
// tells one from an access token without a lookup.
const RefreshTokenPrefix = "rt_"

// AccessClaims are the claims of an OAuth access token: iss is the base
// URL, aud the resources it is for (the REST base URL, the MCP resource, or
// both: AudienceOf),
// sub the owner who approved, tenant the tenant granted, scope the
// space-separated scopes, client_id the client.
type AccessClaims struct {
	Tenant   string `json:"tenant"`
	Scope    string `json:"scope"`
	ClientID string `json:"client_id"`
	jwt.RegisteredClaims
}

// OAuth issues and verifies the access tokens of Parley's authorization
// server.
type OAuth struct {
	DB   *db.DB
	Keys *SigningKeys
	// Issuer is the base URL: iss of every token, and the REST resource.
	Issuer string
	// Now is the clock (tests set it); nil means time.Now.
	Now func() time.Time
}

func (o *OAuth) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// MCPResource is the resource identifier of Parley's MCP server.
func (o *OAuth) MCPResource() string { return o.Issuer + "/mcp" }

// Resources are the resources a token may be issued for (RFC 8707).
func (o *OAuth) Resources() []string { return []string{o.Issuer, o.MCPResource()} }

// AudienceOf is the audience of a grant asked for without a resource
// indicator, chosen from the scopes granted: the REST API for REST scopes
// only, the MCP server for mcp: scopes only, both for both (each resource
// still checks its own family of scopes). A grant stores its audience as
// its resource, the URLs space-separated.
func (o *OAuth) AudienceOf(scopes []string) string {
	var rest, mcp bool
	for _, s := range scopes {
		if strings.HasPrefix(s, "mcp:") {
			mcp = true
		} else {
			rest = true
		}
	}
	switch {
	case rest && mcp:
		return o.Issuer + " " + o.MCPResource()
	case rest:
		return o.Issuer
	default:
		return o.MCPResource()
	}
}

// SignAccessToken signs an access token of grant g with a fresh jti, valid
// AccessTokenTTL from now.
func (o *OAuth) SignAccessToken(ctx context.Context, g accounts.OAuthGrant, jti string, now time.Time) (string, error) {
	k, err := o.Keys.signer(ctx)
	if err != nil {
		return "", err
	}
	claims := AccessClaims{
		Tenant: g.TenantID, Scope: strings.Join(g.Scopes, " "), ClientID: g.ClientID,
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer: o.Issuer, Subject: g.UserID, Audience: jwt.ClaimStrings(strings.Fields(g.Resource)), ID: jti,
			IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(AccessTokenTTL)),
		},
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = k.kid
	tok.Header["typ"] = "at+jwt" // RFC 9068
	return tok.SignedString(k.key)
}

var errAccessTokenAlg = errors.New("algorithm is not RS256")

// ParseAccessToken checks an access token's signature (RS256 with a live
// key named by kid), issuer and expiry, and returns its claims. It does not
// check revocation: VerifyAccessToken does.
func (o *OAuth) ParseAccessToken(ctx context.Context, token string) (AccessClaims, error) {
	var claims AccessClaims
	parser := jwt.NewParser(jwt.WithExpirationRequired(), jwt.WithIssuer(o.Issuer),
		jwt.WithTimeFunc(o.now), jwt.WithLeeway(5*time.Second))
	var lookupErr error // a failed read of the keys, not a bad token
	_, err := parser.ParseWithClaims(token, &claims, func(t *jwt.Token) (any, error) {
		if t.Method != jwt.SigningMethodRS256 {
			return nil, errAccessTokenAlg
		}
		kid, _ := t.Header["kid"].(string)
		key, err := o.Keys.public(ctx, kid)
		if err != nil {
			lookupErr = err
			return nil, err
		}
		if key == nil {
			return nil, errors.New("unknown key")
		}
		return key, nil
	})
	switch {
	case lookupErr != nil:
		return claims, lookupErr
	case errors.Is(err, jwt.ErrTokenExpired):
		return claims, unauthorized("Access token expired: refresh it")
	case err != nil:
		return claims, unauthorized("Invalid or revoked token")
	}
	if claims.ID == "" || claims.Tenant == "" || len(claims.Audience) == 0 || len(claims.Audience) > 2 {
		return claims, unauthorized("Invalid or revoked token")
	}
	return claims, nil
}

// VerifyAccessToken is the BearerVerifier of OAuth access tokens: a valid
// token whose jti and grant are not revoked gives its tenant, scopes and
// audience.
func (o *OAuth) VerifyAccessToken(ctx context.Context, token string) (Principal, error) {
	claims, err := o.ParseAccessToken(ctx, token)
	if err != nil {
		return Principal{}, err
	}
	live, err := o.DB.OAuthAccessLive(ctx, claims.ID, o.now())
	if err != nil {
		return Principal{}, err
	}
	if !live {
		return Principal{}, unauthorized("Invalid or revoked token")
	}
	return Principal{TenantID: claims.Tenant, Scopes: strings.Fields(claims.Scope), TokenID: claims.ID,
		Audiences: claims.Audience, ClientID: claims.ClientID}, nil
}

// NewOpaque is a random URL-safe secret of 256 bits with prefix.
func NewOpaque(prefix string) string {
	return prefix + base64.RawURLEncoding.EncodeToString(RandomBytes(32))
}

// CheckPKCE reports whether verifier (RFC 7636: 43 to 128 characters of
// A-Z a-z 0-9 - . _ ~) matches the S256 challenge.
func CheckPKCE(verifier, challenge string) bool {
	if len(verifier) < 43 || len(verifier) > 128 {
		return false
	}
	for _, r := range verifier {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("-._~", r)) {
			return false
		}
	}
	sum := sha256.Sum256([]byte(verifier))
	return subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(challenge)) == 1
}
