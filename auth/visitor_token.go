package auth

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/parley/parley"
)

// visitorTokenLeeway tolerates clock skew between the tenant's server, which
// signs visitor tokens, and this one.
const visitorTokenLeeway = 30 * time.Second

// VisitorClaims are the claims of a visitor token: sub is the visitor's
// externalId on the tenant's site; email and name are optional.
type VisitorClaims struct {
	Email string `json:"email,omitempty"`
	Name  string `json:"name,omitempty"`
	jwt.RegisteredClaims
}

// visitorTokenError is a refused visitor token: 401 with the reason, never
// the token.
func visitorTokenError(reason string) error {
	return &parley.Error{Kind: parley.KindUnauthorized, Message: "Invalid visitor token: " + reason}
}

// errVisitorTokenAlg refuses a token signed with another algorithm than HS256.
var errVisitorTokenAlg = errors.New("algorithm is not HS256")

// VerifyVisitorToken checks a visitor token, an HS256 JWT signed with the
// tenant's visitor signing key, and returns its claims. sub and exp are
// required; exp is checked with a small leeway; any algorithm but HS256
// (none included) is refused.
func VerifyVisitorToken(key []byte, token string, now time.Time) (VisitorClaims, error) {
	var claims VisitorClaims
	if len(key) == 0 {
		return claims, visitorTokenError("this tenant has no visitor signing key")
	}
	parser := jwt.NewParser(jwt.WithExpirationRequired(), jwt.WithLeeway(visitorTokenLeeway),
		jwt.WithTimeFunc(func() time.Time { return now }))
	alg := ""
	_, err := parser.ParseWithClaims(token, &claims, func(tok *jwt.Token) (any, error) {
		// The algorithm is checked here, before any verification, so that
		// "none" or a public-key algorithm never gets this key.
		if tok.Method != jwt.SigningMethodHS256 {
			alg, _ = tok.Header["alg"].(string)
			return nil, errVisitorTokenAlg
		}
		return key, nil
	})
	switch {
	case err == nil:
	case errors.Is(err, errVisitorTokenAlg):
		return claims, visitorTokenError(fmt.Sprintf("algorithm must be HS256, not %q", parley.Clip(alg, 20)))
	case errors.Is(err, jwt.ErrTokenMalformed):
		return claims, visitorTokenError("malformed token")
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return claims, visitorTokenError("signature does not match the tenant's visitor signing key")
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		return claims, visitorTokenError("algorithm must be HS256")
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return claims, visitorTokenError("exp claim is required")
	case errors.Is(err, jwt.ErrTokenExpired):
		return claims, visitorTokenError("token expired")
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return claims, visitorTokenError("token not valid yet")
	default:
		return claims, visitorTokenError("token could not be verified")
	}
	claims.Subject = strings.TrimSpace(claims.Subject)
	if claims.Subject == "" {
		return claims, visitorTokenError("sub claim (the visitor's externalId) is required")
	}
	if len(claims.Subject) > 255 {
		return claims, visitorTokenError("sub claim too long (max 255 characters)")
	}
	return claims, nil
}
