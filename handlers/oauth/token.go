package oauth

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db/accounts"
)

// tokenResponse is the answer of POST /oauth/token (RFC 6749 5.1).
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int    `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
}

// Token is POST /oauth/token: the authorization_code grant (with the PKCE
// verifier) and the refresh_token grant (which rotates the refresh token).
func (h *Handler) Token(c echo.Context) error {
	form, err := oauthForm(c)
	if err != nil {
		return oauthFail(c, http.StatusBadRequest, "invalid_request", "The body must be form-encoded (application/x-www-form-urlencoded), at most 16 KB")
	}
	clientID := formClientID(c, form)
	if clientID == "" {
		return oauthFail(c, http.StatusBadRequest, "invalid_request", "client_id is required")
	}
	if _, err := h.DB.OAuthClientByID(c.Request().Context(), clientID); err != nil {
		if parley.ErrorKind(err) == parley.KindNotFound {
			return oauthFail(c, http.StatusUnauthorized, "invalid_client", "Unknown client_id: register the client first")
		}
		return err
	}
	switch gt := form.Get("grant_type"); gt {
	case "authorization_code":
		return h.exchangeCode(c, clientID, form.Get)
	case "refresh_token":
		return h.refresh(c, clientID, form.Get)
	case "":
		return oauthFail(c, http.StatusBadRequest, "invalid_request", "grant_type is required")
	default:
		return oauthFail(c, http.StatusBadRequest, "unsupported_grant_type", "grant_type must be authorization_code or refresh_token")
	}
}

// formClientID is the client_id of the form, else the user name of HTTP
// Basic authentication (which some clients send with an empty secret).
func formClientID(c echo.Context, form url.Values) string {
	if id := form.Get("client_id"); id != "" {
		return id
	}
	id, _, _ := c.Request().BasicAuth()
	return id
}

// newIssue draws the secrets of one token response.
func (h *Handler) newIssue() (accounts.OAuthIssue, string) {
	now := h.Clock()
	refresh := auth.NewOpaque(auth.RefreshTokenPrefix)
	return accounts.OAuthIssue{
		JTI: auth.NewOpaque(""), AccessExpires: now.Add(auth.AccessTokenTTL),
		RefreshHash: auth.HashToken(refresh), RefreshExpires: now.Add(auth.RefreshTokenTTL),
	}, refresh
}

// issue answers the tokens of is for grant g, the access token carrying scopes.
func (h *Handler) issue(c echo.Context, g accounts.OAuthGrant, is accounts.OAuthIssue, refresh string, scopes []string) error {
	g.Scopes = scopes
	access, err := h.OAuth.SignAccessToken(c.Request().Context(), g, is.JTI, h.Clock())
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	c.Response().Header().Set("Pragma", "no-cache")
	return c.JSON(http.StatusOK, tokenResponse{AccessToken: access, TokenType: "Bearer",
		ExpiresIn: int(auth.AccessTokenTTL.Seconds()), RefreshToken: refresh, Scope: strings.Join(scopes, " ")})
}

func (h *Handler) exchangeCode(c echo.Context, clientID string, get func(string) string) error {
	ctx := c.Request().Context()
	code, verifier, redirectURI := get("code"), get("code_verifier"), get("redirect_uri")
	switch {
	case code == "":
		return oauthFail(c, http.StatusBadRequest, "invalid_request", "code is required")
	case verifier == "":
		return oauthFail(c, http.StatusBadRequest, "invalid_request", "code_verifier is required (PKCE)")
	case redirectURI == "":
		return oauthFail(c, http.StatusBadRequest, "invalid_request", "redirect_uri is required")
	}
	hash := auth.HashToken(code)
	row, err := h.DB.OAuthCodeByHash(ctx, hash)
	if parley.ErrorKind(err) == parley.KindNotFound || err == nil && row.ClientID != clientID {
		return oauthFail(c, http.StatusBadRequest, "invalid_grant", "Unknown authorization code")
	}
	if err != nil {
		return err
	}
	now := h.Clock()
	is, refresh := h.newIssue()
	if row.UsedAt != nil {
		if _, err := h.DB.RedeemOAuthCode(ctx, hash, is, now); !errors.Is(err, accounts.ErrOAuthReplay) {
			return err
		}
		return oauthFail(c, http.StatusBadRequest, "invalid_grant", "This authorization code was already used; the tokens it gave are revoked")
	}
	switch {
	case !row.ExpiresAt.After(now):
		return oauthFail(c, http.StatusBadRequest, "invalid_grant", "The authorization code expired (codes live 10 minutes)")
	case row.RedirectURI != redirectURI:
		return oauthFail(c, http.StatusBadRequest, "invalid_grant", "redirect_uri differs from the authorization request's")
	case !auth.CheckPKCE(verifier, row.CodeChallenge):
		return oauthFail(c, http.StatusBadRequest, "invalid_grant", "code_verifier does not match the code_challenge")
	case get("resource") != "" && !slices.Contains(strings.Fields(row.Resource), get("resource")):
		return oauthFail(c, http.StatusBadRequest, "invalid_target", "resource differs from the authorization request's ("+row.Resource+")")
	}
	g, err := h.DB.RedeemOAuthCode(ctx, hash, is, now)
	if errors.Is(err, accounts.ErrOAuthReplay) {
		return oauthFail(c, http.StatusBadRequest, "invalid_grant", "This authorization code was already used; the tokens it gave are revoked")
	}
	if err != nil {
		return err
	}
	if r := get("resource"); r != "" {
		g.Resource = r // one of the grant's audiences (RFC 8707 2.2)
	}
	return h.issue(c, g, is, refresh, g.Scopes)
}

func (h *Handler) refresh(c echo.Context, clientID string, get func(string) string) error {
	token := get("refresh_token")
	if token == "" {
		return oauthFail(c, http.StatusBadRequest, "invalid_request", "refresh_token is required")
	}
	// The scope and resource asked for are checked against the grant before
	// the refresh token rotates, so that a refused refresh leaves it good.
	scope, resource := get("scope"), get("resource")
	var scopes []string
	check := func(g accounts.OAuthGrant) error {
		scopes = g.Scopes
		if scope != "" {
			// A narrower access token (RFC 6749 6); the grant keeps its scopes.
			asked := strings.Fields(scope)
			for _, want := range asked {
				if !slices.Contains(g.Scopes, want) {
					return &oauthRefusal{"invalid_scope", "scope " + clipText(want, 60) + " was not granted"}
				}
			}
			scopes = slices.DeleteFunc(slices.Clone(g.Scopes), func(have string) bool { return !slices.Contains(asked, have) })
		}
		if resource != "" && !slices.Contains(strings.Fields(g.Resource), resource) {
			return &oauthRefusal{"invalid_target", "resource " + clipText(resource, 100) + " is not one this grant was issued for (" + g.Resource + ")"}
		}
		return nil
	}
	is, refresh := h.newIssue()
	g, err := h.DB.RefreshOAuth(c.Request().Context(), auth.HashToken(token), clientID, is, h.Clock(), check)
	var refusal *oauthRefusal
	switch {
	case errors.Is(err, accounts.ErrOAuthReplay):
		return oauthFail(c, http.StatusBadRequest, "invalid_grant", "This refresh token was already used; every token of its grant is now revoked")
	case errors.Is(err, accounts.ErrOAuthGrantInvalid):
		return oauthFail(c, http.StatusBadRequest, "invalid_grant", "The refresh token is invalid, expired or revoked")
	case errors.As(err, &refusal):
		return oauthFail(c, http.StatusBadRequest, refusal.code, refusal.description)
	case err != nil:
		return err
	}
	if resource != "" {
		g.Resource = resource // the access token for that one of the grant's audiences
	}
	return h.issue(c, g, is, refresh, scopes)
}

// oauthRefusal is a refresh refused by the check made before rotation.
type oauthRefusal struct{ code, description string }

func (r *oauthRefusal) Error() string { return r.code + ": " + r.description }

// Revoke is POST /oauth/revoke (RFC 7009): a refresh token revokes its whole
// grant, an access token itself. An unknown token, or one of another
// client, is answered 200 as well.
func (h *Handler) Revoke(c echo.Context) error {
	form, err := oauthForm(c)
	if err != nil {
		return oauthFail(c, http.StatusBadRequest, "invalid_request", "The body must be form-encoded (application/x-www-form-urlencoded), at most 16 KB")
	}
	ctx := c.Request().Context()
	clientID, token := formClientID(c, form), form.Get("token")
	if clientID == "" || token == "" {
		return oauthFail(c, http.StatusBadRequest, "invalid_request", "client_id and token are required")
	}
	if _, err := h.DB.OAuthClientByID(ctx, clientID); err != nil {
		if parley.ErrorKind(err) == parley.KindNotFound {
			return oauthFail(c, http.StatusUnauthorized, "invalid_client", "Unknown client_id")
		}
		return err
	}
	now := h.Clock()
	if strings.HasPrefix(token, auth.RefreshTokenPrefix) {
		err = h.DB.RevokeOAuthRefresh(ctx, auth.HashToken(token), clientID, now)
	} else if claims, perr := h.OAuth.ParseAccessToken(ctx, token); perr == nil {
		err = h.DB.RevokeOAuthAccess(ctx, claims.ID, clientID, now)
	} else if parley.ErrorKind(perr) != parley.KindUnauthorized {
		err = perr
	}
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.NoContent(http.StatusOK)
}
